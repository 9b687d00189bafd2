package main

import (
	"bufio"
	"context"
	"crypto/md5"
	gosql "database/sql"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/importer"
	"github.com/icesql/icesql/storage"
)

// runLoad measures loading a CSV of rows lines and 6 columns (BIGINT,
// STRING, DOUBLE, INT, DATE, STRING) two ways: LOAD DATA LOCAL INFILE over
// the MySQL protocol, and icesql import's path (importer inference and
// conversion, then engine.ImportTable). It prints, per way, "bench
// <way> rows= ms= rows_per_s= cpu_s= files= snapshots=".
//
// The LOAD DATA runs again into a warehouse served as a bucket (icesql
// serve's S3 API), where every file written records its ETag, the MD5 of
// its bytes (storage/etag.go), and then into a plain one once more;
// "bench load_etag" prints the CPU time of these two loads, their
// difference, and the MD5 of as many bytes as the served load wrote timed
// alone (md5_ms, md5_pct): the part of the difference the ETags account
// for, without the noise of a shared machine.
func runLoad(ctx context.Context, work string, rows int, profile string) error {
	csv := filepath.Join(work, "load.csv")
	if err := writeLoadCSV(csv, rows); err != nil {
		return err
	}
	plain, err := openLoadTarget(ctx, filepath.Join(work, "warehouse"), false)
	if err != nil {
		return err
	}
	defer plain.close()
	stopProfile, err := startProfile(profile)
	if err != nil {
		return err
	}
	plainCPU, err := plain.loadData(ctx, csv, "load_data_local")
	stopProfile()
	if err != nil {
		return err
	}

	start, cpu0 := time.Now(), cpuTime()
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
	if _, err := plain.db.ExecContext(ctx, "CREATE TABLE bulk.imported ("+cols+")"); err != nil {
		return err
	}
	tbl, err := plain.e.Catalog().LoadTable(ctx, table.Identifier{"bulk", "imported"})
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
	imp, err := plain.e.ImportTable(ctx, "bulk", "imported", rd, engine.ImportOptions{})
	rd.Release()
	if err != nil {
		return err
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	if err := plain.report(ctx, "import", "bulk.imported", imp.Rows, el, cpu); err != nil {
		return err
	}
	plain.close()

	servedDir := filepath.Join(work, "servedwarehouse")
	served, err := openLoadTarget(ctx, servedDir, true)
	if err != nil {
		return err
	}
	defer served.close()
	servedCPU, err := served.loadData(ctx, csv, "load_data_local_served")
	if err != nil {
		return err
	}
	served.close()
	// The first load of the process pays for warming up (the heap grows,
	// code pages in): the served load is compared with a second plain one.
	again, err := openLoadTarget(ctx, filepath.Join(work, "warehouse2"), false)
	if err != nil {
		return err
	}
	defer again.close()
	plainCPU, err = again.loadData(ctx, csv, "load_data_local_again")
	if err != nil {
		return err
	}
	written, err := folderBytes(filepath.Join(servedDir, "bulk", "t"))
	if err != nil {
		return err
	}
	md5CPU := md5Time(written)
	fmt.Printf("bench load_etag plain_cpu_s=%.2f served_cpu_s=%.2f diff_pct=%.1f bytes=%d md5_ms=%.1f md5_pct=%.2f\n",
		plainCPU.Seconds(), servedCPU.Seconds(), 100*(servedCPU-plainCPU).Seconds()/plainCPU.Seconds(),
		written, float64(md5CPU.Microseconds())/1000, 100*md5CPU.Seconds()/servedCPU.Seconds())
	return nil
}

// loadTarget is an engine over a warehouse, its MySQL server and a
// client, with the table bulk.t the LOAD DATA fills.
type loadTarget struct {
	e   *engine.Engine
	srv *engine.Server
	db  *gosql.DB
}

// openLoadTarget opens the warehouse at dir; with served, it is served as
// the bucket "warehouse" first, as icesql serve does, so that the files
// written record their ETags.
func openLoadTarget(ctx context.Context, dir string, served bool) (*loadTarget, error) {
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
	if err != nil {
		return nil, err
	}
	t := &loadTarget{e: e}
	if served {
		wh, ok := e.Catalog().(*storage.Warehouse)
		if !ok {
			t.close()
			return nil, fmt.Errorf("the engine's catalog is %T, not the embedded warehouse", e.Catalog())
		}
		if err := wh.ServeBucket(ctx, "warehouse", false); err != nil {
			t.close()
			return nil, err
		}
	}
	t.srv, err = e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.close()
		return nil, err
	}
	go t.srv.Start()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.AllowAllFiles = "root", "tcp", t.srv.Addr(), true
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		t.close()
		return nil, err
	}
	t.db = gosql.OpenDB(connector)
	t.db.SetMaxOpenConns(1)
	for _, s := range []string{
		"CREATE DATABASE bulk",
		"CREATE TABLE bulk.t (id BIGINT, customer STRING, amount DOUBLE, qty INT, day DATE, note STRING)",
	} {
		if _, err := t.db.ExecContext(ctx, s); err != nil {
			t.close()
			return nil, fmt.Errorf("%s: %w", s, err)
		}
	}
	return t, nil
}

func (t *loadTarget) close() {
	if t.db != nil {
		t.db.Close()
		t.db = nil
	}
	if t.srv != nil {
		t.srv.Close()
		t.srv = nil
	}
	if t.e != nil {
		t.e.Close()
		t.e = nil
	}
}

// loadData runs the LOAD DATA of csv into bulk.t, reports it as way and
// returns its CPU time.
func (t *loadTarget) loadData(ctx context.Context, csv, way string) (time.Duration, error) {
	start, cpu0 := time.Now(), cpuTime()
	res, err := t.db.ExecContext(ctx, "LOAD DATA LOCAL INFILE '"+csv+"' INTO TABLE bulk.t FIELDS TERMINATED BY ',' IGNORE 1 LINES")
	if err != nil {
		return 0, fmt.Errorf("LOAD DATA: %w", err)
	}
	el, cpu := time.Since(start), cpuTime()-cpu0
	n, _ := res.RowsAffected()
	return cpu, t.report(ctx, way, "bulk.t", n, el, cpu)
}

func (t *loadTarget) report(ctx context.Context, way, tbl string, n int64, el, cpu time.Duration) error {
	var files, snaps int64
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl+".files").Scan(&files); err != nil {
		return err
	}
	if err := t.db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl+".snapshots").Scan(&snaps); err != nil {
		return err
	}
	fmt.Printf("bench %s rows=%d ms=%d rows_per_s=%.0f cpu_s=%.2f files=%d snapshots=%d\n",
		way, n, el.Milliseconds(), float64(n)/el.Seconds(), cpu.Seconds(), files, snaps)
	return nil
}

// folderBytes is the size of the files under dir.
func folderBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		n += fi.Size()
		return nil
	})
	return n, err
}

// md5Time is the CPU time the MD5 of n bytes takes, hashed 1 MiB at a
// time as the file writes hand them over.
func md5Time(n int64) time.Duration {
	buf := make([]byte, 1<<20)
	for i := range buf {
		buf[i] = byte(i * 31)
	}
	h := md5.New()
	c0 := cpuTime()
	for left := n; left > 0; left -= int64(len(buf)) {
		h.Write(buf[:min(left, int64(len(buf)))])
	}
	h.Sum(nil)
	return cpuTime() - c0
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
