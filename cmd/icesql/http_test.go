package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// TestRESTAndSQLWritersLoseNothing: REST clients (iceberg-go's, through the
// served catalog) and SQL sessions append to one table at once; every
// acknowledged row is there, and the snapshot log is one line.
func TestRESTAndSQLWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, src TEXT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpHandler(e.Catalog().(*storage.Warehouse), nil, "", nil, nil))
	defer srv.Close()

	const writers, rounds = 2, 8
	var acked atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4*writers)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO d.t VALUES (%d, 'sql'), (%d, 'sql')", w*1000+i, w*1000+i)); err != nil {
					errs <- fmt.Errorf("sql writer %d: %w", w, err)
					return
				}
				acked.Add(2)
			}
		}()
		go func() {
			defer wg.Done()
			cat, err := rest.NewCatalog(ctx, "icesql", srv.URL)
			if err != nil {
				errs <- err
				return
			}
			for i := range rounds {
				if err := restAppend(ctx, cat, int64(w*1000+500+i)); err != nil {
					errs <- fmt.Errorf("rest writer %d: %w", w, err)
					return
				}
				acked.Add(3)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != acked.Load() {
		t.Fatalf("%d rows, %d acknowledged", n, acked.Load())
	}
	tbl, err := e.Catalog().LoadTable(ctx, table.Identifier{"d", "t"})
	if err != nil {
		t.Fatal(err)
	}
	chain := 0
	for s := tbl.CurrentSnapshot(); s != nil; chain++ {
		if s.ParentSnapshotID == nil {
			s = nil
			continue
		}
		s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID)
	}
	if chain != len(tbl.Metadata().Snapshots()) || chain != 2*writers*rounds {
		t.Fatalf("snapshot log: %d snapshots in the chain, %d in the table, want %d", chain, len(tbl.Metadata().Snapshots()), 2*writers*rounds)
	}
}

// restAppend appends three rows through the REST catalog, reloading and
// trying again when another writer committed first (409).
func restAppend(ctx context.Context, cat *rest.Catalog, id int64) error {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "src", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for range 3 {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("rest")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rows := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer rows.Release()
	for attempt := 0; attempt < 100; attempt++ {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"d", "t"})
		if err != nil {
			return err
		}
		if _, err = tbl.AppendTable(ctx, rows, 10, nil); err == nil {
			return nil
		} else if !errors.Is(err, rest.ErrCommitFailed) {
			return err
		}
	}
	return errors.New("still losing races after 100 attempts")
}

// TestHTTPAuth: with an account, the catalog wants its bearer token; the
// account's credentials are the token USER:PASSWORD.
func TestHTTPAuth(t *testing.T) {
	wh, err := storage.OpenWarehouse(context.Background(), "file://"+t.TempDir(), storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	if httpAuth("", "") != nil {
		t.Fatal("without an account the catalog is open (loopback only)")
	}
	srv := httptest.NewServer(httpHandler(wh, httpAuth("ann", "s3cret"), "", nil, nil))
	defer srv.Close()
	for _, c := range []struct {
		header string
		status int
	}{{"", 401}, {"Bearer ann:wrong", 401}, {"Basic YW5uOnMzY3JldA==", 401}, {"Bearer ann:s3cret", 200}} {
		req, _ := http.NewRequest("GET", srv.URL+"/_iceberg/v1/config", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("Authorization %q: %d, want %d", c.header, resp.StatusCode, c.status)
		}
	}
}
