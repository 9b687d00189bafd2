package planner

import (
	"context"
	"errors"
	"testing"

	sqle "github.com/dolthub/go-mysql-server"
	"github.com/dolthub/go-mysql-server/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/planbuilder"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestParseMulti walks a multi-statement string the way go-mysql-server's
// handler does: parse, run, continue with the remainder.
func TestParseMulti(t *testing.T) {
	query := "CREATE NAMESPACE icesql.a; USE icesql.a ;\n" +
		"CREATE TABLE t (s STRING) USING iceberg; SELECT 'x; y' FROM icesql.a.t;"
	want := []struct{ parsed, remainder string }{
		{"CREATE DATABASE a", " USE icesql.a ;\nCREATE TABLE t (s STRING) USING iceberg; SELECT 'x; y' FROM icesql.a.t"},
		{"USE a", "\nCREATE TABLE t (s STRING) USING iceberg; SELECT 'x; y' FROM icesql.a.t"},
		{"CREATE TABLE t (s LONGTEXT)", " SELECT 'x; y' FROM icesql.a.t"},
		{"SELECT 'x; y' FROM a.t", ""},
	}
	p := NewParser("icesql")
	for i, w := range want {
		stmt, parsed, remainder, err := p.ParseWithOptions(context.Background(), query, ';', true, ast.ParserOptions{})
		if err != nil || stmt == nil {
			t.Fatalf("statement %d: %v", i, err)
		}
		if parsed != w.parsed || remainder != w.remainder {
			t.Errorf("statement %d:\n got parsed %q remainder %q\nwant parsed %q remainder %q", i, parsed, remainder, w.parsed, w.remainder)
		}
		query = remainder
	}
}

// TestParseMultiMatchesMySQL checks that for MySQL statements the Parser
// returns what sql.MysqlParser returns.
func TestParseMultiMatchesMySQL(t *testing.T) {
	for _, q := range []string{
		"SELECT 1; SELECT 2",
		"SELECT 1;",
		"  SELECT 1 ;  \n SELECT 2 ;; ",
		"SELECT 1 -- c\n; SELECT 2",
		"BEGIN; SELECT 1",
		"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END; SELECT 3",
		"-- only a comment",
		"-- a comment\n; SELECT 1",
		"; SELECT 1",
	} {
		for _, multi := range []bool{false, true} {
			wantStmt, wantParsed, wantRest, wantErr := sql.NewMysqlParser().ParseWithOptions(context.Background(), q, ';', multi, ast.ParserOptions{})
			gotStmt, gotParsed, gotRest, gotErr := NewParser("icesql").ParseWithOptions(context.Background(), q, ';', multi, ast.ParserOptions{})
			if ast.String(gotStmt) != ast.String(wantStmt) || gotParsed != wantParsed || gotRest != wantRest || errString(gotErr) != errString(wantErr) {
				t.Errorf("ParseWithOptions(%q, multi=%v):\n got %q %q %q %v\nwant %q %q %q %v", q, multi,
					ast.String(gotStmt), gotParsed, gotRest, gotErr, ast.String(wantStmt), wantParsed, wantRest, wantErr)
			}
		}
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestParseOneWithOptions(t *testing.T) {
	tests := []struct {
		query string
		next  int
		want  string
	}{
		{"CREATE NAMESPACE icesql.a; SELECT 1", len("CREATE NAMESPACE icesql.a;"), "create database a"},
		{"SELECT * FROM icesql.db.t", len("SELECT * FROM icesql.db.t"), "select * from db.t"},
		// A procedure body holds ';'. Every part of it is rewritten, and the
		// next statement starts after the whole procedure in the original.
		{
			"CREATE PROCEDURE p() BEGIN INSERT INTO icesql.db.t VALUES (1); SELECT * FROM icesql.db.t; END; SELECT 1",
			len("CREATE PROCEDURE p() BEGIN INSERT INTO icesql.db.t VALUES (1); SELECT * FROM icesql.db.t; END;"),
			"create procedure p () begin\ninsert into db.t values (1);\nselect * from db.t;\nend",
		},
	}
	for _, tt := range tests {
		stmt, next, err := NewParser("icesql").ParseOneWithOptions(context.Background(), tt.query, ast.ParserOptions{})
		if err != nil {
			t.Errorf("ParseOneWithOptions(%q): %v", tt.query, err)
			continue
		}
		if next != tt.next || ast.String(stmt) != tt.want {
			t.Errorf("ParseOneWithOptions(%q) = %q, %d; want %q, %d", tt.query, ast.String(stmt), next, tt.want, tt.next)
		}
	}
}

func TestParseSimple(t *testing.T) {
	stmt, err := NewParser("icesql").ParseSimple("CREATE NAMESPACE icesql.tutorial")
	if err != nil || ast.String(stmt) != "create database tutorial" {
		t.Errorf("got %s, %v", ast.String(stmt), err)
	}
	if _, err := NewParser("icesql").ParseSimple("SELECT 1; SELECT 2"); err == nil {
		t.Error("ParseSimple accepted two statements")
	}
}

func TestParseWithSessionMode(t *testing.T) {
	stmt, parsed, rest, err := NewParser("icesql").Parse(sql.NewEmptyContext(), "SHOW NAMESPACES; SELECT 1", true)
	if err != nil || ast.String(stmt) != "show databases" || parsed != "SHOW DATABASES" || rest != " SELECT 1" {
		t.Errorf("got %s, %q, %q, %v", ast.String(stmt), parsed, rest, err)
	}
}

func TestParseAnsiQuotes(t *testing.T) {
	opts := ast.ParserOptions{AnsiQuotes: true}
	_, parsed, _, err := NewParser("icesql").ParseWithOptions(context.Background(), `SELECT * FROM "icesql"."db"."t"`, ';', false, opts)
	if err != nil || parsed != `SELECT * FROM "db"."t"` {
		t.Errorf("got %q, %v", parsed, err)
	}
}

// TestSyntaxErrors checks that syntax errors are errors: the MySQL parser's
// own for MySQL statements, and a message naming the token and what was
// expected for Spark clauses.
func TestSyntaxErrors(t *testing.T) {
	tests := []struct{ query, want string }{
		{"SELEC 1", ""}, // "": the MySQL parser's error
		{"SELECT * FROM t WHERE", ""},
		{"CREATE TABLE t (id INT) TBLPROPERTIES ('k')", "syntax error near ')': TBLPROPERTIES expects 'key' = 'value' pairs"},
		{"CREATE TABLE t (id INT) TBLPROPERTIES ('k' = v)", "syntax error near 'v': a TBLPROPERTIES value is a string, a number or a boolean"},
		{"CREATE TABLE t (id INT) TBLPROPERTIES ('k' = '1', 'k' = '2')", "syntax error near ''k'': duplicate TBLPROPERTIES key 'k'"},
		{"CREATE TABLE t (id INT) TBLPROPERTIES ('k' = '1'", "syntax error near end of statement: TBLPROPERTIES list is not closed"},
		{"CREATE TABLE t (id INT) PARTITIONED BY id", "syntax error near 'id': PARTITIONED BY expects a parenthesized list"},
		{"CREATE TABLE t (id INT) PARTITIONED BY (id,)", "syntax error near ')': empty PARTITIONED BY term"},
		{"CREATE TABLE t (id INT) PARTITIONED BY (id) PARTITIONED BY (id)", "syntax error near 'PARTITIONED': duplicate PARTITIONED BY clause"},
		{"CREATE TABLE t (id INT) TBLPROPERTIES ('k' = 1 2)", "syntax error near '2': a TBLPROPERTIES value is a string, a number or a boolean"},
		{"CREATE TABLE t (id INT) LOCATION here", "syntax error near 'here': LOCATION expects a string"},
		// Spark clauses icesql does not know stay, for the MySQL parser to refuse.
		{"CREATE TABLE t (id INT) USING iceberg OPTIONS ('a' = 'b')", "syntax error at position 32 near 'OPTIONS'"},
	}
	for _, tt := range tests {
		want := tt.want
		if want == "" {
			_, _, _, err := sql.NewMysqlParser().ParseWithOptions(context.Background(), tt.query, ';', false, ast.ParserOptions{})
			if err == nil {
				t.Fatalf("MySQL parser accepts %q", tt.query)
			}
			want = err.Error()
		}
		for _, multi := range []bool{false, true} {
			stmt, _, _, err := NewParser("icesql").ParseWithOptions(context.Background(), tt.query, ';', multi, ast.ParserOptions{})
			if err == nil || err.Error() != want {
				t.Errorf("ParseWithOptions(%q, multi=%v) = %s, %v; want error %q", tt.query, multi, ast.String(stmt), err, want)
			}
		}
	}
}

// TestRejections checks the statements icesql refuses with a MySQL error
// code: they parse to a statement that fails with that error when bound.
func TestRejections(t *testing.T) {
	tests := []struct {
		query string
		want  *mysql.SQLError
	}{
		{"CREATE TABLE t (id INT) PARTITION BY HASH(id)", errMySQLPartitionBy},
		{"CREATE TABLE t (id INT) ENGINE=InnoDB PARTITION BY RANGE (id) (PARTITION p0 VALUES LESS THAN (10))", errMySQLPartitionBy},
		{"CREATE TABLE t (id INT) /*!50100 PARTITION BY KEY (id) PARTITIONS 4 */", errMySQLPartitionBy},
		{"ALTER TABLE t PARTITION BY HASH(id)", errMySQLPartitionBy},
		{"ALTER TABLE t ADD COLUMN c INT, ALGORITHM=INPLACE PARTITION BY HASH(id)", errMySQLPartitionBy},
		{"ALTER TABLE t DROP PARTITION p0", errMySQLPartitions},
		{"ALTER TABLE t REMOVE PARTITIONING", errMySQLPartitions},
		{"CREATE TABLE t (id INT) USING parquet", notSupported("USING parquet is not supported: icesql tables are Iceberg tables; write USING iceberg or leave the clause out")},
	}
	for _, tt := range tests {
		for _, multi := range []bool{false, true} {
			query, wantRest := tt.query, ""
			if multi {
				query, wantRest = tt.query+"; SELECT 1", " SELECT 1"
			}
			stmt, _, rest, err := NewParser("icesql").ParseWithOptions(context.Background(), query, ';', multi, ast.ParserOptions{})
			if err != nil || rest != wantRest {
				t.Errorf("ParseWithOptions(%q, multi=%v): remainder %q, %v", query, multi, rest, err)
				continue
			}
			got := bindError(stmt)
			var coded *mysql.SQLError
			if !errors.As(got, &coded) || coded.Num != tt.want.Num || coded.State != tt.want.State || coded.Message != tt.want.Message {
				t.Errorf("ParseWithOptions(%q, multi=%v) binds to error %v, want %v", tt.query, multi, got, tt.want)
			}
		}
	}
	if errMySQLPartitionBy.Num != 1235 || errMySQLPartitionBy.State != "42000" {
		t.Errorf("PARTITION BY error is %d (%s), want 1235 (42000)", errMySQLPartitionBy.Num, errMySQLPartitionBy.State)
	}
}

// bindError returns the error a rejected statement fails with, or nil.
func bindError(stmt ast.Statement) error {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return nil
	}
	_, err := inj.Statement.WithResolvedChildren(context.Background(), nil)
	return err
}

// newEngine returns a go-mysql-server engine over an in-memory database db,
// with the Parser installed the way icesql's engine installs it.
func newEngine(t *testing.T) (*sqle.Engine, *sql.Context, *memory.Database) {
	t.Helper()
	db := memory.NewDatabase("db")
	pro := memory.NewDBProvider(db)
	a := analyzer.NewBuilder(pro).AddOverrides(sql.EngineOverrides{
		Builder: sql.BuilderOverrides{Parser: NewParser("icesql")},
	}).Build()
	e := sqle.New(a, nil)
	t.Cleanup(func() { e.Close() })
	ctx := sql.NewContext(context.Background(), sql.WithSession(memory.NewSession(sql.NewBaseSession(), pro)))
	ctx.SetCurrentDatabase("db")
	return e, ctx, db
}

func run(ctx *sql.Context, e *sqle.Engine, query string) error {
	_, iter, _, err := e.Query(ctx, query)
	if err != nil {
		return err
	}
	_, err = sql.RowIterToRows(ctx, iter)
	return err
}

// TestRejectionReachesClient checks, through a real go-mysql-server engine,
// that a rejected statement's error keeps its code and SQLSTATE after
// sql.CastSQLError, which the server handler applies before writing an
// error to the client.
func TestRejectionReachesClient(t *testing.T) {
	e, ctx, _ := newEngine(t)
	err := run(ctx, e, "CREATE TABLE t (id INT) PARTITION BY HASH(id)")
	if got := sql.CastSQLError(err); got == nil || got.Num != mysql.ERNotSupportedYet || got.State != mysql.SSClientError {
		t.Errorf("CREATE TABLE … PARTITION BY: got %v, want error 1235 (42000)", got)
	}
	if err := run(ctx, e, "SHOW CREATE TABLE t"); !sql.ErrTableNotFound.Is(err) {
		t.Errorf("the rejected table exists: %v", err)
	}
}

// TestEngineCreateTable runs Spark DDL through a real go-mysql-server engine
// and reads the table options back from the created table's comment.
func TestEngineCreateTable(t *testing.T) {
	e, ctx, db := newEngine(t)
	err := run(ctx, e, "CREATE TABLE icesql.db.orders (id BIGINT, region STRING, ts TIMESTAMP) USING iceberg "+
		"PARTITIONED BY (region, days(ts)) TBLPROPERTIES ('format-version'='2')")
	if err != nil {
		t.Fatal(err)
	}
	table, ok, err := db.GetTableInsensitive(ctx, "orders")
	if err != nil || !ok {
		t.Fatalf("table orders: %v", err)
	}
	got, err := DecodeTableOptions(table.(sql.CommentedTable).Comment())
	if err != nil {
		t.Fatal(err)
	}
	want := TableOptions{Properties: map[string]string{"format-version": "2"}, PartitionBy: []string{"region", "days(ts)"}}
	if !equalOptions(got, want) {
		t.Errorf("table options %+v, want %+v", got, want)
	}
	if typ := table.Schema(ctx)[2].Type.String(); typ != "datetime(6)" {
		t.Errorf("ts is %s, want datetime(6)", typ)
	}
}

// TestEngineCreateTableAsSelect checks that go-mysql-server's planbuilder
// takes the table options of a CREATE TABLE … AS SELECT without a column
// list, which only the AST carries, into its plan node.
func TestEngineCreateTableAsSelect(t *testing.T) {
	e, ctx, db := newEngine(t)
	query := "CREATE TABLE icesql.db.c USING iceberg PARTITIONED BY (x) AS SELECT 1 AS x"
	node, _, _, _, err := planbuilder.New(ctx, e.Analyzer.Catalog, nil).Parse(query, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	ct, ok := node.(*plan.CreateTable)
	if !ok {
		t.Fatalf("plan is %T, want *plan.CreateTable", node)
	}
	got, err := DecodeTableOptions(ct.TableOpts["comment"].(string))
	if err != nil || !equalOptions(got, TableOptions{PartitionBy: []string{"x"}}) {
		t.Errorf("plan table options %+v, %v", got, err)
	}
	if err := run(ctx, e, query); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := db.GetTableInsensitive(ctx, "c"); !ok {
		t.Error("table c was not created")
	}
}

// TestEngineViewBody checks that go-mysql-server cuts a view's body out of
// the rewritten text, which the AST's positions refer to.
func TestEngineViewBody(t *testing.T) {
	e, ctx, _ := newEngine(t)
	for _, q := range []string{
		"CREATE TABLE icesql.db.t (id LONG, s STRING) USING iceberg",
		"INSERT INTO icesql.db.t VALUES (1, 'a')",
		"CREATE VIEW icesql.db.v AS SELECT s, id FROM icesql.db.t WHERE s <> 'icesql.db.t'",
	} {
		if err := run(ctx, e, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	_, iter, _, err := e.Query(ctx, "SHOW CREATE VIEW icesql.db.v")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := sql.RowIterToRows(ctx, iter)
	if err != nil {
		t.Fatal(err)
	}
	if want := "CREATE VIEW `v` AS SELECT s, id FROM db.t WHERE s <> 'icesql.db.t'"; len(rows) != 1 || rows[0][1] != want {
		t.Errorf("SHOW CREATE VIEW = %v, want %q", rows, want)
	}
}
