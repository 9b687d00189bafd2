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

// TestRowLevelCommitValidation races a transaction's row-level change
// against a commit made by another session between the transaction's read
// and its COMMIT, deterministically: which races conflict (1213, nothing
// of the transaction committed) and which both succeed.
func TestRowLevelCommitValidation(t *testing.T) {
	cases := []struct {
		name      string
		props     string
		mine      string // the transaction's statement
		theirs    string // committed by the other session before COMMIT
		conflicts bool
		want      string // ids and values after both
	}{
		{"insert racing a delete", "", "DELETE FROM c.t WHERE id = 1", "INSERT INTO c.t VALUES (5, 0)", false, "2:0 3:0 5:0"},
		{"delete racing a delete of the same file", "", "DELETE FROM c.t WHERE id = 1", "DELETE FROM c.t WHERE id = 2", true, "1:0 3:0"},
		{"update racing an update of the same row", "", "UPDATE c.t SET v = 1 WHERE id = 1", "UPDATE c.t SET v = 2 WHERE id = 1", true, "1:2 2:0 3:0"},
		{"merge-on-read updates of the same file", "'write.update.mode'='merge-on-read'", "UPDATE c.t SET v = 1 WHERE id = 1", "UPDATE c.t SET v = 2 WHERE id = 2", true, "1:0 2:2 3:0"},
		{"insert a serializable delete may match", "", "DELETE FROM c.t WHERE id >= 1", "INSERT INTO c.t VALUES (5, 0)", true, "1:0 2:0 3:0 5:0"},
		{"the same under snapshot isolation", "'write.delete.isolation-level'='snapshot'", "DELETE FROM c.t WHERE id >= 1", "INSERT INTO c.t VALUES (5, 0)", false, "5:0"},
		{"v3: deletion vectors of the same file", "'format-version'='3', 'write.delete.mode'='merge-on-read'", "DELETE FROM c.t WHERE id = 1", "DELETE FROM c.t WHERE id = 2", true, "1:0 3:0"},
		{"v3: insert racing a merge-on-read delete", "'format-version'='3', 'write.delete.mode'='merge-on-read'", "DELETE FROM c.t WHERE id = 1", "INSERT INTO c.t VALUES (5, 0)", false, "2:0 3:0 5:0"},
		{"v3: copy-on-write changes of the same file", "'format-version'='3'", "UPDATE c.t SET v = 1 WHERE id = 1", "DELETE FROM c.t WHERE id = 3", true, "1:0 2:0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			db := sql.OpenDB(e.Connector())
			defer db.Close()
			mine, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer mine.Close()
			theirs, err := db.Conn(ctx)
			if err != nil {
				t.Fatal(err)
			}
			defer theirs.Close()
			props := ""
			if tc.props != "" {
				props = " TBLPROPERTIES (" + tc.props + ")"
			}
			mustExec(t, mine, "CREATE DATABASE c", "CREATE TABLE c.t (id BIGINT, v BIGINT)"+props,
				"INSERT INTO c.t VALUES (1, 0), (2, 0), (3, 0)",
				"BEGIN", tc.mine)
			mustExec(t, theirs, tc.theirs)
			_, err = mine.ExecContext(ctx, "COMMIT")
			var se *mysql.SQLError
			switch {
			case tc.conflicts && !(errors.As(err, &se) && se.Num == mysql.ERLockDeadlock):
				t.Fatalf("COMMIT: want error 1213, got %v", err)
			case !tc.conflicts && err != nil:
				t.Fatalf("COMMIT: %v", err)
			}
			if got := rowsOf(t, mine); got != tc.want {
				t.Errorf("rows: got %s, want %s", got, tc.want)
			}
		})
	}
}

func rowsOf(t *testing.T, conn *sql.Conn) string {
	t.Helper()
	rows, err := conn.QueryContext(context.Background(), "SELECT id, v FROM c.t ORDER BY id")
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
	return out
}
