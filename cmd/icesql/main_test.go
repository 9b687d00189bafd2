package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/icesql/icesql/storage/s3test"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// buildBinary compiles icesql once per test run.
func buildBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "icesql-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "icesql")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startServer runs `icesql serve` and waits until it accepts connections.
func startServer(t *testing.T, bin string, args ...string) *exec.Cmd {
	t.Helper()
	return startServerEnv(t, bin, nil, args...)
}

// startServerEnv is startServer with more environment variables.
func startServerEnv(t *testing.T, bin string, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	addr := ""
	for i, a := range args {
		if a == "--addr" {
			addr = args[i+1]
		}
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return cmd
		}
	}
	t.Fatalf("icesql serve did not start listening on %s:\n%s", addr, out.String())
	return nil
}

// mysqlClient runs the real mysql command-line client (Debian's
// mariadb-client, which .ci/run installs).
func mysqlClient(t *testing.T, addr string, extra []string, sql string) (string, error) {
	t.Helper()
	path, err := exec.LookPath("mysql")
	if err != nil {
		t.Fatal("the mysql client is needed for the wire test: install Debian's mariadb-client (.ci/run does)")
	}
	host, port, _ := net.SplitHostPort(addr)
	args := append([]string{"-h", host, "-P", port, "--protocol=TCP", "--table"}, extra...)
	args = append(args, "-e", sql)
	out, err := exec.Command(path, args...).CombinedOutput()
	return string(out), err
}

func TestMySQLClientSession(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	startServer(t, bin, "--warehouse", dir, "--addr", addr)

	out, err := mysqlClient(t, addr, []string{"-u", "root"}, `
		CREATE DATABASE tutorial; USE tutorial;
		CREATE TABLE customers (customer_id BIGINT, name STRING, country STRING, total DOUBLE);
		INSERT INTO customers VALUES (1, 'Alice Johnson', 'USA', 1250.00), (2, 'Bob Smith', 'Canada', 850.50);
		SELECT country, COUNT(*), SUM(total) FROM customers GROUP BY country ORDER BY country;`)
	if err != nil {
		t.Fatalf("mysql client: %v\n%s", err, out)
	}
	want := `+---------+----------+------------+
| country | COUNT(*) | SUM(total) |
+---------+----------+------------+
| Canada  |        1 |      850.5 |
| USA     |        1 |       1250 |
+---------+----------+------------+`
	if strings.TrimSpace(out) != want {
		t.Errorf("mysql client printed\n%s\nwant\n%s", out, want)
	}

	// The table is real Iceberg: metadata, manifest list, manifest, Parquet.
	for _, pattern := range []string{"metadata/v*.metadata.json", "metadata/snap-*.avro", "metadata/*-m*.avro", "data/*.parquet"} {
		matches, _ := filepath.Glob(filepath.Join(dir, "tutorial", "customers", pattern))
		if len(matches) == 0 {
			t.Errorf("no %s under the table folder", pattern)
		}
	}

	// Errors reach the client with their MySQL codes.
	out, err = mysqlClient(t, addr, []string{"-u", "root"}, "SELECT * FROM tutorial.nope")
	if err == nil || !strings.Contains(out, "ERROR 1146") {
		t.Errorf("unknown table: got %v\n%s\nwant ERROR 1146", err, out)
	}
	out, err = mysqlClient(t, addr, []string{"-u", "root"}, "SELECT * FROM icesql.tutorial.customers WHERE customer_id = 2")
	if err != nil || !strings.Contains(out, "Bob Smith") {
		t.Errorf("three-part name: got %v\n%s", err, out)
	}
}

// TestMySQLClientPrepare: the mysql client (MariaDB's client library)
// reads an OK packet's info as a length-prefixed string; vitess wrote a '#'
// before it, which the library took as a length of 35, and every PREPARE
// ("Statement prepared") failed with ERROR 2027 Received malformed packet.
// icesql sends no info that short.
// The EXECUTEs bind a DECIMAL variable, compared exactly (MariaDB's answers).
func TestMySQLClientPrepare(t *testing.T) {
	bin := buildBinary(t)
	addr := freeAddr(t)
	startServer(t, bin, "--warehouse", t.TempDir(), "--addr", addr)

	out, err := mysqlClient(t, addr, []string{"-u", "root", "-vv"}, `
		CREATE DATABASE d; USE d;
		CREATE TABLE t (id INT, d DECIMAL(18,2));
		INSERT INTO t VALUES (1, 2.50), (2, 0.50);
		PREPARE s FROM 'SELECT id FROM t WHERE d > ? ORDER BY id';
		SET @p = 2.499; EXECUTE s USING @p;
		SET @p = 2.5; EXECUTE s USING @p;
		DEALLOCATE PREPARE s;
		UPDATE t SET d = 0.75 WHERE id = 2;`)
	if err != nil {
		t.Fatalf("mysql client: %v\n%s", err, out)
	}
	for _, want := range []string{
		"ORDER BY id'\n--------------\n\nQuery OK, 0 rows affected",
		"| id   |\n+------+\n|    1 |\n+------+\n1 row in set",
		"Empty set",
		"Rows matched: 1  Changed: 1  Warnings: 0",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("mysql client printed\n%s\nwant it to hold\n%s", out, want)
		}
	}
}

