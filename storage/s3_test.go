package storage

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage/s3test"
)

func testS3Config(endpoint string) S3Config {
	return S3Config{Endpoint: endpoint, Region: s3test.Region, PathStyle: true,
		AccessKeyID: s3test.AccessKeyID, SecretAccessKey: s3test.SecretAccessKey}
}

func openS3Warehouse(t *testing.T, root string, cfg S3Config) *Warehouse {
	t.Helper()
	ctx := context.Background()
	st, err := NewS3Store(ctx, root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(ctx, root, st)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestS3Warehouse(t *testing.T) {
	endpoint := s3test.StartServer(t)
	ctx := context.Background()

	t.Run("catalog", func(t *testing.T) {
		root := s3test.NewBucket(t, endpoint)
		w := openS3Warehouse(t, root, testS3Config(endpoint))
		mustCreateNamespace(t, w, "db")
		if ok, err := w.CheckNamespaceExists(ctx, table.Identifier{"db"}); !ok || err != nil {
			t.Fatalf("namespace without tables not found on S3: %v", err)
		}
		ident := table.Identifier{"db", "t"}
		tbl, err := w.CreateTable(ctx, ident, testSchema)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := AppendFiles(ctx, w, ident, writeFile(t, tbl, 1, 2, 3), nil); err != nil {
			t.Fatal(err)
		}
		got, err := w.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if n := got.CurrentSnapshot().Summary.Properties["total-records"]; n != "3" {
			t.Errorf("total-records = %s, want 3", n)
		}
		if _, err := w.RenameTable(ctx, ident, table.Identifier{"db", "u"}); err != nil {
			t.Fatal(err)
		}
		if names := tableNamesOf(t, w, "db"); len(names) != 1 || names[0] != "u" {
			t.Errorf("tables after rename = %v", names)
		}
		if err := w.DropNamespace(ctx, table.Identifier{"db"}); err != nil {
			t.Fatal(err)
		}
		if ok, _ := w.CheckNamespaceExists(ctx, table.Identifier{"db"}); ok {
			t.Error("namespace still exists after DropNamespace")
		}
	})

	// Two warehouse handles stand for two icesql processes on one bucket:
	// conditional writes must keep every commit.
	t.Run("concurrent commits", func(t *testing.T) {
		root := s3test.NewBucket(t, endpoint)
		checkConcurrentAppends(t, openS3Warehouse(t, root, testS3Config(endpoint)), openS3Warehouse(t, root, testS3Config(endpoint)), 5)
	})

	// A store that ignores If-None-Match (here: a proxy that strips it) is
	// detected at start-up; icesql refuses to write unless told otherwise.
	t.Run("store without conditional writes", func(t *testing.T) {
		root := s3test.NewBucket(t, endpoint)
		proxy := stripConditionalWrites(t, endpoint)
		w := openS3Warehouse(t, root, testS3Config(proxy))
		err := w.CreateNamespace(ctx, table.Identifier{"db"}, nil)
		if !errors.Is(err, ErrUnsafeStore) {
			t.Fatalf("write to an unsafe store: %v, want ErrUnsafeStore", err)
		}
		cfg := testS3Config(proxy)
		cfg.AllowUnsafeCommits = true
		w = openS3Warehouse(t, root, cfg)
		if err := w.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
			t.Errorf("write with unsafe commits allowed: %v", err)
		}
	})
}

// stripConditionalWrites starts a proxy to endpoint that drops the
// If-None-Match header, as stores without conditional writes ignore it.
func stripConditionalWrites(t *testing.T, endpoint string) string {
	t.Helper()
	target, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host
		r.Out.Header.Del("If-None-Match")
	}}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: rp}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}
