package engine_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/s3test"
)

// faultyProxy forwards to an S3 endpoint but fails some requests: every
// seventh is refused with 503 before it reaches the store, every eleventh is
// performed by the store and then answered with 500, as when a response is
// lost, and every thirteenth stalls for a while before it is forwarded.
// Retries of one request land on other numbers, so they get through.
func faultyProxy(t *testing.T, endpoint string) (string, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var n, faults atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		switch {
		case i%7 == 3:
			faults.Add(1)
			http.Error(w, "<Error><Code>SlowDown</Code></Error>", http.StatusServiceUnavailable)
		case i%11 == 5:
			faults.Add(1)
			rec := httptest.NewRecorder()
			rp.ServeHTTP(rec, r)
			http.Error(w, "<Error><Code>InternalError</Code></Error>", http.StatusInternalServerError)
		case i%13 == 6:
			faults.Add(1)
			time.Sleep(300 * time.Millisecond)
			rp.ServeHTTP(w, r)
		default:
			rp.ServeHTTP(w, r)
		}
	})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String(), &faults
}

func s3Config(endpoint string) storage.S3Config {
	return storage.S3Config{Endpoint: endpoint, Region: s3test.Region, PathStyle: true,
		AccessKeyID: s3test.AccessKeyID, SecretAccessKey: s3test.SecretAccessKey}
}

// TestS3FaultsNeverHalfCommit writes through a store that fails and loses
// responses: every statement either commits once or fails with an error,
// and a reader through a healthy connection sees exactly the committed rows.
func TestS3FaultsNeverHalfCommit(t *testing.T) {
	endpoint := s3test.StartServer(t)
	root := s3test.NewBucket(t, endpoint)
	proxy, faults := faultyProxy(t, endpoint)
	ctx := context.Background()

	faulty := openConn(t, engine.Config{Warehouse: root, S3: s3Config(proxy)})
	if _, err := faulty.ExecContext(ctx, "CREATE DATABASE db"); err != nil {
		t.Fatal(err)
	}
	if _, err := faulty.ExecContext(ctx, "CREATE TABLE db.t (i BIGINT)"); err != nil {
		t.Fatal(err)
	}
	var committed []int
	for i := range 6 {
		if _, err := faulty.ExecContext(ctx, fmt.Sprintf("INSERT INTO db.t VALUES (%d)", i)); err != nil {
			t.Logf("INSERT %d failed with a clear error: %v", i, err)
			continue
		}
		committed = append(committed, i)
	}
	if faults.Load() == 0 {
		t.Fatal("the proxy injected no fault")
	}
	t.Logf("%d faults injected; %d of 6 inserts committed", faults.Load(), len(committed))

	healthy := openConn(t, engine.Config{Warehouse: root, S3: s3Config(endpoint)})
	rows, err := healthy.QueryContext(ctx, "SELECT i, COUNT(*) FROM db.t GROUP BY i ORDER BY i")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []int
	for rows.Next() {
		var i, n int
		if err := rows.Scan(&i, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Errorf("row %d is in the table %d times: a commit was applied twice", i, n)
		}
		got = append(got, i)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != fmt.Sprint(committed) {
		t.Errorf("rows %v, want exactly the committed inserts %v", got, committed)
	}
	var snaps int
	if err := healthy.QueryRowContext(ctx, "SELECT COUNT(*) FROM db.t.snapshots").Scan(&snaps); err != nil {
		t.Fatal(err)
	}
	if snaps != len(committed) {
		t.Errorf("%d snapshots for %d committed inserts", snaps, len(committed))
	}
}
