package engine_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog/hadoop"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
)

// openDB opens an engine on the warehouse and one pinned session.
func openDB(t *testing.T, warehouse string) *sql.Conn {
	t.Helper()
	return openConn(t, engine.Config{Warehouse: warehouse})
}

// openConn opens an engine with cfg and one pinned session.
func openConn(t *testing.T, cfg engine.Config) *sql.Conn {
	t.Helper()
	return openConnOn(t, openEngine(t, cfg))
}

// openEngine opens an engine with cfg, closed when the test ends.
func openEngine(t testing.TB, cfg engine.Config) *engine.Engine {
	t.Helper()
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func mustExec(t *testing.T, conn *sql.Conn, stmts ...string) {
	t.Helper()
	for _, s := range stmts {
		if _, err := conn.ExecContext(context.Background(), s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
}

// TestIcebergGoReadsWhatIcesqlWrote opens the warehouse with iceberg-go's
// own Hadoop catalog and reader, none of icesql's code, and checks that it
// sees the rows, schema and snapshots icesql committed.
func TestIcebergGoReadsWhatIcesqlWrote(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE tutorial",
		"USE tutorial",
		"CREATE TABLE customers (customer_id BIGINT NOT NULL, name TEXT, country TEXT, total DOUBLE, since DATE, paid DECIMAL(10,2))",
		"INSERT INTO customers VALUES (1, 'Alice Johnson', 'USA', 1250.00, '2024-01-15', 10.25), (2, 'Bob Smith', 'Canada', 850.50, NULL, NULL)",
		"INSERT INTO customers VALUES (3, NULL, 'USA', -1, '1900-02-28', -0.5)",
	)

	ctx := context.Background()
	cat, err := hadoop.NewCatalog("peer", "file://"+filepath.ToSlash(dir), iceberg.Properties{})
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := cat.LoadTable(ctx, table.Identifier{"tutorial", "customers"})
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, f := range tbl.Schema().Fields() {
		names = append(names, fmt.Sprintf("%d:%s:%s:%v", f.ID, f.Name, f.Type, f.Required))
	}
	wantSchema := []string{"1:customer_id:long:true", "2:name:string:false", "3:country:string:false",
		"4:total:double:false", "5:since:date:false", "6:paid:decimal(10, 2):false"}
	if !slices.Equal(names, wantSchema) {
		t.Errorf("schema = %v, want %v", names, wantSchema)
	}

	snaps := tbl.Metadata().Snapshots()
	if len(snaps) != 2 {
		t.Fatalf("%d snapshots, want one per INSERT statement (2)", len(snaps))
	}
	for i, want := range []string{"2", "3"} {
		s := snaps[i].Summary
		if s.Operation != table.OpAppend || s.Properties["total-records"] != want {
			t.Errorf("snapshot %d summary = %v %v, want append with total-records %s", i, s.Operation, s.Properties, want)
		}
	}

	arrowTbl, err := tbl.Scan(table.WithSelectedFields("customer_id", "name", "paid")).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer arrowTbl.Release()
	var got []string
	rdr := array.NewTableReader(arrowTbl, 100)
	defer rdr.Release()
	for rdr.Next() {
		rec := rdr.RecordBatch()
		for i := 0; i < int(rec.NumRows()); i++ {
			got = append(got, fmt.Sprintf("%s|%s|%s", rec.Column(0).ValueStr(i), rec.Column(1).ValueStr(i), rec.Column(2).ValueStr(i)))
		}
	}
	slices.Sort(got)
	want := []string{"1|Alice Johnson|10.25", "2|Bob Smith|(null)", "3|(null)|-0.5"}
	if !slices.Equal(got, want) {
		t.Errorf("iceberg-go read %v, want %v", got, want)
	}
}

// TestDatabaseSQLTransactions uses database/sql's own Begin/Commit/Rollback,
// which the driver maps to SQL transactions: one snapshot per commit.
func TestDatabaseSQLTransactions(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	for _, s := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT)"} {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := tx.ExecContext(ctx, "INSERT INTO d.t VALUES (?)", i); err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := tx.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 3 {
		t.Fatalf("inside the transaction: %d rows, %v", n, err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	tx, err = db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, "INSERT INTO d.t VALUES (99)"); err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("after commit and rollback: %d rows, %v; want 3", n, err)
	}
	var snaps int
	tbl, err := e.Catalog().LoadTable(ctx, table.Identifier{"d", "t"})
	if err != nil {
		t.Fatal(err)
	}
	snaps = len(tbl.Metadata().Snapshots())
	if snaps != 1 {
		t.Errorf("%d snapshots, want 1 (one per committed transaction)", snaps)
	}
}
