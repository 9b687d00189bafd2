package sqltests

import (
	gosql "database/sql"
	"testing"
)

// TestInsertOverwriteWithArguments: INSERT OVERWRITE with ? arguments through
// the in-process driver, run twice, overwrites each time. (Server-side
// prepares over the wire cannot take Spark syntax at all: the vitess
// connection parses COM_STMT_PREPARE text with the MySQL grammar itself,
// before icesql's parser sees it.)
func TestInsertOverwriteWithArguments(t *testing.T) {
	e := openEngine(t)
	conn := pinnedConn(t, gosql.OpenDB(e.Connector()))
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT, region STRING) PARTITIONED BY (region)")
	mustExec(t, conn, "INSERT INTO d.t VALUES (1, 'eu'), (2, 'us')")
	for _, id := range []int{3, 4} {
		if _, err := conn.ExecContext(t.Context(), "INSERT OVERWRITE d.t PARTITION (region = 'eu') SELECT ?", id); err != nil {
			t.Fatalf("overwrite with %d: %v", id, err)
		}
		var n, eu int
		if err := conn.QueryRowContext(t.Context(), "SELECT COUNT(*), SUM(CASE WHEN region = 'eu' THEN id END) FROM d.t").Scan(&n, &eu); err != nil {
			t.Fatal(err)
		}
		if n != 2 || eu != id {
			t.Errorf("after overwrite with %d: %d rows, eu id %d; want 2 rows, eu id %d", id, n, eu, id)
		}
	}
}
