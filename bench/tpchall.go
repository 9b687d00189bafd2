package main

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/icesql/icesql/engine"
)

// bench -tpch: TPC-H's eight tables made by DuckDB's dbgen (the tpch
// extension, which DuckDB publishes on PyPI; the DuckDB linked here has
// none), loaded into icesql with its bulk import, and the 22 queries on
// both engines over the same Parquet files. Each icesql answer is checked
// against DuckDB's: the same rows in the same order, numbers within a cent
// or a millionth of each other.

// tpchTables are TPC-H's tables, smallest first.
var tpchTables = []string{"region", "nation", "supplier", "customer", "part", "partsupp", "orders", "lineitem"}

// tpchVenv is the Python bench -tpch generates the tables with, installed
// once by interop/venv.sh.
var tpchVenv = []string{"duckdb==1.5.5", "duckdb-extension-tpch==1.5.5"}

// tpchKnown are the queries bench -tpch does not run, each with the reason
// EXPLAIN shows. Each is a defect to fix. (-q runs one anyway.)
var tpchKnown = map[string]string{}

// dbgenScript writes the tables at scale factor argv[1] as Parquet files
// into the folder argv[2], in row groups of the size icesql writes.
const dbgenScript = `
import duckdb, glob, importlib.util, os, sys
sf, out = sys.argv[1], sys.argv[2]
spec = importlib.util.find_spec("duckdb_extension_tpch")
if spec is None:
    sys.exit("the duckdb-extension-tpch package is not installed")
found = glob.glob(os.path.join(spec.submodule_search_locations[0], "extensions", "*", "tpch.duckdb_extension"))
if not found:
    sys.exit("the duckdb-extension-tpch package holds no extension file")
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute("LOAD '%s'" % found[0].replace("'", "''"))
con.execute("CALL dbgen(sf=%s)" % float(sf))
for t in sys.argv[3:]:
    con.execute("COPY %s TO '%s' (FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE %d)" % (t, os.path.join(out, t + ".parquet").replace("'", "''"), int(os.environ["ROW_GROUP_ROWS"])))
print(duckdb.__version__)
`

// runTPCH is bench -tpch.
func runTPCH(ctx context.Context, work string, sf float64, runs int, slow, timeout time.Duration, only, queryFile, queryProfile string, explain, cpu bool) error {
	queries, err := readTPCHQueries(queryFile)
	if err != nil {
		return err
	}
	data := filepath.Join(work, "tpch")
	if err := os.MkdirAll(data, 0o755); err != nil {
		return err
	}
	start := time.Now()
	version, err := dbgen(ctx, sf, data)
	if err != nil {
		return err
	}
	log.Printf("dbgen (DuckDB %s) wrote TPC-H at SF %g in %s", version, sf, time.Since(start).Round(time.Millisecond))

	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE tpch"); err != nil {
		return err
	}
	duck, err := gosql.Open("duckdb", "")
	if err != nil {
		return err
	}
	defer duck.Close()
	duck.SetMaxOpenConns(1)
	if _, err := duck.ExecContext(ctx, "SET threads = 2"); err != nil {
		return err
	}
	for _, t := range tpchTables {
		path := filepath.Join(data, t+".parquet")
		ddl, err := createTableFor("tpch", t, path)
		if err != nil {
			return err
		}
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("%s: %w", ddl, err)
		}
		start, cpu0 := time.Now(), cpuTime()
		n, err := importParquet(ctx, e, "tpch", t, path)
		if err != nil {
			return err
		}
		el := time.Since(start)
		fmt.Printf("bench load_tpch_%s rows=%d ms=%d cpu_s=%.2f\n", t, n, el.Milliseconds(), (cpuTime() - cpu0).Seconds())
		if _, err := duck.ExecContext(ctx, fmt.Sprintf("CREATE VIEW %s AS SELECT * FROM read_parquet('%s')", t, path)); err != nil {
			return fmt.Errorf("duckdb: view %s: %w", t, err)
		}
	}
	if _, err := db.ExecContext(ctx, "USE tpch"); err != nil {
		return err
	}

	var ratios, cpuRatios []float64
	var passed, failed, timeouts, skipped int
	for _, q := range queries {
		if only != "" && !slices.Contains(strings.Split(only, ","), q.name) {
			continue
		}
		if explain {
			plan, err := explainPlan(ctx, db, q.sql)
			if err != nil {
				return fmt.Errorf("EXPLAIN %s: %w", q.name, err)
			}
			fmt.Printf("EXPLAIN %s\n%s\n", q.name, plan)
		}
		if why, ok := tpchKnown[q.name]; ok && only == "" {
			fmt.Printf("bench tpch_%s skipped: %s\n", q.name, why)
			skipped++
			continue
		}
		dk, dkCPU, want, err := timedRowsCPU(ctx, duck, q.sql, runs, slow, timeout)
		if err != nil {
			return fmt.Errorf("%s on duckdb: %w", q.name, err)
		}
		resetPeakRSS()
		stopProfile, err := startProfile(profilePath(queryProfile, q.name))
		if err != nil {
			return err
		}
		ice, iceCPU, got, err := timedRowsCPU(ctx, db, q.sql, runs, slow, timeout)
		stopProfile()
		rss := peakRSSMB()
		switch {
		case errors.Is(err, context.DeadlineExceeded):
			timeouts++
			fmt.Printf("bench tpch_%s icesql_ms=timeout duckdb_ms=%.1f ratio=timeout rss_mb=%d timeout_s=%.0f\n", q.name, ms(dk), rss, timeout.Seconds())
			continue
		case err != nil:
			failed++
			fmt.Printf("bench tpch_%s failed: %v\n", q.name, err)
			continue
		}
		ratio := float64(ice) / float64(max(dk, time.Microsecond))
		same := sameRows(got, want)
		cpuText := ""
		if cpu {
			cpuRatio := float64(iceCPU) / float64(max(dkCPU, time.Microsecond))
			cpuText = fmt.Sprintf(" icesql_cpu_ms=%.1f duckdb_cpu_ms=%.1f cpu_ratio=%.2f", ms(iceCPU), ms(dkCPU), cpuRatio)
			cpuRatios = append(cpuRatios, cpuRatio)
		}
		fmt.Printf("bench tpch_%s icesql_ms=%.1f duckdb_ms=%.1f ratio=%.2f rss_mb=%d%s same_result=%v\n", q.name, ms(ice), ms(dk), ratio, rss, cpuText, same == "")
		if same != "" {
			failed++
			log.Printf("  %s: icesql's rows differ from DuckDB's: %s", q.name, same)
			continue
		}
		passed++
		ratios = append(ratios, ratio)
	}
	cpuText := ""
	if cpu {
		cpuText = fmt.Sprintf(" cpu_geomean=%.2f", geomean(cpuRatios))
	}
	fmt.Printf("bench tpch geomean=%.2f sf=%g passed=%d failed=%d timeouts=%d skipped=%d%s\n", geomean(ratios), sf, passed, failed, timeouts, skipped, cpuText)
	if failed > 0 {
		return fmt.Errorf("tpch: %d queries failed or returned other rows than DuckDB", failed)
	}
	return nil
}

