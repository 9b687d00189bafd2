// Command bench measures icesql beside DuckDB on TPC-H lineitem and orders:
// the same generated rows as an icesql (Iceberg) table and as Parquet files,
// the same queries, medians of timed runs after a warm-up, and the ratio
// icesql/DuckDB measured in the same run. It is its own module so that the
// icesql binary never links DuckDB.
//
//	go run . -sf 1            (make bench)
//
// It prints, per table loaded, "bench load_<table> rows= ms= rows_per_s=
// cpu_s=", and per query "bench <query> icesql_ms= duckdb_ms= ratio=
// rss_mb=" (in-process icesql; duckdb_ms is DuckDB on the Parquet copy;
// rss_mb the peak resident memory of the icesql runs) followed by wire_ms
// (icesql over the MySQL protocol), wire_ratio (wire/in-process),
// duckdb_iceberg_ms and iceberg_ratio (DuckDB's iceberg_scan on icesql's
// own tables, when -python has it; otherwise a "bench duckdb_iceberg
// skipped:" line says why) and same_result. -decode adds the decoder
// comparison of decode.go. -tpch runs TPC-H's 22 queries over its 8 tables
// instead (tpchall.go). -commits measures single-row INSERT commits
// instead (commits.go), -dml UPDATE and DELETE (dml.go), -smallq point
// lookups on a table of many small commits (smallq.go), -rest commits
// through the REST catalog (rest.go), -shapes issue 16's query shapes at
// 100 times its rows (shapes.go).
package main

