package engine_test

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
)

// UPDATE and DELETE find their rows on Arrow batches where the WHERE
// translates to the vector evaluator (vecexec/rowscan_fast.go). Each statement
// below runs in a transaction that is rolled back, once with
// icesql_vectorize ON and once OFF (the row path), and the table must then
// read the same, with the same count of changed rows, in both write modes
// and on files that already have position deletes.

// rowLevelStatements: {t} is the diff table (pushdown_diff_test.go), with
// NULLs, an all-NULL file and integer, decimal, string and date columns.
// vector says whether some conjunct translates.
var rowLevelStatements = []struct {
	sql    string
	vector bool
}{
	{"DELETE FROM {t} WHERE i % 3 = 1", true},
	{"DELETE FROM {t} WHERE i % -4 = -1", true},
	{"DELETE FROM {t} WHERE l % 7 <> 0 AND s IS NOT NULL", true},
	{"UPDATE {t} SET i = i + 1 WHERE NOT (i > 10 AND `dec` < 20)", true},
	{"DELETE FROM {t} WHERE s IN ('', 'k01-a', 'b', NULL)", true},
	{"DELETE FROM {t} WHERE i NOT IN (1, 2, 3)", true},
	{"DELETE FROM {t} WHERE i NOT IN (1, NULL)", true},
	{"DELETE FROM {t} WHERE NOT (i % 2 = 0)", true},
	{"UPDATE {t} SET s = 'x' WHERE dt >= '2024-01-20' AND dt < DATE '2024-03-01'", true},
	{"DELETE FROM {t} WHERE `dec` * 2 > i + 1", true},
	{"UPDATE {t} d SET l = l * 2 WHERE d.i % 4 = 3", true},
	{"DELETE FROM {t} WHERE l % 1000 = 7 OR i IS NULL", true},
	{"UPDATE {t} SET rid = rid + 1000, dt = NULL WHERE rid % 9 = 2 AND `dec` IS NOT NULL", true},
	// Mixed: the translated conjunct narrows, the rest runs on rows.
	{"DELETE FROM {t} WHERE i % 2 = 0 AND rid IN (SELECT k FROM ks)", true},
	{"DELETE FROM {t} WHERE i % 2 = 0 AND UPPER(s) LIKE 'K0%'", true},
	{"DELETE FROM {t} WHERE f > 0.5 AND i % 2 = 1", true},
	// Nothing translates: the row path alone.
	{"DELETE FROM {t} WHERE i % 0 = 1 OR i % 0 IS NULL AND rid < 30", false},
	{"DELETE FROM {t} WHERE i % l = 0", false},
	{"DELETE FROM {t} WHERE rid IN (SELECT k FROM ks) OR i > 30", false},
	{"UPDATE {t} SET s = 'y' WHERE f < 0.25", false},
}

func TestRowLevelVectorPathMatchesRowPath(t *testing.T) {
	e, conn, _ := openCounting(t)
	mustExec(t, conn, "CREATE DATABASE db", "USE db",
		"CREATE TABLE ks (k BIGINT)", "INSERT INTO ks VALUES (3), (4), (40), (41), (42), (NULL), (200), (201), (202), (203)")
	createDiffTable(t, e, "diff", false)
	run := func(mode string) {
		for _, st := range rowLevelStatements {
			q := strings.ReplaceAll(st.sql, "{t}", "diff")
			before := engine.PickedBatches()
			want, wantN, wantErr := changedTable(t, conn, q, false)
			if engine.PickedBatches() != before {
				t.Errorf("%s: the vector path ran with icesql_vectorize OFF", q)
			}
			got, gotN, gotErr := changedTable(t, conn, q, true)
			picked := engine.PickedBatches() != before
			if (gotErr != nil) != (wantErr != nil) {
				t.Errorf("%s (%s): error %v, row path %v", q, mode, gotErr, wantErr)
				continue
			}
			if got != want || gotN != wantN {
				t.Errorf("%s (%s): %d rows changed, row path %d; table:\n%s\nrow path:\n%s", q, mode, gotN, wantN, got, want)
			}
			if picked != st.vector {
				t.Errorf("%s (%s): vector path ran: %v, want %v", q, mode, picked, st.vector)
			}
		}
	}
	run("copy-on-write")
	mustExec(t, conn, "ALTER TABLE diff SET TBLPROPERTIES ('write.delete.mode' = 'merge-on-read', 'write.update.mode' = 'merge-on-read')",
		"DELETE FROM diff WHERE rid % 5 = 0", "UPDATE diff SET l = -l WHERE rid % 7 = 3")
	run("merge-on-read, files with position deletes")
}

// changedTable runs q in a transaction and returns the table's rows and
// how many q changed, then rolls back.
func changedTable(t *testing.T, conn *sql.Conn, q string, vectorize bool) (string, int64, error) {
	t.Helper()
	mustExec(t, conn, "SET icesql_vectorize = "+map[bool]string{true: "ON", false: "OFF"}[vectorize], "BEGIN")
	defer mustExec(t, conn, "ROLLBACK", "SET icesql_vectorize = ON")
	res, err := conn.ExecContext(context.Background(), q)
	if err != nil {
		return "", 0, err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return "", 0, err
	}
	rows, err := resultRows(conn, "SELECT * FROM diff")
	return rows, n, err
}
