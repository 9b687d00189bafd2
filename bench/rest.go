package main

import (
	"context"
	gosql "database/sql"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// The -rest benchmark: icesql serve's Iceberg REST catalog (storage/
// restserve) on a loopback port, over the engine's warehouse. It prints
//
//	bench rest_commits   single-row appends through the REST catalog with
//	                     iceberg-go's REST client (write the data file and
//	                     manifests, POST the commit) against single-row
//	                     INSERTs through SQL, one table each: rest_per_s,
//	                     sql_per_s and their ratio; server_commit_p50_ms,
//	                     the catalog's own time per commit request
//	bench rest_load      GET of a table with 100 snapshots (loadTable):
//	                     p50_ms and p99_ms over n requests
func runREST(ctx context.Context, work string, n int, profile string) error {
	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "restwarehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	wh, ok := e.Catalog().(*storage.Warehouse)
	if !ok {
		return fmt.Errorf("the engine's catalog is %T, not the embedded warehouse", e.Catalog())
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	// The server's own time per commit request, apart from the client's
	// (iceberg-go decodes the table's whole metadata on each load and
	// commit response, and writes the data file and manifests).
	var commitMu sync.Mutex
	var commitLat []time.Duration
	catalogHandler := restserve.New(wh, restserve.Config{})
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		catalogHandler.ServeHTTP(w, r)
		if r.Method == http.MethodPost && strings.Contains(r.URL.Path, "/tables/") {
			commitMu.Lock()
			commitLat = append(commitLat, time.Since(t0))
			commitMu.Unlock()
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	for _, s := range []string{"CREATE DATABASE rest", "CREATE TABLE rest.viarest (id BIGINT)", "CREATE TABLE rest.viasql (id BIGINT)"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	cat, err := rest.NewCatalog(ctx, "icesql", base+"/_iceberg")
	if err != nil {
		return err
	}
	ident := table.Identifier{"rest", "viarest"}
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	appendREST := func(i int) error {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return err
		}
		b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
		b.Field(0).(*array.Int64Builder).Append(int64(i))
		rec := b.NewRecordBatch()
		b.Release()
		rows := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
		rec.Release()
		defer rows.Release()
		_, err = tbl.AppendTable(ctx, rows, 1, nil)
		return err
	}
	stopProfile, err := startProfile(profile)
	if err != nil {
		return err
	}
	start := time.Now()
	for i := range n {
		if err := appendREST(i); err != nil {
			stopProfile()
			return fmt.Errorf("append %d through REST: %w", i, err)
		}
	}
	restWall := time.Since(start)
	stopProfile()
	start = time.Now()
	for i := range n {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO rest.viasql VALUES (%d)", i)); err != nil {
			return err
		}
	}
	sqlWall := time.Since(start)
	for _, t := range []string{"viarest", "viasql"} {
		var rows int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM rest."+t).Scan(&rows); err != nil {
			return err
		}
		if rows != n {
			return fmt.Errorf("rest.%s has %d rows after %d appends", t, rows, n)
		}
	}
	restRate, sqlRate := float64(n)/restWall.Seconds(), float64(n)/sqlWall.Seconds()
	commitMu.Lock()
	slices.Sort(commitLat)
	server := commitLat[len(commitLat)/2]
	commitMu.Unlock()
	fmt.Printf("bench rest_commits rest_per_s=%.1f sql_per_s=%.1f ratio=%.2f commits=%d server_commit_p50_ms=%.2f\n",
		restRate, sqlRate, restRate/sqlRate, n, ms(server))

	// loadTable at 100 snapshots: rest.viarest has n; a table of its own
	// gets exactly 100.
	if _, err := db.ExecContext(ctx, "CREATE TABLE rest.loaded (id BIGINT)"); err != nil {
		return err
	}
	for i := range 100 {
		if _, err := db.ExecContext(ctx, fmt.Sprintf("INSERT INTO rest.loaded VALUES (%d)", i)); err != nil {
			return err
		}
	}
	lat := make([]time.Duration, 0, 10*n)
	for range cap(lat) {
		t0 := time.Now()
		resp, err := http.Get(base + "/v1/namespaces/rest/tables/loaded")
		if err != nil {
			return err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			return fmt.Errorf("load table: status %d: %v", resp.StatusCode, err)
		}
		lat = append(lat, time.Since(t0))
	}
	slices.Sort(lat)
	fmt.Printf("bench rest_load snapshots=100 p50_ms=%.2f p99_ms=%.2f requests=%d\n",
		ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100]), len(lat))
	return nil
}
