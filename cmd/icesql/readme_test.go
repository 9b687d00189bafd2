package main

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// readmeWalkthroughs are the README sections a newcomer follows step by
// step: TestREADMEWalkthrough runs their steps in this order.
var readmeWalkthroughs = []string{
	"## Five minutes with the mysql client",
	"## Replacing data: INSERT OVERWRITE, REPLACE TABLE, TRUNCATE",
}

// readmeForms are README lines that show a form rather than a step, and
// why they cannot run as written.
var readmeForms = map[string]string{
	"SELECT * FROM sales.events TIMESTAMP AS OF '2024-01-15 12:00:00'":     "a time before the table's first snapshot: it shows the syntax",
	"SELECT * FROM sales.events FOR TIMESTAMP AS OF '2024-01-15 12:00:00'": "a time before the table's first snapshot: it shows the syntax",
}

// readmeSnapshotID is the snapshot id the README prints for sales.events;
// a run makes another, which the statements naming it get instead.
const readmeSnapshotID = "5820304987688267740"

// TestREADMEWalkthrough runs the README's walk-through sections as a
// newcomer would, in order, on one warehouse and one connection: the shell
// steps (`$ printf ... > file`, `$ go run ./cmd/icesql import ...`) as
// commands, every `mysql>` statement as written. A statement that fails
// fails the test, naming it; a shell step of a kind the test does not know
// fails it too, so the README cannot grow steps nobody ran.
func TestREADMEWalkthrough(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	t.Chdir(dir)
	elsewhere := filepath.Join(dir, "elsewhere")
	e, err := engine.Open(context.Background(), engine.Config{Warehouse: filepath.Join(dir, "warehouse")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	exec1 := func(stmt string) {
		if why, ok := readmeForms[stmt]; ok {
			t.Logf("not run (%s): %s", why, stmt)
			return
		}
		stmt = strings.ReplaceAll(stmt, "/tmp/elsewhere", elsewhere)
		if strings.Contains(stmt, readmeSnapshotID) {
			var id string
			if err := conn.QueryRowContext(ctx, "SELECT snapshot_id FROM sales.events.snapshots").Scan(&id); err != nil {
				t.Fatalf("snapshot of sales.events: %v", err)
			}
			stmt = strings.ReplaceAll(stmt, readmeSnapshotID, id)
		}
		rows, err := conn.QueryContext(ctx, stmt)
		if err != nil {
			t.Fatalf("README statement failed: %s\n%v", stmt, err)
		}
		for rows.Next() {
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("README statement failed: %s\n%v", stmt, err)
		}
		rows.Close()
	}
	shell := func(cmd string) {
		switch {
		case strings.HasPrefix(cmd, "mysql "), strings.HasPrefix(cmd, "find "):
			// connecting, and looking at the files: nothing to do
		case strings.HasPrefix(cmd, "printf "):
			if out, err := exec.Command("bash", "-c", cmd).CombinedOutput(); err != nil {
				t.Fatalf("README step failed: %s\n%v %s", cmd, err, out)
			}
		case strings.HasPrefix(cmd, "go run ./cmd/icesql "):
			args := strings.Fields(strings.ReplaceAll(strings.TrimPrefix(cmd, "go run ./cmd/icesql "), "/tmp/elsewhere", elsewhere))
			var out bytes.Buffer
			if err := run(args, strings.NewReader(""), &out, &out); err != nil {
				t.Fatalf("README step failed: %s\n%v %s", cmd, err, out.String())
			}
		default:
			t.Fatalf("README shell step of a kind this test does not run: %s", cmd)
		}
	}

	steps := 0
	for _, heading := range readmeWalkthroughs {
		section := readmeSection(t, string(readme), heading)
		for _, step := range readmeSteps(section) {
			steps++
			if cmd, ok := strings.CutPrefix(step, "$ "); ok {
				shell(cmd)
			} else {
				exec1(step)
			}
		}
	}
	t.Logf("ran %d README steps", steps)
	if steps < 20 {
		t.Fatalf("found %d steps in the README's walk-throughs: the parser lost them", steps)
	}
	// The walk-through ends with what it built.
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM tutorial.orders").Scan(&n); err != nil || n != 1000 {
		t.Errorf("tutorial.orders holds %d rows (%v), want 1000", n, err)
	}
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM sales.daily").Scan(&n); err != nil || n != 3 {
		t.Errorf("sales.daily holds %d rows (%v), want 3", n, err)
	}
}

// readmeSection is the README's text from heading to the next heading of
// its level.
func readmeSection(t *testing.T, readme, heading string) string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no section %q", heading)
	}
	rest := readme[i+len(heading)+2:]
	if j := strings.Index(rest, "\n## "); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// trailingComment is a statement's end followed by a comment.
var trailingComment = regexp.MustCompile(`;\s*--.*$`)

// readmeSteps lists the steps of a section's plain code blocks (those
// without a language): `mysql>` statements, joined with their continuation
// lines and without the final semicolon, and `$` shell commands. Other
// lines are output.
func readmeSteps(section string) []string {
	var steps []string
	inBlock, plain := false, false
	var stmt []string
	for _, line := range strings.Split(section, "\n") {
		if strings.HasPrefix(line, "```") {
			inBlock = !inBlock
			plain = inBlock && strings.TrimSpace(line) == "```"
			continue
		}
		if !inBlock || !plain {
			continue
		}
		switch {
		case stmt != nil && strings.HasPrefix(line, "       "):
			stmt = append(stmt, strings.TrimSpace(line))
		case strings.HasPrefix(line, "mysql> "):
			stmt = []string{strings.TrimPrefix(line, "mysql> ")}
		case strings.HasPrefix(line, "$ "):
			steps = append(steps, line)
			continue
		default:
			continue
		}
		text := strings.TrimSpace(trailingComment.ReplaceAllString(strings.Join(stmt, " "), ";"))
		if strings.HasSuffix(text, ";") {
			steps = append(steps, strings.TrimSuffix(text, ";"))
			stmt = nil
		}
	}
	return steps
}
