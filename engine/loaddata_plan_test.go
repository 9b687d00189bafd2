package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// Which LOAD DATA statements take the bulk path (loaddata.go): the ones
// TestBulkLoadMatchesRowPath compares with the row path must, and the
// shapes it leaves to go-mysql-server must not.
func TestLoadDataTakesTheBulkPath(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(context.Background(), Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	file := filepath.Join(dir, ".icesql", "files", "x.csv")
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := e.newContext(context.Background(), e.NewSession(sql.NewBaseSession()))
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, s STRING, nn INT NOT NULL)"} {
		if _, iter, _, err := e.sqle.Query(ctx, q); err != nil {
			t.Fatal(err)
		} else if _, err := sql.RowIterToRows(ctx, iter); err != nil {
			t.Fatal(err)
		}
	}
	load := "LOAD DATA INFILE '" + file + "' "
	for _, c := range []struct {
		query string
		bulk  bool
	}{
		{load + "INTO TABLE d.t", true},
		{load + "IGNORE INTO TABLE d.t FIELDS TERMINATED BY ',' ENCLOSED BY '\"' LINES TERMINATED BY '\\r\\n' IGNORE 1 LINES", true},
		{"LOAD DATA LOCAL INFILE 'x.csv' INTO TABLE d.t", true},
		{load + "INTO TABLE d.t (nn, id)", true},
		{load + "INTO TABLE d.t (id, s)", false},                 // nn NOT NULL left out: go-mysql-server's error
		{load + "INTO TABLE d.t (id, @x, nn) SET s = @x", false}, // SET and user variables
		{load + "INTO TABLE d.t SET id = 1", false},
		{load + "INTO TABLE d.t CHARACTER SET latin1", false},
	} {
		node, err := e.sqle.AnalyzeQuery(ctx, c.query)
		if err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		bulk := hasBulkLoad(ctx, node)
		if bulk != c.bulk {
			t.Errorf("%s: bulk path %v, want %v\n%s", c.query, bulk, c.bulk, sql.DebugString(ctx, node))
		}
	}
	ctx.SetSessionVariable(ctx, vecexec.VectorizeVar, int8(0))
	node, err := e.sqle.AnalyzeQuery(ctx, load+"INTO TABLE d.t")
	if err != nil {
		t.Fatal(err)
	}
	if hasBulkLoad(ctx, node) {
		t.Error("icesql_vectorize = OFF still takes the bulk path")
	}
}

func hasBulkLoad(ctx *sql.Context, node sql.Node) bool {
	return transform.InspectUp(ctx, node, func(_ *sql.Context, n sql.Node) bool {
		_, ok := n.(*bulkLoadNode)
		return ok
	})
}