func TestServerRequiresPasswordWhenConfigured(t *testing.T) {
	bin := buildBinary(t)
	addr := freeAddr(t)
	startServer(t, bin, "--warehouse", t.TempDir(), "--addr", addr, "--user", "alice", "--password", "s3cret")

	out, err := mysqlClient(t, addr, []string{"-u", "alice", "-ps3cret"}, "CREATE DATABASE d; CREATE TABLE d.t (a INT); INSERT INTO d.t VALUES (7); SELECT a FROM d.t")
	if err != nil || !strings.Contains(out, "7") {
		t.Fatalf("login with password: %v\n%s", err, out)
	}
	out, err = mysqlClient(t, addr, []string{"-u", "alice", "-pwrong"}, "SELECT 1")
	if err == nil || !strings.Contains(out, "1045") {
		t.Errorf("wrong password: got %v\n%s\nwant ERROR 1045", err, out)
	}
}

func TestServeRefusesOpenAddressWithoutLogin(t *testing.T) {
	bin := buildBinary(t)
	out, err := exec.Command(bin, "serve", "--warehouse", t.TempDir(), "--addr", "0.0.0.0:0").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "--user and --password") {
		t.Errorf("serve on 0.0.0.0 without a user: %v\n%s", err, out)
	}
}

func TestSQLCommand(t *testing.T) {
	bin := buildBinary(t)
	dir := t.TempDir()
	run := func(args ...string) (string, error) {
		out, err := exec.Command(bin, append([]string{"sql", "--warehouse", dir}, args...)...).CombinedOutput()
		return string(out), err
	}
	out, err := run("-e", "CREATE DATABASE db; CREATE TABLE db.t (id BIGINT, s STRING); INSERT INTO db.t VALUES (1, 'a;b'), (2, NULL); SELECT * FROM db.t ORDER BY id")
	if err != nil {
		t.Fatalf("icesql sql: %v\n%s", err, out)
	}
	if !strings.Contains(out, "|  1 | a;b  |") || !strings.Contains(out, "|  2 | NULL |") || !strings.Contains(out, "2 rows in set") {
		t.Errorf("icesql sql -e printed:\n%s", out)
	}
	// An empty string is printed empty, not as NULL (it was: database/sql
	// scans "" into a nil RawBytes when the destination starts nil).
	out, err = run("-e", "SELECT '' AS e, NULL AS n, SUBSTRING('abc', 0) AS s")
	if err != nil || !strings.Contains(out, "| e | n    | s |") || !strings.Contains(out, "|   | NULL |   |") {
		t.Errorf("icesql sql -e printed '' and NULL as:\n%s", out)
	}
	out, err = run("-e", "SELECT * FROM db.missing")
	if err == nil || !strings.Contains(out, "ERROR 1146") {
		t.Errorf("error exit: %v\n%s", err, out)
	}

	// The interactive shell reads statements across lines from stdin.
	cmd := exec.Command(bin, "sql", "--warehouse", dir)
	cmd.Stdin = strings.NewReader("SELECT COUNT(*)\n  FROM db.t;\nexit\n")
	b, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(b), "|        2 |") {
		t.Errorf("shell: %v\n%s", err, b)
	}

	b, err = exec.Command(bin, "version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(b), "icesql ") {
		t.Errorf("version: %v %s", err, b)
	}
}

// TestTwoProcessesOnOneBucket runs two icesql processes that insert into one
// table of an s3:// warehouse at the same time: every insert must land,
// because commits are conditional writes.
func TestTwoProcessesOnOneBucket(t *testing.T) {
	bin := buildBinary(t)
	endpoint := s3test.StartServer(t)
	root := s3test.NewBucket(t, endpoint)
	run := func(statements string) (string, error) {
		cmd := exec.Command(bin, "sql", "--warehouse", root, "--s3-endpoint", endpoint, "--s3-path-style", "-e", statements)
		cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID="+s3test.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY="+s3test.SecretAccessKey, "AWS_REGION="+s3test.Region)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run("CREATE DATABASE db; CREATE TABLE db.t (proc INT, i INT)"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	const inserts = 6
	var wg sync.WaitGroup
	for p := range 2 {
		var script strings.Builder
		for i := range inserts {
			fmt.Fprintf(&script, "INSERT INTO db.t VALUES (%d, %d);", p, i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := run(script.String()); err != nil {
				t.Errorf("process %d: %v\n%s", p, err, out)
			}
		}()
	}
	wg.Wait()
	out, err := run("SELECT COUNT(*), COUNT(DISTINCT proc, i) FROM db.t")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if row := strings.Join(strings.Fields(out), " "); !strings.Contains(row, fmt.Sprintf("| %d | %d |", 2*inserts, 2*inserts)) {
		t.Errorf("after two processes inserted %d rows each:\n%s", inserts, out)
	}
}