// geomean is the geometric mean of ratios (NaN for none).
func geomean(ratios []float64) float64 {
	if len(ratios) == 0 {
		return math.NaN()
	}
	sum := 0.0
	for _, r := range ratios {
		sum += math.Log(r)
	}
	return math.Exp(sum / float64(len(ratios)))
}

// profilePath is where -queryprofile puts the CPU profile of query q:
// the path with the query's name appended ("" for none).
func profilePath(profile, q string) string {
	if profile == "" {
		return ""
	}
	return profile + "." + q
}

// readTPCHQueries reads the queries named q01 ... q22 from tpch_shapes.test,
// where the sqllogictests run them on small tables.
func readTPCHQueries(path string) ([]query, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("the TPC-H queries: %w", err)
	}
	var qs []query
	for _, rec := range strings.Split(string(data), "\n\n") {
		lines := strings.Split(strings.TrimSpace(rec), "\n")
		if len(lines) < 3 || !strings.HasPrefix(lines[0], "# q") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(lines[0], "# "), ":")
		for i, l := range lines {
			if strings.HasPrefix(l, "query ") && i+1 < len(lines) {
				qs = append(qs, query{name, lines[i+1]})
				break
			}
		}
	}
	if len(qs) != 22 {
		return nil, fmt.Errorf("%s holds %d TPC-H queries (q01 ... q22), want 22", path, len(qs))
	}
	return qs, nil
}

// dbgen writes the tables with DuckDB's tpch extension in the virtualenv
// interop/venv.sh makes, and returns DuckDB's version.
func dbgen(ctx context.Context, sf float64, out string) (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	venv := exec.CommandContext(ctx, "bash", append([]string{"../interop/venv.sh", filepath.Join(home, ".cache", "icesql-tpch")}, tpchVenv...)...)
	venv.Stderr = os.Stderr
	py, err := venv.Output()
	if err != nil {
		return "", fmt.Errorf("interop/venv.sh (the Python with %s): %w", strings.Join(tpchVenv, " "), err)
	}
	gen := exec.CommandContext(ctx, strings.TrimSpace(string(py)), append([]string{"-c", dbgenScript, strconv.FormatFloat(sf, 'g', -1, 64), out}, tpchTables...)...)
	gen.Env = append(os.Environ(), fmt.Sprintf("ROW_GROUP_ROWS=%d", engine.DefaultRowGroupRows))
	gen.Stderr = os.Stderr
	version, err := gen.Output()
	if err != nil {
		return "", fmt.Errorf("dbgen: %w", err)
	}
	return strings.TrimSpace(string(version)), nil
}

