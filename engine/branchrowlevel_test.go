package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"testing"

	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine"
)

// TestBranchRowLevelCommitValidation races a transaction's row-level change
// to branch b against a commit another session makes between the
// transaction's read and its COMMIT: commits to the branch since the read
// are validated like commits to main, commits to main are not the
// branch's and never conflict with it.
func TestBranchRowLevelCommitValidation(t *testing.T) {
	cases := []struct {
		name      string
		props     string
		mine      string // the transaction's statement
		theirs    string // committed by the other session before COMMIT
		conflicts bool
		branch    string // ids and values of the branch after both
		main      string // and of main
	}{
		{"delete racing a delete of the same file on the branch", "",
			"DELETE FROM c.t.branch_b WHERE id = 1", "DELETE FROM c.t.branch_b WHERE id = 2", true,
			"1:0 3:0", "1:0 2:0 3:0"},
		{"delete racing a delete of the same file on main", "",
			"DELETE FROM c.t.branch_b WHERE id = 1", "DELETE FROM c.t WHERE id = 2", false,
			"2:0 3:0", "1:0 3:0"},
		{"merge-on-read updates of the same file on the branch", "'write.update.mode'='merge-on-read'",
			"UPDATE c.t.branch_b SET v = 1 WHERE id = 1", "UPDATE c.t.branch_b SET v = 2 WHERE id = 2", true,
			"1:0 2:2 3:0", "1:0 2:0 3:0"},
		{"insert on the branch a serializable delete may match", "",
			"DELETE FROM c.t.branch_b WHERE id >= 1", "INSERT INTO c.t.branch_b VALUES (5, 0)", true,
			"1:0 2:0 3:0 5:0", "1:0 2:0 3:0"},
		{"insert on main a serializable delete may match", "",
			"DELETE FROM c.t.branch_b WHERE id >= 1", "INSERT INTO c.t VALUES (5, 0)", false,
			"", "1:0 2:0 3:0 5:0"},
		{"insert on the branch racing a delete", "",
			"DELETE FROM c.t.branch_b WHERE id = 1", "INSERT INTO c.t.branch_b VALUES (5, 0)", false,
			"2:0 3:0 5:0", "1:0 2:0 3:0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conn := raceCommit(t, raceSetup(tc.props, "ALTER TABLE c.t CREATE BRANCH b"), []string{tc.mine}, tc.theirs, tc.conflicts)
			if got := idValues(t, conn, "c.t.branch_b"); got != tc.branch {
				t.Errorf("branch rows: got %q, want %q", got, tc.branch)
			}
			if got := idValues(t, conn, "c.t"); got != tc.main {
				t.Errorf("main rows: got %q, want %q", got, tc.main)
			}
		})
	}
}

// raceSetup makes table c.t (id, v) with rows 1..3 (v = 0) and the given
// properties, then runs more.
func raceSetup(props string, more ...string) []string {
	if props != "" {
		props = " TBLPROPERTIES (" + props + ")"
	}
	return append([]string{"CREATE DATABASE c", "CREATE TABLE c.t (id BIGINT, v BIGINT)" + props,
		"INSERT INTO c.t VALUES (1, 0), (2, 0), (3, 0)"}, more...)
}

// raceCommit runs setup, then mine in a transaction while another session
// commits theirs, and checks that COMMIT fails with 1213 exactly when
// conflicts says so: once in-process (database/sql driver) and once over
// the MySQL wire, where the code reaches the client only if no layer
// wrapped the error. It returns the first wire session.
func raceCommit(t *testing.T, setup, mine []string, theirs string, conflicts bool) *sql.Conn {
	t.Helper()
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	me, other := openConnOn(t, e), openConnOn(t, e)
	mustExec(t, me, setup...)
	mustExec(t, me, append([]string{"BEGIN"}, mine...)...)
	mustExec(t, other, theirs)
	_, err := me.ExecContext(context.Background(), "COMMIT")
	var se *mysql.SQLError
	switch {
	case conflicts && !(errors.As(err, &se) && se.Num == mysql.ERLockDeadlock):
		t.Fatalf("COMMIT: want error 1213, got %v", err)
	case !conflicts && err != nil:
		t.Fatalf("COMMIT: %v", err)
	}

	c := wireSessions(t, 2, setup...)
	mustExec(t, c[0], append([]string{"BEGIN"}, mine...)...)
	mustExec(t, c[1], theirs)
	_, err = c[0].ExecContext(context.Background(), "COMMIT")
	switch {
	case conflicts:
		wantDeadlock(t, "COMMIT over the wire", err)
	case err != nil:
		t.Fatalf("COMMIT over the wire: %v", err)
	}
	return c[0]
}

// idValues lists the rows of a table with columns id and v as id:v.
func idValues(t *testing.T, conn *sql.Conn, table string) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SELECT id, v FROM "+table+" ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := ""
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		if out != "" {
			out += " "
		}
		out += fmt.Sprintf("%d:%d", id, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
