package planner

import (
	"context"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// rewriteOne runs the Parser on one statement and returns the text it handed
// to the MySQL grammar.
func rewriteOne(t *testing.T, in string) (ast.Statement, string) {
	t.Helper()
	stmt, parsed, remainder, err := NewParser("icesql").ParseWithOptions(context.Background(), in, ';', false, ast.ParserOptions{})
	if err != nil {
		t.Fatalf("ParseWithOptions(%q): %v", in, err)
	}
	if remainder != "" {
		t.Fatalf("ParseWithOptions(%q): remainder %q, want none", in, remainder)
	}
	return stmt, parsed
}

// checkRewrite checks that in is rewritten to exactly want and that GMS's own
// MySQL parser accepts want.
func checkRewrite(t *testing.T, in, want string) {
	t.Helper()
	_, got := rewriteOne(t, in)
	if got != want {
		t.Errorf("rewrite\n  %s\ngot\n  %s\nwant\n  %s", in, got, want)
	}
	if _, err := sql.NewMysqlParser().ParseSimple(want); err != nil {
		t.Errorf("MySQL parser rejects %q: %v", want, err)
	}
}

func TestRewriteNamespaces(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CREATE NAMESPACE tutorial", "CREATE DATABASE tutorial"},
		{"create namespace if not exists tutorial", "create DATABASE if not exists tutorial"},
		{"DROP NAMESPACE tutorial", "DROP DATABASE tutorial"},
		{"DROP NAMESPACE IF EXISTS tutorial", "DROP DATABASE IF EXISTS tutorial"},
		{"SHOW NAMESPACES", "SHOW DATABASES"},
		{"SHOW NAMESPACES LIKE 'tut%'", "SHOW DATABASES LIKE 'tut%'"},
		{"CREATE NAMESPACE icesql.tutorial", "CREATE DATABASE tutorial"},
		{"CREATE NAMESPACE IF NOT EXISTS `icesql`.`tutorial`", "CREATE DATABASE IF NOT EXISTS `tutorial`"},
		{"DROP NAMESPACE IcEsQl.tutorial", "DROP DATABASE tutorial"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

func TestRewriteCatalogNames(t *testing.T) {
	tests := []struct{ in, want string }{
		{"SELECT * FROM icesql.tutorial.customers", "SELECT * FROM tutorial.customers"},
		{"SELECT * FROM `icesql`.`tutorial`.`customers`", "SELECT * FROM `tutorial`.`customers`"},
		{"SELECT * FROM ICESQL.tutorial.customers c JOIN icesql.tutorial.orders o ON c.id = o.customer_id",
			"SELECT * FROM tutorial.customers c JOIN tutorial.orders o ON c.id = o.customer_id"},
		{"SELECT icesql.db.t.id FROM icesql.db.t", "SELECT db.t.id FROM db.t"},
		{"INSERT INTO icesql.db.t VALUES (1, 'icesql.db.t')", "INSERT INTO db.t VALUES (1, 'icesql.db.t')"},
		{"INSERT INTO icesql.db.t SELECT * FROM icesql.db.u", "INSERT INTO db.t SELECT * FROM db.u"},
		{"UPDATE icesql.db.t SET a = 1", "UPDATE db.t SET a = 1"},
		{"DELETE FROM icesql.db.t WHERE a = 1", "DELETE FROM db.t WHERE a = 1"},
		{"TABLE icesql.db.t", "TABLE db.t"},
		{"DESCRIBE icesql.db.t", "DESCRIBE db.t"},
		{"SHOW CREATE TABLE icesql.db.t", "SHOW CREATE TABLE db.t"},
		{"DROP TABLE IF EXISTS icesql.db.t", "DROP TABLE IF EXISTS db.t"},
		{"RENAME TABLE icesql.db.t TO icesql.db.u", "RENAME TABLE db.t TO db.u"},
		{"CREATE TABLE icesql.db.t (id BIGINT)", "CREATE TABLE db.t (id BIGINT)"},
		{"CREATE VIEW icesql.db.v AS SELECT * FROM icesql.db.t", "CREATE VIEW db.v AS SELECT * FROM db.t"},
		{"USE icesql.db", "USE db"},
		{"USE `icesql`.`db`", "USE `db`"},
		{"CREATE DATABASE icesql.db", "CREATE DATABASE db"},
		{"CREATE SCHEMA IF NOT EXISTS icesql.db", "CREATE SCHEMA IF NOT EXISTS db"},
		{"DROP DATABASE IF EXISTS icesql.db", "DROP DATABASE IF EXISTS db"},
		{"SHOW TABLES IN icesql.db", "SHOW TABLES IN db"},
		{"SHOW FULL TABLES FROM icesql.db LIKE 'o%'", "SHOW FULL TABLES FROM db LIKE 'o%'"},
		{"SELECT * FROM icesql . db . t", "SELECT * FROM db . t"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

func TestRewriteColumnTypes(t *testing.T) {
	tests := []struct{ in, want string }{
		{"CREATE TABLE t (id BIGINT, name STRING, n LONG, ok BOOLEAN, d DECIMAL(38,10))",
			"CREATE TABLE t (id BIGINT, name LONGTEXT, n BIGINT, ok BOOLEAN, d DECIMAL(38,10))"},
		{"CREATE TABLE t (a TIMESTAMP, b TIMESTAMP(3), c TIMESTAMP_NTZ, d timestamp_ltz, e DATETIME(6))",
			"CREATE TABLE t (a DATETIME(6), b DATETIME(6), c DATETIME(6), d TIMESTAMP(6), e DATETIME(6))"},
		{"CREATE TABLE t (a BINARY, b BINARY(16), c LONG VARCHAR, d long varbinary)",
			"CREATE TABLE t (a LONGBLOB, b BINARY(16), c LONG VARCHAR, d long varbinary)"},
		// A column may be named like a type; only the type position changes.
		{"CREATE TABLE t (string STRING NOT NULL COMMENT 'a STRING', `long` long, `timestamp` TIMESTAMP DEFAULT NULL)",
			"CREATE TABLE t (string LONGTEXT NOT NULL COMMENT 'a STRING', `long` BIGINT, `timestamp` DATETIME(6) DEFAULT NULL)"},
		{"CREATE TABLE IF NOT EXISTS t (id INT, s STRING, PRIMARY KEY (id), KEY string (s(10)))",
			"CREATE TABLE IF NOT EXISTS t (id INT, s LONGTEXT, PRIMARY KEY (id), KEY string (s(10)))"},
		{"CREATE TEMPORARY TABLE t (s\nSTRING)", "CREATE TEMPORARY TABLE t (s\nLONGTEXT)"},
		// A DATETIME(6) default must name precision 6.
		{"CREATE TABLE t (a TIMESTAMP DEFAULT CURRENT_TIMESTAMP ON UPDATE now(), b TIMESTAMP(3) DEFAULT CURRENT_TIMESTAMP(3), c DATETIME DEFAULT NOW())",
			"CREATE TABLE t (a DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6) ON UPDATE CURRENT_TIMESTAMP(6), b DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6), c DATETIME DEFAULT NOW())"},
		{"ALTER TABLE t ADD COLUMN note STRING", "ALTER TABLE t ADD COLUMN note LONGTEXT"},
		{"ALTER TABLE t ADD note STRING, ADD COLUMN n LONG AFTER id", "ALTER TABLE t ADD note LONGTEXT, ADD COLUMN n BIGINT AFTER id"},
		{"ALTER TABLE t MODIFY COLUMN ts TIMESTAMP", "ALTER TABLE t MODIFY COLUMN ts DATETIME(6)"},
		{"ALTER TABLE t ADD a TIMESTAMP DEFAULT CURRENT_TIMESTAMP, ADD b DATETIME DEFAULT CURRENT_TIMESTAMP",
			"ALTER TABLE t ADD a DATETIME(6) DEFAULT CURRENT_TIMESTAMP(6), ADD b DATETIME DEFAULT CURRENT_TIMESTAMP"},
		{"ALTER TABLE t CHANGE note memo STRING", "ALTER TABLE t CHANGE note memo LONGTEXT"},
		{"ALTER TABLE icesql.db.t ADD COLUMN s STRING", "ALTER TABLE db.t ADD COLUMN s LONGTEXT"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) { checkRewrite(t, tt.in, tt.want) })
	}
}

func TestRewriteTableClauses(t *testing.T) {
	tests := []struct {
		in, want string
		opts     TableOptions // decoded from the COMMENT of want
	}{
		{in: "CREATE TABLE t (id BIGINT) USING iceberg", want: "CREATE TABLE t (id BIGINT)"},
		{in: "CREATE TABLE t (id BIGINT) using ICEBERG", want: "CREATE TABLE t (id BIGINT)"},
		{
			in:   "CREATE TABLE t (id BIGINT, ts TIMESTAMP) USING iceberg PARTITIONED BY (days(ts), bucket(16,id))",
			want: `CREATE TABLE t (id BIGINT, ts DATETIME(6)) COMMENT='icesql:{"partition_by":["days(ts)","bucket(16, id)"]}'`,
			opts: TableOptions{PartitionBy: []string{"days(ts)", "bucket(16, id)"}},
		},
		{
			in: "CREATE TABLE icesql.db.orders (order_id BIGINT, region STRING, order_date DATE)\n" +
				"USING iceberg\nPARTITIONED BY (region, months( order_date ), truncate(4, region))\n" +
				"COMMENT 'orders, by region'\nLOCATION 's3://bucket/orders'\n" +
				"TBLPROPERTIES ('format-version'='2', 'write.delete.mode' = 'merge-on-read', 'k' = 2, write.wap.enabled = TRUE, neg = -1.5)",
			want: `CREATE TABLE db.orders (order_id BIGINT, region LONGTEXT, order_date DATE) COMMENT='icesql:{"properties":{"format-version":"2","k":"2","neg":"-1.5","write.delete.mode":"merge-on-read","write.wap.enabled":"true"},"comment":"orders, by region","location":"s3://bucket/orders","partition_by":["region","months(order_date)","truncate(4, region)"]}'`,
			opts: TableOptions{
				Properties: map[string]string{"format-version": "2", "write.delete.mode": "merge-on-read", "k": "2",
					"write.wap.enabled": "true", "neg": "-1.5"},
				Comment:     "orders, by region",
				Location:    "s3://bucket/orders",
				PartitionBy: []string{"region", "months(order_date)", "truncate(4, region)"},
			},
		},
		{
			// Spark accepts the clauses in any order.
			in:   "CREATE TABLE t (id INT) TBLPROPERTIES ('a'='b') PARTITIONED BY (id) USING iceberg",
			want: `CREATE TABLE t (id INT) COMMENT='icesql:{"properties":{"a":"b"},"partition_by":["id"]}'`,
			opts: TableOptions{Properties: map[string]string{"a": "b"}, PartitionBy: []string{"id"}},
		},
		{
			// Only a comment: it stays a plain, readable comment.
			in:   "CREATE TABLE t (id INT) USING iceberg COMMENT 'hello'",
			want: "CREATE TABLE t (id INT) COMMENT='hello'",
			opts: TableOptions{Comment: "hello"},
		},
		{
			// A MySQL COMMENT joins the Spark clauses; other MySQL options stay.
			in:   "CREATE TABLE t (id INT) ENGINE=InnoDB COMMENT='it''s \\\\ \"x\"' PARTITIONED BY (id)",
			want: `CREATE TABLE t (id INT) COMMENT='icesql:{"comment":"it''s \\\\ \\"x\\"","partition_by":["id"]}' ENGINE=InnoDB`,
			opts: TableOptions{Comment: `it's \ "x"`, PartitionBy: []string{"id"}},
		},
		{
			// A line comment before a clause keeps its newline.
			in:   "CREATE TABLE t (id INT) -- partitioned by day\nPARTITIONED BY (id)",
			want: `CREATE TABLE t (id INT) COMMENT='icesql:{"partition_by":["id"]}' -- partitioned by day` + "\n",
			opts: TableOptions{PartitionBy: []string{"id"}},
		},
		{
			in:   "CREATE TABLE t (id BIGINT) USING iceberg PARTITIONED BY (id) AS SELECT 1 AS id",
			want: `CREATE TABLE t (id BIGINT) COMMENT='icesql:{"partition_by":["id"]}' AS SELECT 1 AS id`,
			opts: TableOptions{PartitionBy: []string{"id"}},
		},
		{
			in:   "CREATE TABLE t (id BIGINT) PARTITIONED BY (id) SELECT 1 AS id",
			want: `CREATE TABLE t (id BIGINT) COMMENT='icesql:{"partition_by":["id"]}' SELECT 1 AS id`,
			opts: TableOptions{PartitionBy: []string{"id"}},
		},
		{
			in:   "CREATE TABLE t (id BIGINT) PARTITIONED BY (id) AS (SELECT 1 AS id)",
			want: `CREATE TABLE t (id BIGINT) COMMENT='icesql:{"partition_by":["id"]}' AS SELECT 1 AS id`,
			opts: TableOptions{PartitionBy: []string{"id"}},
		},
		// AS (SELECT …) is MySQL too, which the vitess grammar rejects.
		{in: "CREATE TABLE t AS (SELECT 1 AS id)", want: "CREATE TABLE t AS SELECT 1 AS id"},
		{in: "CREATE TABLE t AS(SELECT 1 AS id )", want: "CREATE TABLE t AS SELECT 1 AS id"},
		{in: "CREATE TABLE t AS (SELECT 1) UNION (SELECT 2)", want: "CREATE TABLE t AS (SELECT 1) UNION (SELECT 2)"},
		{
			// Without a column list the COMMENT has no place in the text; it
			// is attached to the AST (TestCreateTableAsSelectComment).
			in:   "CREATE TABLE icesql.db.t USING iceberg PARTITIONED BY (id) AS SELECT 1 AS id",
			want: "CREATE TABLE db.t AS SELECT 1 AS id",
		},
		{
			// MySQL, which the vitess grammar rejects: table options
			// before AS SELECT. The comment moves to the AST too.
			in:   "CREATE TABLE t COMMENT 'c' AS SELECT 1 AS id",
			want: "CREATE TABLE t AS SELECT 1 AS id",
		},
		{
			// A MySQL comment that only looks encoded is encoded, so that it
			// reads back as itself.
			in:   "CREATE TABLE t (id INT) COMMENT='icesql: fast'",
			want: `CREATE TABLE t (id INT) COMMENT='icesql:{"comment":"icesql: fast"}'`,
			opts: TableOptions{Comment: "icesql: fast"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			checkRewrite(t, tt.in, tt.want)
			stmt, _ := rewriteOne(t, tt.in)
			if ddl := stmt.(*ast.DDL); ddl.OptSelect == nil || ddl.TableSpec != nil && len(ddl.TableSpec.Columns) > 0 {
				assertOptions(t, stmt, tt.opts)
			}
		})
	}
}

// assertOptions checks the TableOptions that the parsed CREATE TABLE carries
// in its COMMENT table option.
func assertOptions(t *testing.T, stmt ast.Statement, want TableOptions) {
	t.Helper()
	var comment string
	if ddl, ok := stmt.(*ast.DDL); ok && ddl.TableSpec != nil {
		for _, o := range ddl.TableSpec.TableOpts {
			if o.Name == "COMMENT" || o.Name == "comment" {
				comment = o.Value
			}
		}
	}
	got, err := DecodeTableOptions(comment)
	if err != nil {
		t.Fatal(err)
	}
	if !equalOptions(got, want) {
		t.Errorf("table options: got %+v, want %+v", got, want)
	}
}

func TestCreateTableAsSelectComment(t *testing.T) {
	stmt, text := rewriteOne(t, "CREATE TABLE t USING iceberg COMMENT 'c' TBLPROPERTIES ('k'='v') AS SELECT 1 AS id")
	if want := "CREATE TABLE t AS SELECT 1 AS id"; text != want {
		t.Errorf("text %q, want %q", text, want)
	}
	ddl := stmt.(*ast.DDL)
	if ddl.OptSelect == nil || ddl.TableSpec == nil || len(ddl.TableSpec.Columns) != 0 {
		t.Fatalf("want CREATE TABLE … AS SELECT with an empty table spec, got %s", ast.String(stmt))
	}
	assertOptions(t, stmt, TableOptions{Comment: "c", Properties: map[string]string{"k": "v"}})
}

// TestUnchanged checks that statements without Spark syntax reach the MySQL
// parser byte for byte, including Spark words in strings and comments.
func TestUnchanged(t *testing.T) {
	for _, in := range []string{
		"SELECT 'CREATE NAMESPACE x', \"icesql.db.t\" FROM t -- STRING NAMESPACE USING iceberg",
		"SELECT * FROM t /* FROM icesql.db.t PARTITIONED BY (x) */ WHERE a = 'USING iceberg'",
		"INSERT INTO t VALUES ('STRING', 'NAMESPACE', 'TIMESTAMP')",
		"SELECT db.t.col FROM db.t",
		"SELECT other.t.c FROM other.t",
		"SELECT a FROM t WHERE b NOT IN (1, 2) FOR UPDATE",
		"CREATE DATABASE icesql",
		"CREATE TABLE `icesql` (`icesql` INT)",
		"CREATE TABLE t (a INT, b TEXT, c DATETIME(6)) COMMENT='x'",
		"CREATE TABLE t (id INT) COMMENT 'spark-style comment'",
		"CREATE TABLE `string` (`string` TEXT, `using` INT)",
		"CREATE TABLE t (a INT) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 /*!50100 COMMENT 'x' */",
		"CREATE TABLE t AS SELECT 1 AS a",
		"CREATE TABLE t LIKE u",
		"ALTER TABLE t ADD INDEX string (a)",
		"ALTER TABLE t ADD COLUMN c TEXT",
		"SELECT CONCAT('a', \"b\") `timestamp` FROM t",
		"SHOW DATABASES",
		"SELECT * FROM t1 JOIN t2 USING (id)",
		"CREATE PROCEDURE p() BEGIN SELECT 1; SELECT 2; END",
	} {
		t.Run(in, func(t *testing.T) { checkRewrite(t, in, in) })
	}
}
