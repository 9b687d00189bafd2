package engine_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/view"

	"github.com/icesql/icesql/engine"
)

// TestViewsAreIcebergViews checks what a view leaves in the warehouse: Iceberg
// view metadata that iceberg-go parses, with the SELECT as icesql's SQL
// representation, the columns as its schema, and one version per CREATE OR
// REPLACE; and that views outlive the engine that made them.
func TestViewsAreIcebergViews(t *testing.T) {
	dir := t.TempDir()
	wh := "file://" + filepath.ToSlash(dir)
	conn := openDB(t, wh)
	mustExec(t, conn,
		"CREATE DATABASE vdb", "USE vdb",
		"CREATE TABLE t (id BIGINT, region STRING, amount DECIMAL(10,2))",
		"INSERT INTO t VALUES (1, 'eu', 1.50), (2, 'us', 2.25), (3, 'eu', 4.00)",
		"CREATE VIEW Totals (Region, Total) AS SELECT region, SUM(amount) FROM t GROUP BY region",
		"CREATE OR REPLACE VIEW Totals (Region, Total) AS SELECT region, SUM(amount) FROM t WHERE id > 1 GROUP BY region",
	)

	files, err := filepath.Glob(filepath.Join(dir, "vdb", ".icesql", "views", "totals-*", "metadata", "v*.metadata.json"))
	if err != nil || len(files) != 2 {
		t.Fatalf("want 2 view metadata files (create, replace), got %v (%v)", files, err)
	}
	slices.Sort(files)
	data, err := os.ReadFile(files[1])
	if err != nil {
		t.Fatal(err)
	}
	meta, err := view.ParseMetadataBytes(data)
	if err != nil {
		t.Fatalf("iceberg-go cannot parse icesql's view metadata: %v", err)
	}
	if n := len(meta.Versions()); n != 2 {
		t.Errorf("view keeps %d versions, want 2", n)
	}
	cur := meta.CurrentVersion()
	if len(cur.Representations) != 1 || cur.Representations[0].Dialect != "icesql" ||
		!strings.Contains(cur.Representations[0].Sql, "WHERE id > 1") {
		t.Errorf("current representation = %+v", cur.Representations)
	}
	if got := strings.Join(cur.DefaultNamespace, "."); got != "vdb" {
		t.Errorf("default namespace = %q, want vdb", got)
	}
	var names []string
	for _, f := range meta.CurrentSchema().Fields() {
		names = append(names, f.Name+" "+f.Type.String())
	}
	if got := strings.Join(names, ", "); got != "Region string, Total decimal(32, 2)" {
		t.Errorf("view schema = %s", got)
	}

	// Going back to an earlier definition makes that version current again
	// rather than adding it twice (the spec's reuse of versions).
	mustExec(t, conn, "CREATE OR REPLACE VIEW Totals (Region, Total) AS SELECT region, SUM(amount) FROM t GROUP BY region")
	files, _ = filepath.Glob(filepath.Join(dir, "vdb", ".icesql", "views", "totals-*", "metadata", "v3.metadata.json"))
	if len(files) != 1 {
		t.Fatalf("want v3.metadata.json, got %v", files)
	}
	data, err = os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if meta, err = view.ParseMetadataBytes(data); err != nil {
		t.Fatal(err)
	}
	if len(meta.Versions()) != 2 || meta.CurrentVersionID() != 1 {
		t.Errorf("after going back: %d versions, current %d; want 2 versions, current 1", len(meta.Versions()), meta.CurrentVersionID())
	}

	// A new engine on the same warehouse sees the view.
	conn2 := openConn(t, engine.Config{Warehouse: wh})
	mustExec(t, conn2, "USE vdb")
	if got := collect(t, conn2, "SELECT Region, Total FROM Totals ORDER BY Region"); got != "eu 5.50|us 2.25" {
		t.Errorf("view after reopening:\n%s", got)
	}
}
