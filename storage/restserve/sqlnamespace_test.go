package restserve_test

import (
	"context"
	"database/sql"
	"net/http/httptest"
	"testing"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// TestSQLNamespacePropertiesOverREST: the comment and properties of
// Spark's CREATE NAMESPACE ... COMMENT ... WITH DBPROPERTIES are the
// namespace's properties the REST catalog serves.
func TestSQLNamespacePropertiesOverREST(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE NAMESPACE sales COMMENT 'sales data' WITH DBPROPERTIES ('owner' = 'ann')"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(restserve.New(e.Catalog().(*storage.Warehouse), restserve.Config{}))
	defer srv.Close()
	s := &server{t: t, http: srv}
	props, _ := s.want("GET", "/v1/namespaces/sales", "", 200, "")["properties"].(map[string]any)
	if props["comment"] != "sales data" || props["owner"] != "ann" {
		t.Fatalf("namespace properties over REST: %v, want comment and owner", props)
	}
}