import (
	"context"
	gosql "database/sql"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	_ "github.com/duckdb/duckdb-go/v2"
	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// query is one benchmark query; its text runs unchanged on both engines.
type query struct{ name, sql string }

var queries = []query{
	{"Q1", `SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty, SUM(l_extendedprice) AS sum_base_price,
		SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
		SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
		AVG(l_quantity) AS avg_qty, AVG(l_extendedprice) AS avg_price, AVG(l_discount) AS avg_disc, COUNT(*) AS count_order
		FROM lineitem WHERE l_shipdate <= DATE '1998-09-02'
		GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus`},
	{"Q6", `SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem
		WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01'
		AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24`},
	// TPC-H Q3 without the customer table (this benchmark has lineitem and
	// orders only): the join and its filters, grouping and top 10 stay.
	{"Q3", `SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority
		FROM orders, lineitem
		WHERE l_orderkey = o_orderkey AND o_orderdate < DATE '1995-03-15' AND l_shipdate > DATE '1995-03-15'
		GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10`},
	{"count", `SELECT COUNT(*) FROM lineitem`},
	// The point lookup's key is an order in the middle of the table (pointKey).
	{"point", `SELECT l_linenumber, l_quantity, l_extendedprice, l_shipdate FROM lineitem WHERE l_orderkey = %d ORDER BY l_linenumber`},
	{"range1pct", `SELECT COUNT(*), SUM(l_extendedprice) FROM lineitem
		WHERE l_shipdate >= DATE '1995-06-01' AND l_shipdate < DATE '1995-06-26'`},
	// Shapes beyond the six above, measured so that they stay fast: a
	// LIKE, an ORDER BY ... LIMIT of rows, and TPC-H Q18's GROUP BY of 1.5M
	// groups with a HAVING.
	{"like", `SELECT COUNT(*), MIN(l_orderkey) FROM lineitem WHERE l_comment LIKE '%ironic%requests%'`},
	{"topn", `SELECT l_orderkey, l_linenumber, l_extendedprice FROM lineitem WHERE l_shipdate >= DATE '1995-01-01'
		ORDER BY l_extendedprice DESC, l_orderkey, l_linenumber LIMIT 10`},
	{"having", `SELECT l_orderkey, SUM(l_quantity) AS q FROM lineitem GROUP BY l_orderkey HAVING SUM(l_quantity) > 300 ORDER BY l_orderkey`},
	// Q18's inner query as Q18 writes it (the SUM only in the HAVING),
	// ordered so that both engines' rows compare.
	{"q18_inner", `SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING SUM(l_quantity) > 300 ORDER BY l_orderkey`},
	// COUNT(DISTINCT) over a column of 1.5M values per SF, and a GROUP BY
	// of two string keys.
	{"count_distinct", `SELECT COUNT(DISTINCT l_orderkey) FROM lineitem`},
	{"groupby_2str", `SELECT l_shipmode, l_shipinstruct, COUNT(*) AS n, SUM(l_quantity) AS q FROM lineitem
		GROUP BY l_shipmode, l_shipinstruct ORDER BY l_shipmode, l_shipinstruct`},
}

func main() {
	sf := flag.Float64("sf", 1, "TPC-H scale factor (1 = 6M lineitem rows)")
	runs := flag.Int("runs", 5, "timed runs per query after one warm-up; the median is reported")
	slow := flag.Duration("slow", 30*time.Second, "a query whose warm-up takes longer is timed once")
	dir := flag.String("dir", "", "work folder (default: a temporary one, removed afterwards)")
	only := flag.String("q", "", "comma-separated query names to run (default: all)")
	loadProfile := flag.String("loadprofile", "", "write a CPU profile of loading the tables to this file")
	queryProfile := flag.String("queryprofile", "", "write a CPU profile of running the queries to this file (with -dml: of each mode's statements, to this file with .cow or .mor appended; with -tpch: of icesql's runs of each query, to this file with .qNN appended; with -commits: of each case's INSERTs, with .empty, .history or .sessions appended; with -rest: of the REST appends)")
	cpu := flag.Bool("cpu", false, "also report each engine's median CPU time per query (stabler than wall time on a shared machine)")
	decode := flag.Bool("decode", false, "also compare pqarrow and parquet-go decoding icesql's lineitem files")
	python := flag.String("python", "python3", "the Python with the duckdb package and its iceberg extension, for DuckDB's iceberg_scan on icesql's tables (empty: skip)")
	dml := flag.Bool("dml", false, "instead of TPC-H: UPDATE and DELETE of 1% of a table's rows in each write mode (dml.go)")
	dmlRows := flag.Int("dmlrows", 10_000_000, "rows of the -dml table")
	dmlFiles := flag.Int("dmlfiles", 100, "data files of the -dml table")
	s3get := flag.Bool("s3get", false, "instead of TPC-H: GET throughput of a 128 MiB object through the S3 API against reading the file (s3get.go)")
	commits := flag.Bool("commits", false, "instead of TPC-H: single-row INSERT commits, on an empty table, after 10,000 snapshots and from 8 sessions at once (commits.go)")
	commitN := flag.Int("commitn", 500, "statements of each -commits case (a fifth of them after 10,000 snapshots)")
	load := flag.Bool("load", false, "instead of TPC-H: LOAD DATA LOCAL and icesql import of a CSV of -loadrows rows (load.go; -loadprofile profiles the LOAD DATA)")
	loadRows := flag.Int("loadrows", 1_000_000, "rows of the -load CSV")
	restBench := flag.Bool("rest", false, "instead of TPC-H: commits through the Iceberg REST catalog against SQL, and loadTable latency (rest.go); -commitn commits each")
	smallq := flag.Bool("smallq", false, "instead of TPC-H: point lookups on a table of -smallqn single-row commits against one file, and 16 wire clients (smallq.go)")
	smallqN := flag.Int("smallqn", 1000, "single-row commits of the -smallq table")
	smallqTime := flag.Duration("smallqtime", 5*time.Second, "how long the -smallq wire clients run")
	tpch := flag.Bool("tpch", false, "instead of lineitem and orders: TPC-H's 8 tables from DuckDB's dbgen at -sf and its 22 queries on both engines, rows checked (tpchall.go)")
	tpchQueries := flag.String("tpchqueries", "../sqltests/testdata/tpch_shapes.test", "the file holding the -tpch queries, q01 ... q22")
	timeout := flag.Duration("timeout", 2*time.Minute, "with -tpch: a query still running after this long is reported as a timeout")
	explain := flag.Bool("explain", false, "with -tpch: print icesql's EXPLAIN of each query")
	shapes := flag.Bool("shapes", false, "instead of TPC-H: issue 16's query shapes over its three tables at -shapesrows rows each, on both engines over the same Parquet files, rows checked (shapes.go); -timeout bounds each query")
	shapesRows := flag.Int("shapesrows", 300_000, "rows of each -shapes table (100 times the differential test's 3,000)")
	flag.Parse()
	log.SetFlags(0)

	work := *dir
	if work == "" {
		var err error
		if work, err = os.MkdirTemp("", "icesql-bench-"); err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(work)
	}
	ctx := context.Background()
	if *s3get {
		if err := runS3Get(ctx, work, 128<<20, *runs); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *commits {
		if err := runCommits(ctx, work, *commitN, *queryProfile); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *restBench {
		if err := runREST(ctx, work, *commitN, *queryProfile); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *smallq {
		if err := runSmallQueries(ctx, work, *smallqN, *runs*10, *smallqTime, *queryProfile); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *load {
		if err := runLoad(ctx, work, *loadRows, *loadProfile); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *shapes {
		if err := runShapes(ctx, work, *shapesRows, *runs, *slow, *timeout, *only); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *tpch {
		if err := runTPCH(ctx, work, *sf, *runs, *slow, *timeout, *only, *tpchQueries, *queryProfile, *explain, *cpu); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *dml {
		if err := runDML(ctx, work, *dmlRows, *dmlFiles, *queryProfile); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := run(ctx, work, *sf, *runs, *slow, *only, *loadProfile, *queryProfile, *python, *decode, *cpu); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, work string, sf float64, runs int, slow time.Duration, only, loadProfile, queryProfile, python string, decode, cpu bool) error {
	li, or := filepath.Join(work, "lineitem.parquet"), filepath.Join(work, "orders.parquet")
	start := time.Now()
	rows, err := generate(sf, li, or)
	if err != nil {
		return err
	}
	log.Printf("generated %d lineitem rows at SF %g as Parquet in %s", rows, sf, time.Since(start).Round(time.Millisecond))

	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, s := range []string{"CREATE DATABASE tpch", lineitemDDL, ordersDDL} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	stopProfile, err := startProfile(loadProfile)
	if err != nil {
		return err
	}
	for _, t := range []struct{ name, file string }{{"lineitem", li}, {"orders", or}} {
		start, cpu0 := time.Now(), cpuTime()
		n, err := importParquet(ctx, e, "tpch", t.name, t.file)
		if err != nil {
			return err
		}
		el, cpu := time.Since(start), cpuTime()-cpu0
		// cpu_s is the process's CPU time: on a shared machine it says what
		// the load costs when wall time says what other processes left.
		fmt.Printf("bench load_%s rows=%d ms=%d rows_per_s=%.0f cpu_s=%.2f\n", t.name, n, el.Milliseconds(), float64(n)/el.Seconds(), cpu.Seconds())
	}
	stopProfile()
	if _, err := db.ExecContext(ctx, "USE tpch"); err != nil {
		return err
	}

	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		return err
	}
	go srv.Start()
	defer srv.Close()
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", srv.Addr(), "tpch"
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return err
	}
	wire := gosql.OpenDB(connector)
	defer wire.Close()

	duck, err := gosql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer duck.Close()
	duck.SetMaxOpenConns(1)
	for _, s := range []string{
		"SET threads = 2",
		fmt.Sprintf("CREATE VIEW lineitem AS SELECT * FROM read_parquet('%s')", li),
		fmt.Sprintf("CREATE VIEW orders AS SELECT * FROM read_parquet('%s')", or),
	} {
		if _, err := duck.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("duckdb: %s: %w", s, err)
		}
	}

	if decode {
		if err := compareDecoders(ctx, filepath.Join(work, "warehouse"), runs); err != nil {
			return err
		}
	}
	var selected []query
	for _, q := range queries {
		if only != "" && !slices.Contains(strings.Split(only, ","), q.name) {
			continue
		}
		if q.name == "point" {
			q.sql = fmt.Sprintf(q.sql, orderKey(int64(sf*ordersPerSF)/2))
		}
		selected = append(selected, q)
	}
	iceberg := duckIcebergScan(ctx, python, filepath.Join(work, "warehouse"), selected, runs)

	stopProfile, err = startProfile(queryProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	for _, q := range selected {
		resetPeakRSS()
		ice, iceRes, err := measure(ctx, db, q.sql, runs, slow)
		if err != nil {
			return fmt.Errorf("%s on icesql: %w", q.name, err)
		}
		rss := peakRSSMB()
		wireMs, _, err := measure(ctx, wire, q.sql, runs, slow)
		if err != nil {
			return fmt.Errorf("%s over the wire: %w", q.name, err)
		}
		dk, duckRes, err := measure(ctx, duck, q.sql, runs, slow)
		if err != nil {
			return fmt.Errorf("%s on duckdb: %w", q.name, err)
		}
		// The fields first; rss_mb is the peak resident memory of
		// the in-process icesql runs alone (DuckDB's own memory, loaded in
		// this process, is part of the baseline).
		line := fmt.Sprintf("bench %s icesql_ms=%.1f duckdb_ms=%.1f ratio=%.1f rss_mb=%d wire_ms=%.1f wire_ratio=%.2f",
			q.name, ms(ice), ms(dk), float64(ice)/float64(max(dk, 1)), rss, ms(wireMs), float64(wireMs)/float64(max(ice, 1)))
		if cpu {
			iceCPU, err := measureCPU(ctx, db, q.sql, runs)
			if err != nil {
				return err
			}
			duckCPU, err := measureCPU(ctx, duck, q.sql, runs)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" icesql_cpu_ms=%.1f duckdb_cpu_ms=%.1f cpu_ratio=%.1f", ms(iceCPU), ms(duckCPU), float64(iceCPU)/float64(max(duckCPU, 1)))
		}
		if t, ok := iceberg[q.name]; ok {
			line += fmt.Sprintf(" duckdb_iceberg_ms=%.1f iceberg_ratio=%.1f", t, ms(ice)/max(t, 0.001))
		}
		fmt.Printf("%s same_result=%v\n", line, iceRes == duckRes)
		if iceRes != duckRes {
			log.Printf("  %s results differ:\n  icesql: %s\n  duckdb: %s", q.name, iceRes, duckRes)
		}
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// measure runs q once to warm up, then runs times, and returns the median
// time and the result as normalised text.
func measure(ctx context.Context, db *gosql.DB, q string, runs int, slow time.Duration) (time.Duration, string, error) {
	start := time.Now()
	res, err := resultText(ctx, db, q)
	if err != nil {
		return 0, "", err
	}
	if warm := time.Since(start); warm > slow {
		return warm, res, nil
	}
	times := make([]time.Duration, 0, runs)
	for range runs {
		start := time.Now()
		if _, err := resultText(ctx, db, q); err != nil {
			return 0, "", err
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	return times[len(times)/2], res, nil
}

// resultText reads every row; numbers are rounded to 2 decimals so that the
// engines' different decimal scales and float formatting compare equal.
func resultText(ctx context.Context, db *gosql.DB, q string) (string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return "", err
		}
		for _, v := range vals {
			b.WriteString(normalise(v))
			b.WriteByte('|')
		}
		b.WriteByte('\n')
	}
	return b.String(), rows.Err()
}

func normalise(v any) string {
	switch v := v.(type) {
	case nil:
		return "NULL"
	case []byte:
		return normalise(string(v))
	case time.Time:
		return v.Format("2006-01-02")
	case string:
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return strconv.FormatFloat(f, 'f', 2, 64)
		}
		if t, err := time.Parse("2006-01-02 15:04:05", v); err == nil {
			return t.Format("2006-01-02")
		}
		return v
	case fmt.Stringer:
		return normalise(v.String())
	}
	return normalise(fmt.Sprint(v))
}

// peakRSSMB is the process's peak resident memory so far.
func peakRSSMB() int {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb / 1024
		}
	}
	return -1
}

// generate writes both tables as zstd Parquet and returns lineitem's rows.
func generate(sf float64, lineitemPath, ordersPath string) (int64, error) {
	// Row groups of the size icesql writes (engine.DefaultRowGroupRows,
	// 131,072 rows), so that both engines read the same layout; DuckDB's
	// own writer makes 122,880-row groups, and DuckDB reads its own COPY of
	// this file as fast as this one. (With Arrow's default of 64M rows the
	// whole file would be one row group, which DuckDB reads on one thread.)
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Zstd),
		parquet.WithMaxRowGroupLength(engine.DefaultRowGroupRows))
	open := func(path string, schema *arrow.Schema) (*pqarrow.FileWriter, error) {
		f, err := os.Create(path)
		if err != nil {
			return nil, err
		}
		return pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	}
	lw, err := open(lineitemPath, lineitemSchema)
	if err != nil {
		return 0, err
	}
	ow, err := open(ordersPath, ordersSchema)
	if err != nil {
		return 0, err
	}
	g := newGenerator(sf)
	var rows int64
	for {
		li, or, done := g.batch()
		rows += li.NumRows()
		err := lw.WriteBuffered(li)
		if err == nil {
			err = ow.WriteBuffered(or)
		}
		li.Release()
		or.Release()
		if err != nil {
			return 0, err
		}
		if done {
			break
		}
	}
	if err := lw.Close(); err != nil {
		return 0, err
	}
	return rows, ow.Close()
}

// importParquet loads a Parquet file into tpch.<name> through icesql's bulk
// import, one snapshot.
func importParquet(ctx context.Context, e *engine.Engine, namespace, name, path string) (int64, error) {
	f, err := file.OpenParquetFile(path, true)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{BatchSize: 64 * 1024, Parallel: true}, memory.DefaultAllocator)
	if err != nil {
		return 0, err
	}
	rdr, err := fr.GetRecordReader(ctx, nil, nil)
	if err != nil {
		return 0, err
	}
	defer rdr.Release()
	return e.Import(ctx, namespace, name, rdr.(array.RecordReader), nil)
}

// startProfile starts a CPU profile into path (none when empty) and returns
// what stops it.
func startProfile(path string) (func(), error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// cpuTime is the CPU time the process has used (user and system).
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// duckIcebergScan runs DuckDB's iceberg_scan on icesql's tables and returns
// its median milliseconds per query; when it cannot run it says why and
// returns none.
func duckIcebergScan(ctx context.Context, python, warehouse string, qs []query, runs int) map[string]float64 {
	if python == "" {
		fmt.Println("bench duckdb_iceberg skipped: no -python given")
		return nil
	}
	tables := map[string]string{}
	for _, name := range []string{"lineitem", "orders"} {
		meta, err := newestMetadata(warehouse, "tpch", name)
		if err != nil {
			fmt.Printf("bench duckdb_iceberg skipped: %v\n", err)
			return nil
		}
		tables[name] = meta
	}
	out, version, err := icebergScan(ctx, python, tables, qs, runs)
	if err != nil {
		fmt.Printf("bench duckdb_iceberg skipped: %v\n", err)
		return nil
	}
	fmt.Printf("bench duckdb_iceberg duckdb_python=%s (iceberg_scan on icesql's tables, 2 threads, separate process)\n", version)
	return out
}

// resetPeakRSS returns freed memory to the system and restarts the
// kernel's peak-resident-memory count (VmHWM), so that the next peakRSSMB
// covers what runs in between, above what the process still holds.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
