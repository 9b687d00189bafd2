package catalogs_test

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
)

// TestNamespaceLocation: CREATE NAMESPACE ... LOCATION on the catalogs
// icesql wraps. Those that keep namespace properties store the location,
// and a table created in the namespace lies below it; the Hadoop catalog,
// which keeps none, refuses the clauses with 1235 and creates nothing.
// (The embedded catalog's refusal is in namespace_properties.test.)
func TestNamespaceLocation(t *testing.T) {
	ctx := context.Background()
	for _, c := range matrix {
		if c.name == "embedded" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := c.config(t)
			e, err := engine.Open(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { e.Close() })
			conn := openConn(t, cfg)
			// A place beside the catalog's own: where it puts a table,
			// two levels up (namespace and table), then a folder of ours.
			mustExec(t, conn, "CREATE DATABASE nsloc_ref")
			mustExec(t, conn, "CREATE TABLE nsloc_ref.t (id BIGINT)")
			ref, err := e.Catalog().LoadTable(ctx, table.Identifier{"nsloc_ref", "t"})
			if err != nil {
				t.Fatal(err)
			}
			root := strings.TrimSuffix(ref.Location(), "/")
			for range 2 {
				root = root[:strings.LastIndexByte(root, '/')]
			}
			loc := root + "/elsewhere/nsloc"

			_, err = conn.ExecContext(ctx, "CREATE NAMESPACE nsloc LOCATION '"+loc+"' COMMENT 'placed'")
			if c.name == "hadoop" {
				if err == nil || !strings.Contains(err.Error(), "errno 1235") || !strings.Contains(err.Error(), "namespace properties") {
					t.Fatalf("CREATE NAMESPACE ... LOCATION on the Hadoop catalog: %v, want 1235 naming namespace properties", err)
				}
				if ok, err := e.Catalog().CheckNamespaceExists(ctx, table.Identifier{"nsloc"}); ok || err != nil {
					t.Fatalf("the refused namespace exists: %v, %v", ok, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("CREATE NAMESPACE ... LOCATION: %v", err)
			}
			props, err := e.Catalog().LoadNamespaceProperties(ctx, table.Identifier{"nsloc"})
			if err != nil || props["location"] != loc || props["comment"] != "placed" {
				t.Fatalf("the namespace's properties %v, %v; want location %s and the comment", props, err, loc)
			}
			mustExec(t, conn, "CREATE TABLE nsloc.t (id BIGINT)")
			mustExec(t, conn, "INSERT INTO nsloc.t VALUES (1), (2)")
			tbl, err := e.Catalog().LoadTable(ctx, table.Identifier{"nsloc", "t"})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.TrimSuffix(tbl.Location(), "/"); got != loc+"/t" {
				t.Errorf("the table is at %s, want %s/t (below the namespace's location)", got, loc)
			}
			var n int
			if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM nsloc.t WHERE id > 0").Scan(&n); err != nil || n != 2 {
				t.Errorf("rows: %d, %v", n, err)
			}
		})
	}
}
