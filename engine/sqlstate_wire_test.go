package engine

import (
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// TestWireSQLStates checks that a client receives MySQL's SQLSTATE with
// each common error code: drivers and ORMs branch on the state
// (go-mysql-server sent 1146 with HY000).
func TestWireSQLStates(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{})
	db := dial(t, srv, "root", "")
	mustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT NOT NULL, name STRING)",
	)
	for _, c := range []struct {
		sql   string
		code  uint16
		state string
	}{
		{"SELECT * FROM d.nope", 1146, "42S02"},
		{"INSERT INTO d.nope VALUES (1)", 1146, "42S02"},
		{"SELECT nocol FROM d.t", 1054, "42S22"},
		{"SELECT id FROM d.t ORDER BY nocol", 1054, "42S22"},
		{"SELEC 1", 1064, "42000"},
		{"SELECT * FROM d.t WHERE", 1064, "42000"},
		{"USE nodb", 1049, "42000"},
		{"SELECT * FROM nodb.t", 1049, "42000"},
		{"CREATE TABLE d.t (x INT)", 1050, "42S01"},
		{"INSERT INTO d.t VALUES (NULL, 'x')", 1048, "23000"},
		{"DROP TABLE d.nope", 1051, "42S02"},
		{"SELECT 9223372036854775807 + 1", 1690, "22003"},
	} {
		_, err := db.Exec(c.sql)
		wantCode(t, c.sql, err, c.code, c.state)
	}
}

// TestSQLStatesOfCodedKinds covers the codes no statement reaches on
// Iceberg tables (keys and foreign keys are not enforced): the error kinds
// go-mysql-server codes itself still reach clients with MySQL's SQLSTATE.
func TestSQLStatesOfCodedKinds(t *testing.T) {
	for _, c := range []struct {
		err   error
		code  int
		state string
	}{
		{sql.ErrPrimaryKeyViolation.New("[1]"), 1062, "23000"},
		{sql.ErrUniqueKeyViolation.New("[1]"), 1062, "23000"},
		{sql.ErrForeignKeyChildViolation.New("fk", "c", "p", "(1)"), 1452, "23000"},
		{sql.ErrForeignKeyParentViolation.New("fk", "c", "p", "(1)"), 1451, "23000"},
		{sql.ErrInsertIntoNonNullableProvidedNull.New("id"), 1048, "23000"},
		{sql.ErrTableNotFound.New("nope"), 1146, "42S02"},
		{sql.ErrDatabaseNotFound.New("nodb"), 1049, "42000"},
	} {
		se := mysqlerr.Coded(c.err)
		if se.Num != c.code || se.State != c.state {
			t.Errorf("%v: got %d %s, want %d %s", c.err, se.Num, se.State, c.code, c.state)
		}
	}
}

// TestWireCoalesceFloatType checks the column type a client receives for
// COALESCE over a FLOAT column: MySQL's DOUBLE (go-mysql-server sent
// LONGTEXT, and clients sorted and compared the values as text).
func TestWireCoalesceFloatType(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{})
	db := dial(t, srv, "root", "")
	mustExec(t, db,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (f FLOAT, x DOUBLE)",
		"INSERT INTO d.t VALUES (3.5, NULL), (NULL, 2.5)",
	)
	rows, err := db.Query("SELECT COALESCE(f, 0), COALESCE(f, 1.5), COALESCE(f, x), COALESCE(f, f) FROM d.t")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.ColumnTypes()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"DOUBLE", "DOUBLE", "DOUBLE", "FLOAT"} {
		if got := cols[i].DatabaseTypeName(); got != want {
			t.Errorf("column %d (%s): type %s, want %s", i, cols[i].Name(), got, want)
		}
	}
}
