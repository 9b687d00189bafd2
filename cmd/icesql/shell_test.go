package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// runShell runs `icesql sql` on dir with stdin and returns stdout, stderr
// and the exit status.
func runShell(t *testing.T, dir, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(buildBinary(t), append([]string{"sql", "--warehouse", dir}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// TestShellScript: a piped script stops at its first error, with the error
// and its line on stderr and exit status 1; --force goes on; \G prints rows
// vertically; a statement that starts with a comment prints its rows.
func TestShellScript(t *testing.T) {
	dir := t.TempDir()
	setup := "CREATE DATABASE d;\nCREATE TABLE d.t (id INT, s STRING);\nINSERT INTO d.t VALUES (1, 'a'), (2, NULL);\n"
	if out, errOut, code := runShell(t, dir, setup); code != 0 || errOut != "" {
		t.Fatalf("setup: exit %d\n%s%s", code, out, errOut)
	}

	script := "SELECT 1 AS first;\nSELECT * FROM\n  d.nope;\nINSERT INTO d.t VALUES (3, 'c');\n"
	out, errOut, code := runShell(t, dir, script)
	if code != 1 || strings.TrimSpace(errOut) != "ERROR 1146 (42S02) at line 3: table not found: nope" {
		t.Errorf("script with an error: exit %d, stderr %q; want 1 and the error at line 3", code, errOut)
	}
	if !strings.Contains(out, "| first |") || strings.Contains(out, "Query OK") {
		t.Errorf("script with an error: stdout\n%s\nwant the first result and nothing after the error", out)
	}
	out, errOut, code = runShell(t, dir, script, "--force")
	if code != 1 || !strings.Contains(errOut, "ERROR 1146") || !strings.Contains(out, "Query OK, 1 row affected") {
		t.Errorf("--force: exit %d\n%s%s\nwant the insert after the error to run, and exit status 1", code, out, errOut)
	}
	out, errOut, code = runShell(t, dir, "", "-e", "SELECT * FROM d.nope; DELETE FROM d.t WHERE id = 3", "--force")
	if code != 1 || !strings.Contains(errOut, "ERROR 1146") || !strings.Contains(out, "Query OK, 1 row affected") {
		t.Errorf("-e --force: exit %d\n%s%s", code, out, errOut)
	}

	out, errOut, code = runShell(t, dir, "-- rows, please\nSELECT id FROM d.t ORDER BY id;\n/* two */ # and more\nSELECT COUNT(*) AS n FROM d.t;\n"+
		"SELECT id, s AS longer_name FROM d.t ORDER BY id\\G\nSELECT 7 AS seven\\g\n")
	want := `+----+
| id |
+----+
|  1 |
|  2 |
+----+
2 rows in set
+---+
| n |
+---+
| 2 |
+---+
1 row in set
*************************** 1. row ***************************
         id: 1
longer_name: a
*************************** 2. row ***************************
         id: 2
longer_name: NULL
2 rows in set
+-------+
| seven |
+-------+
|     7 |
+-------+
1 row in set
`
	if code != 0 || errOut != "" || out != want {
		t.Errorf("comments, \\G and \\g: exit %d, stderr %q, stdout\n%s\nwant\n%s", code, errOut, out, want)
	}
	// Table maintenance statements answer with a table, which the shell prints.
	out, errOut, code = runShell(t, dir, "USE d;\nCHECKSUM TABLE t;\n")
	if code != 0 || errOut != "" || !strings.Contains(out, "| Table | Checksum") || !strings.Contains(out, "1 row in set") {
		t.Errorf("CHECKSUM TABLE: exit %d, stderr %q, stdout\n%s\nwant its row", code, errOut, out)
	}
}

// TestShellInterrupt: Ctrl-C (SIGINT) cancels the running statement, not the
// shell: the statement fails with error 1317 and, with --force, the script
// goes on.
func TestShellInterrupt(t *testing.T) {
	cmd := exec.Command(buildBinary(t), "sql", "--warehouse", t.TempDir(), "--force")
	cmd.Stdin = strings.NewReader("SELECT SLEEP(60);\nSELECT 5 AS after;\n")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(3 * time.Second) // the engine opens and SLEEP starts
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("exit: %v, want status 1 (a statement failed)", err)
	}
	if took := time.Since(start); took > 30*time.Second {
		t.Errorf("the shell took %s after Ctrl-C: the statement was not cancelled", took)
	}
	if !strings.Contains(stderr.String(), "ERROR 1317 (70100) at line 1: Query execution was interrupted") || !strings.Contains(stdout.String(), "| after |") {
		t.Errorf("after Ctrl-C:\nstdout\n%s\nstderr\n%s", stdout.String(), stderr.String())
	}
}
