package main

import (
	"bufio"
	"bytes"
	"database/sql"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql"
)

// TestSlowQueryLogAndMetrics: with --log-format json --slow-query-ms 300, a
// statement that takes longer is one JSON line with its duration and rows,
// a fast one is not logged, and it says what the statement's scans read;
// /metrics on the --http port counts statements by kind and outcome, rows,
// sessions, data files read and pruned, and commits by table.
func TestSlowQueryLogAndMetrics(t *testing.T) {
	bin := buildBinary(t)
	addr, httpAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "serve", "--warehouse", t.TempDir(), "--addr", addr, "--http", httpAddr,
		"--log-format", "json", "--slow-query-ms", "300")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("icesql serve did not start")
		}
	}
	db, err := sql.Open("mysql", "root@tcp("+addr+")/")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	for _, stmt := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (a INT)", "INSERT INTO d.t VALUES (1), (2), (3)"} {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	var n int
	// The column in the filter makes it a scan (COUNT(*) of a filter on
	// no column is answered from metadata).
	if err := db.QueryRow("SELECT COUNT(*) FROM d.t WHERE a > 0 AND SLEEP(0.5) = 0").Scan(&n); err != nil || n != 3 {
		t.Fatalf("slow select: %d, %v", n, err)
	}
	if err := db.QueryRow("SELECT 1 AS fast").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("SELECT * FROM d.nope"); err == nil {
		t.Fatal("select from a missing table succeeded")
	}

	res, err := http.Get("http://" + httpAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{
		`icesql_queries_total{kind="INSERT",outcome="ok"} 1`,
		`icesql_queries_total{kind="SELECT",outcome="error"} 1`,
		`icesql_query_duration_seconds_count{kind="CREATE"} 2`,
		`icesql_rows_affected_total 4`, // CREATE DATABASE's 1 and the INSERT's 3
		"icesql_sessions_open 1",
		`icesql_commits_total{table="d.t"} 1`,
		`icesql_scan_data_files_total{result="read"} 1`, // the slow SELECT's one file
		`icesql_scan_data_files_total{result="pruned"} 0`,
		"icesql_scan_rows_total 3", // the slow SELECT's three rows
		"go_memstats_heap_inuse_bytes ",
	} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics has no %q:\n%s", want, body)
		}
	}
	if !strings.Contains(string(body), `icesql_rows_returned_total `) || strings.Contains(string(body), "icesql_rows_returned_total 0\n") {
		t.Errorf("/metrics counts no rows returned:\n%s", body)
	}
	db.Close()

	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	var slow []map[string]any
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Errorf("log line is not JSON: %q", sc.Text())
			continue
		}
		if line["msg"] == "slow query" && line["kind"] == "SELECT" {
			slow = append(slow, line)
		}
	}
	if len(slow) != 1 {
		t.Fatalf("slow query lines: %v\nwant the one SELECT with SLEEP, not the fast one\n%s", slow, stderr.String())
	}
	l := slow[0]
	if d, _ := l["duration_ms"].(float64); d < 300 || l["rows"] != float64(1) || l["kind"] != "SELECT" ||
		!strings.Contains(l["query"].(string), "SLEEP(0.5)") {
		t.Errorf("slow query line: %v", l)
	}
	if l["files_read"] != float64(1) || l["files_pruned"] != float64(0) {
		t.Errorf("slow query line: files_read %v, files_pruned %v, want 1 and 0", l["files_read"], l["files_pruned"])
	}
	if l["rows_read"] != float64(3) {
		t.Errorf("slow query line: rows_read %v, want the table's 3 rows", l["rows_read"])
	}
	if b, _ := l["bytes_read"].(float64); b <= 0 {
		t.Errorf("slow query line: bytes_read %v, want the bytes of the file read", l["bytes_read"])
	}

	// A bad log format is refused before the server starts.
	out, err := exec.Command(bin, "serve", "--warehouse", t.TempDir(), "--addr", freeAddr(t), "--log-format", "xml").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "text or json") {
		t.Errorf("--log-format xml: %v\n%s", err, out)
	}
}
