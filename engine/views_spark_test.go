package engine_test

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"

	"github.com/icesql/icesql/engine"
)

// TestSparkViewThroughItsCatalogName checks a view as Spark stores it
// through a REST catalog it calls "ice": Spark SQL naming tables
// ice.db.t, with "ice" as the view's default catalog. icesql reads it as
// it reads names through its own catalog name (it answered 1046 before).
func TestSparkViewThroughItsCatalogName(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	conn := openConnOn(t, e)
	mustExec(t, conn,
		"CREATE DATABASE vdb",
		"CREATE TABLE vdb.t (id BIGINT, s STRING)",
		"INSERT INTO vdb.t VALUES (1, 'a'), (2, 'b'), (3, 'c')",
	)
	vc, ok := e.Catalog().(interface {
		CreateView(ctx context.Context, ident table.Identifier, version *view.Version, schema *iceberg.Schema, opts ...catalog.CreateViewOpt) (*view.View, error)
	})
	if !ok {
		t.Fatal("the embedded catalog stores no views")
	}
	schema := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64})
	version, err := view.NewVersion(1, 0,
		view.Representations{view.NewRepresentation("SELECT id FROM ice.vdb.t WHERE id > 1", "spark")},
		table.Identifier{"vdb"}, view.WithDefaultViewCatalog("ice"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vc.CreateView(context.Background(), table.Identifier{"vdb", "sv"}, version, schema); err != nil {
		t.Fatal(err)
	}
	mustExec(t, conn, "USE vdb")
	var n, sum int64
	if err := conn.QueryRowContext(context.Background(), "SELECT COUNT(*), SUM(id) FROM sv").Scan(&n, &sum); err != nil {
		t.Fatalf("reading Spark's view: %v", err)
	}
	if n != 2 || sum != 5 {
		t.Errorf("Spark's view: %d rows summing to %d, want 2 and 5", n, sum)
	}
}
