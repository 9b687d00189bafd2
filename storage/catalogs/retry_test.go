package catalogs_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage/catalogs"
)

// TestLostRaceIsCommitFailed shows iceberg-go's bug the decorator fixes: a
// commit whose requirements another writer invalidated fails on the SQL and
// Hadoop catalogs with a plain "requirement failed" error, which no retry
// loop recognises; through catalogs.Load it is table.ErrCommitFailed, with
// the catalog's message kept.
func TestLostRaceIsCommitFailed(t *testing.T) {
	for _, typ := range []string{"sql", "hadoop"} {
		t.Run(typ, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			props := iceberg.Properties{"type": typ, "warehouse": filepath.Join(dir, "warehouse")}
			if typ == "sql" {
				props["uri"] = "sqlite:///" + filepath.Join(dir, "catalog.db")
			}
			cat, err := catalogs.Load(ctx, "test", props)
			if err != nil {
				t.Fatal(err)
			}
			defer cat.(catalog.Closer).Close()
			ident := table.Identifier{"ns", "t"}
			if err := cat.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
				t.Fatal(err)
			}
			sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "a", Type: iceberg.PrimitiveTypes.Int32})
			if _, err := cat.CreateTable(ctx, ident, sc); err != nil {
				t.Fatal(err)
			}
			// The writer believed the table's current schema id was 7.
			stale := []table.Requirement{table.AssertCurrentSchemaID(7)}
			update := []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{"k": "v"})}

			raw := cat.(interface{ Unwrap() catalog.Catalog }).Unwrap()
			_, _, rawErr := raw.CommitTable(ctx, ident, stale, update)
			if rawErr == nil || errors.Is(rawErr, table.ErrCommitFailed) {
				t.Fatalf("iceberg-go's %s catalog: got %v, want a plain requirement failure (if fixed upstream, the decorator can go)", typ, rawErr)
			}
			_, _, err = cat.CommitTable(ctx, ident, stale, update)
			if !errors.Is(err, table.ErrCommitFailed) {
				t.Fatalf("decorated %s catalog: got %v, want table.ErrCommitFailed", typ, err)
			}
			if err.Error() != rawErr.Error() || !strings.Contains(strings.ToLower(err.Error()), "requirement failed") {
				t.Errorf("message changed: %q, want %q", err, rawErr)
			}
			// Tables the decorated catalog returns commit through it too: a
			// schema change on a table another writer changed meanwhile.
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			addColumn := func(tbl *table.Table, name string) error {
				tx := tbl.NewTransaction()
				if err := tx.UpdateSchema(true, false).AddColumn([]string{name}, iceberg.PrimitiveTypes.Int64, "", false, nil).Commit(); err != nil {
					return err
				}
				_, err := tx.Commit(ctx)
				return err
			}
			if err := addColumn(tbl, "first"); err != nil {
				t.Fatal(err)
			}
			if err := addColumn(tbl, "second"); !errors.Is(err, table.ErrCommitFailed) {
				t.Errorf("stale schema change through a loaded table: got %v, want table.ErrCommitFailed", err)
			}
			// The decorator keeps the wrapped catalog's purge.
			metadata := filepath.Join(dir, "warehouse", "ns*", "t", "metadata", "*")
			if m, _ := filepath.Glob(metadata); len(m) == 0 {
				t.Fatalf("no table metadata at %s", metadata)
			}
			if err := cat.(catalog.PurgeableTable).PurgeTable(ctx, ident); err != nil {
				t.Fatal(err)
			}
			if ok, err := cat.CheckTableExists(ctx, ident); err != nil || ok {
				t.Errorf("after PurgeTable the table exists: %v %v", ok, err)
			}
			if m, _ := filepath.Glob(metadata); len(m) > 0 {
				t.Errorf("PurgeTable left %v", m)
			}
		})
	}
}

// TestDecoratorKeepsRegisterTable: register_table finds RegisterTable on the
// decorated Glue catalog, and only where the wrapped catalog has it.
func TestDecoratorKeepsRegisterTable(t *testing.T) {
	type registrar interface {
		RegisterTable(context.Context, table.Identifier, string) (*table.Table, error)
	}
	ctx := context.Background()
	glueCat, err := catalogs.Load(ctx, "test", iceberg.Properties{"type": "glue", "glue.region": "us-east-1", "warehouse": "s3://b/w"})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := glueCat.(registrar); !ok {
		t.Error("the decorated Glue catalog lost RegisterTable")
	}
	dir := t.TempDir()
	sqlCat, err := catalogs.Load(ctx, "test", iceberg.Properties{"type": "sql", "uri": "sqlite:///" + filepath.Join(dir, "c.db"), "warehouse": dir})
	if err != nil {
		t.Fatal(err)
	}
	defer sqlCat.(catalog.Closer).Close()
	if _, ok := sqlCat.(registrar); ok {
		t.Error("the decorated SQL catalog claims RegisterTable, which iceberg-go's SQL catalog lacks")
	}
}
