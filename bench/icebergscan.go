package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// DuckDB's own Iceberg reader on icesql's tables: the DuckDB Python package
// with the iceberg (and avro) extensions from PyPI, in a separate process so
// that its memory does not count in icesql's rss_mb. Planning (metadata,
// manifest list, manifests) is then in both engines' figures, where the
// Parquet comparison gives DuckDB the data file directly.

const icebergScanScript = `
import glob, importlib.util, json, os, statistics, sys, time
try:
    import duckdb
except ImportError:
    sys.exit("the duckdb Python package is not installed")
req = json.load(sys.stdin)
con = duckdb.connect()
con.execute("SET threads = 2")
con.execute("SET enable_progress_bar = false")  # it writes to stdout, where the timings go

def load(name):
    try:
        con.execute("LOAD " + name)
        return
    except Exception:
        pass
    spec = importlib.util.find_spec("duckdb_extension_" + name)
    if spec is None or not spec.submodule_search_locations:
        sys.exit("the %s extension is neither installed in DuckDB nor as the duckdb-extension-%s package (pip install duckdb==%s duckdb-extension-%s==%s)"
                 % (name, name, duckdb.__version__, name, duckdb.__version__))
    found = glob.glob(os.path.join(spec.submodule_search_locations[0], "extensions", "*", name + ".duckdb_extension"))
    if not found:
        sys.exit("the duckdb-extension-%s package holds no extension file" % name)
    con.execute("LOAD '%s'" % found[0])

load("avro")
load("iceberg")
for name, path in req["tables"].items():
    con.execute("CREATE VIEW %s AS SELECT * FROM iceberg_scan('%s')" % (name, path))
out = {}
for q in req["queries"]:
    con.execute(q["sql"]).fetchall()
    times = []
    for _ in range(req["runs"]):
        start = time.perf_counter()
        con.execute(q["sql"]).fetchall()
        times.append((time.perf_counter() - start) * 1000)
    out[q["name"]] = statistics.median(times)
json.dump({"version": duckdb.__version__, "ms": out}, sys.stdout)
`

// icebergScan times queries with DuckDB's iceberg_scan on the given tables
// (name → metadata file), returning the median milliseconds per query
// name, or why the comparison could not run.
func icebergScan(ctx context.Context, python string, tables map[string]string, qs []query, runs int) (map[string]float64, string, error) {
	list := make([]map[string]string, len(qs))
	for i, q := range qs {
		list[i] = map[string]string{"name": q.name, "sql": q.sql}
	}
	req, err := json.Marshal(map[string]any{"tables": tables, "queries": list, "runs": runs})
	if err != nil {
		return nil, "", err
	}
	cmd := exec.CommandContext(ctx, python, "-c", icebergScanScript)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if lines := strings.Split(msg, "\n"); len(lines) > 0 {
			msg = lines[len(lines)-1]
		}
		return nil, "", fmt.Errorf("%s: %v: %s", python, err, msg)
	}
	var res struct {
		Version string             `json:"version"`
		MS      map[string]float64 `json:"ms"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return nil, "", fmt.Errorf("reading DuckDB's timings: %w", err)
	}
	return res.MS, res.Version, nil
}

// newestMetadata is the table's current metadata file in icesql's
// warehouse: the highest v<N>.metadata.json.
func newestMetadata(warehouse, ns, name string) (string, error) {
	files, err := filepath.Glob(filepath.Join(warehouse, ns, name, "metadata", "v*.metadata.json"))
	if err != nil {
		return "", err
	}
	best, bestN := "", -1
	for _, f := range files {
		n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "v"), ".metadata.json"), ".gz"))
		if err == nil && n > bestN {
			best, bestN = f, n
		}
	}
	if best == "" {
		return "", fmt.Errorf("no metadata file for %s.%s in %s", ns, name, warehouse)
	}
	return best, nil
}