// createTableFor is the CREATE TABLE of tpch.<name> with the columns of the
// Parquet file at path.
func createTableFor(namespace, name, path string) (string, error) {
	f, err := file.OpenParquetFile(path, false)
	if err != nil {
		return "", err
	}
	defer f.Close()
	schema, err := pqarrow.FromParquet(f.MetaData().Schema, nil, f.MetaData().KeyValueMetadata())
	if err != nil {
		return "", err
	}
	var cols []string
	for _, fd := range schema.Fields() {
		var typ string
		switch t := fd.Type.(type) {
		case *arrow.Int32Type:
			typ = "INT"
		case *arrow.Int64Type:
			typ = "BIGINT"
		case *arrow.Decimal128Type:
			typ = fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
		case *arrow.StringType, *arrow.LargeStringType:
			typ = "STRING"
		case *arrow.Date32Type:
			typ = "DATE"
		case *arrow.Float64Type:
			typ = "DOUBLE"
		case *arrow.Float32Type:
			typ = "FLOAT"
		case *arrow.BooleanType:
			typ = "BOOLEAN"
		case *arrow.TimestampType:
			if t.TimeZone != "" {
				return "", fmt.Errorf("%s.%s: no icesql type for %s", name, fd.Name, fd.Type)
			}
			typ = "TIMESTAMP"
		default:
			return "", fmt.Errorf("%s.%s: no icesql type for %s", name, fd.Name, fd.Type)
		}
		cols = append(cols, fd.Name+" "+typ)
	}
	return fmt.Sprintf("CREATE TABLE %s.%s (%s)", namespace, name, strings.Join(cols, ", ")), nil
}

// timedRows runs q once for its rows, then, unless that took longer than
// slow, runs more times, and returns the median time. Each run is given
// timeout.
func timedRows(ctx context.Context, db *gosql.DB, q string, runs int, slow, timeout time.Duration) (time.Duration, [][]string, error) {
	t, _, rows, err := timedRowsCPU(ctx, db, q, runs, slow, timeout)
	return t, rows, err
}

// timedRowsCPU is timedRows that also gives the median CPU time of the
// process over the timed runs (DuckDB runs in it too).
func timedRowsCPU(ctx context.Context, db *gosql.DB, q string, runs int, slow, timeout time.Duration) (time.Duration, time.Duration, [][]string, error) {
	run := func() (time.Duration, time.Duration, [][]string, error) {
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		start, cpu0 := time.Now(), cpuTime()
		rows, err := queryRows(ctx, db, q)
		if err != nil && ctx.Err() != nil {
			err = context.DeadlineExceeded
		}
		return time.Since(start), cpuTime() - cpu0, rows, err
	}
	first, firstCPU, rows, err := run()
	if err != nil || first > slow {
		return first, firstCPU, rows, err
	}
	times := make([]time.Duration, 0, runs)
	cpus := make([]time.Duration, 0, runs)
	for range runs {
		t, c, _, err := run()
		if err != nil {
			return 0, 0, nil, err
		}
		times = append(times, t)
		cpus = append(cpus, c)
	}
	if len(times) == 0 {
		return first, firstCPU, rows, nil
	}
	slices.Sort(times)
	slices.Sort(cpus)
	return times[len(times)/2], cpus[len(cpus)/2], rows, nil
}

// queryRows returns q's rows as text: dates as YYYY-MM-DD, numbers as the
// driver gives them.
func queryRows(ctx context.Context, db *gosql.DB, q string) ([][]string, error) {
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	var out [][]string
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(vals))
		for i, v := range vals {
			switch v := v.(type) {
			case nil:
				row[i] = "NULL"
			case []byte:
				row[i] = string(v)
			case time.Time:
				row[i] = v.Format("2006-01-02")
			case bool: // DuckDB's BOOLEAN; icesql's is TINYINT(1)
				row[i] = "0"
				if v {
					row[i] = "1"
				}
			default:
				row[i] = fmt.Sprint(v)
			}
			if d, ok := strings.CutSuffix(row[i], " 00:00:00"); ok {
				row[i] = d
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// sameRows says how got differs from want ("" when it does not): the same
// rows in the same order, numbers within a cent or a millionth.
func sameRows(got, want [][]string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d rows, DuckDB %d", len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return fmt.Sprintf("row %d has %d columns, DuckDB's %d", i+1, len(got[i]), len(want[i]))
		}
		for j, g := range got[i] {
			w := want[i][j]
			if g == w {
				continue
			}
			a, errA := strconv.ParseFloat(g, 64)
			b, errB := strconv.ParseFloat(w, 64)
			if errA == nil && errB == nil {
				d := math.Abs(a - b)
				if d <= 0.01 || d <= 1e-6*max(math.Abs(a), math.Abs(b)) {
					continue
				}
			}
			return fmt.Sprintf("row %d column %d: %q, DuckDB %q", i+1, j+1, g, w)
		}
	}
	return ""
}

// explainPlan is icesql's EXPLAIN of q.
func explainPlan(ctx context.Context, db *gosql.DB, q string) (string, error) {
	rows, err := queryRows(ctx, db, "EXPLAIN "+q)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, " "))
		b.WriteByte('\n')
	}
	return b.String(), nil
}
