package engine

import (
	"errors"
	"testing"

	"github.com/go-sql-driver/mysql"
)

// TestPrepareSyntaxErrors: a statement a client prepares on the server that
// does not parse gets MySQL's 1064 (42000), and one in icesql's Spark or
// Iceberg syntax 1295, where vitess answered both with 1105 "unknown
// error: Code: INVALID_ARGUMENT"; the connection goes on, and statements
// that parse are prepared as before.
func TestPrepareSyntaxErrors(t *testing.T) {
	srv := startWireServer(t, ServerConfig{})
	db := dial(t, srv, "root", "", func(c *mysql.Config) { c.MultiStatements = true })
	if _, err := db.Exec("CREATE DATABASE d"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE d.t (id BIGINT)"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		query string
		code  uint16
		state string
	}{
		{"SELEC 1", 1064, "42000"},
		{"SELECT * FROM d.t WHERE id = ? AND", 1064, "42000"},
		{"SELECT 1; SELECT 2", 1064, "42000"},
		{"ALTER TABLE d.t ADD PARTITION FIELD bucket(16, id)", 1295, "42000"},
		{"SELECT * FROM d.t VERSION AS OF 1", 1295, "42000"},
		{"CALL system.expire_snapshots(table => ?)", 1295, "42000"},
	}
	for _, c := range cases {
		_, err := db.Prepare(c.query)
		var me *mysql.MySQLError
		if !errors.As(err, &me) || me.Number != c.code || string(me.SQLState[:]) != c.state {
			t.Errorf("prepare %q: want error %d (%s), got %v", c.query, c.code, c.state, err)
			continue
		}
		t.Logf("prepare %q: %v", c.query, me)
	}
	stmt, err := db.Prepare("SELECT ? + 1")
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	var n int
	if err := stmt.QueryRow(1).Scan(&n); err != nil || n != 2 {
		t.Fatalf("a statement that parses, after the errors: %d, %v", n, err)
	}
}
