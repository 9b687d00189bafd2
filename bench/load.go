package main

import (
	"bufio"
	"context"
	gosql "database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/importer"
)

// runLoad measures loading a CSV of rows lines and 6 columns (BIGINT,
// STRING, DOUBLE, INT, DATE, STRING) two ways: LOAD DATA LOCAL INFILE over
// the MySQL protocol, and icesql import's path (importer inference and
// conversion, then engine.ImportTable). It prints, per way, "bench
// <way> rows= ms= rows_per_s= cpu_s= files= snapshots=".
func runLoad(ctx context.Context, work string, rows int, profile string) error {
	csv := filepath.Join(work, "load.csv")
	if err := writeLoadCSV(csv, rows); err != nil {
		return err
	}
	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	go srv.Start()
	defer srv.Close()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.AllowAllFiles = "root", "tcp", srv.Addr(), true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	db := gosql.OpenDB(connector)
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{
		"CREATE DATABASE bulk",
		"CREATE TABLE bulk.t (id BIGINT, customer STRING, amount DOUBLE, qty INT, day DATE, note STRING)",
	} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	report := func(way, tbl string, n int64, el, cpu time.Duration) error {
		var files, snaps int64
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl+".files").Scan(&files); err != nil {
			return err
		}
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl+".snapshots").Scan(&snaps); err != nil {
			return err
		}
		fmt.Printf("bench %s rows=%d ms=%d rows_per_s=%.0f cpu_s=%.2f files=%d snapshots=%d\n",
			way, n, el.Milliseconds(), float64(n)/el.Seconds(), cpu.Seconds(), files, snaps)
		return nil
	}

	stopProfile, err := startProfile(profile)
	if err != nil {
		return err
	}
	start, cpu0 := time.Now(), cpuTime()
	res, err := db.ExecContext(ctx, "LOAD DATA LOCAL INFILE '"+csv+"' INTO TABLE bulk.t FIELDS TERMINATED BY ',' IGNORE 1 LINES")
	if err != nil {
		return fmt.Errorf("LOAD DATA: %w", err)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	stopProfile()
	n, _ := res.RowsAffected()
	if err := report("load_data_local", "bulk.t", n, el, cpu); err != nil {
		return err
	}

	start, cpu0 = time.Now(), cpuTime()
	src, err := importer.Open(ctx, importer.LocalFS{}, csv, importer.Options{})
	if err != nil {
		return err
	}
	var cols string
	for i, c := range src.Columns() {
		if i > 0 {
			cols += ", "
		}
		cols += c.Name + " " + c.SQLType
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE bulk.imported ("+cols+")"); err != nil {
		return err
	}
	tbl, err := e.Catalog().LoadTable(ctx, table.Identifier{"bulk", "imported"})
	if err != nil {
		return err
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return err
	}
	rd, err := src.Read(ctx, schema, importer.ReadOptions{})
	if err != nil {
		return err
	}
	imp, err := e.ImportTable(ctx, "bulk", "imported", rd, engine.ImportOptions{})
	rd.Release()
	if err != nil {
		return err
	}
	el, cpu = time.Since(start), cpuTime()-cpu0
	return report("import", "bulk.imported", imp.Rows, el, cpu)
}

// writeLoadCSV writes the benchmark's CSV: a header and rows lines.
func writeLoadCSV(path string, rows int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(1, 2))
	fmt.Fprintln(w, "id,customer,amount,qty,day,note")
	for i := range rows {
		fmt.Fprintf(w, "%d,customer%d,%d.%02d,%d,2024-%02d-%02d,note %d\n",
			i, rng.IntN(50_000), rng.IntN(100_000), rng.IntN(100), 1+rng.IntN(50), 1+rng.IntN(12), 1+rng.IntN(28), i%977)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
