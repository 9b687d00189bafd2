package storage

import (
	"context"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/table"
)

// hookStore runs before (when set) ahead of every exclusive create, as
// another process's commits landing at that moment would.
type hookStore struct {
	Store
	before func(ctx context.Context, loc string)
}

func (h *hookStore) CreateExclusive(ctx context.Context, loc string, data []byte) error {
	if h.before != nil {
		h.before(ctx, loc)
	}
	return h.Store.CreateExclusive(ctx, loc, data)
}

// copyVersion creates metadata file to of a table folder as a copy of from:
// a commit of another process that changes nothing.
func copyVersion(t *testing.T, st Store, dir, from, to string) {
	t.Helper()
	data, err := st.ReadFile(context.Background(), Join(dir, "metadata", from))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.CreateExclusive(context.Background(), Join(dir, "metadata", to), data); err != nil {
		t.Fatal(err)
	}
}

// When another process commits on top of a table Publish already
// published, before a later table's create fails, that table's commit
// cannot be withdrawn without losing the other's: it stays, and the error
// names it. Without the commit on top it is withdrawn.
func TestPublishKeepsWhatOthersBuiltOn(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root, err := LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	st := &hookStore{Store: LocalStore{}}
	w, err := OpenWarehouse(ctx, root, st)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"a", "b"} {
		if _, err := w.CreateTable(ctx, table.Identifier{"d", n}, testSchema); err != nil {
			t.Fatal(err)
		}
	}
	aDir, bDir := Join(root, "d", "a"), Join(root, "d", "b")
	version := func(n string) string {
		t.Helper()
		tbl, err := w.LoadTable(ctx, table.Identifier{"d", n})
		if err != nil {
			t.Fatal(err)
		}
		return tbl.MetadataLocation()[strings.LastIndex(tbl.MetadataLocation(), "/")+1:]
	}
	commitBoth := func() error {
		d := w.Deferred()
		for _, n := range []string{"a", "b"} {
			tbl, err := d.LoadTable(ctx, table.Identifier{"d", n})
			if err != nil {
				t.Fatal(err)
			}
			tx := tbl.NewTransaction()
			if err := tx.SetProperties(map[string]string{"k": "v"}); err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Commit(ctx); err != nil {
				t.Fatalf("prepare %s: %v", n, err)
			}
		}
		return d.Publish(ctx)
	}
	if a, b := version("a"), version("b"); a != "v1.metadata.json" || b != "v1.metadata.json" {
		t.Fatalf("versions %s %s, want v1 each", a, b)
	}

	// b's create loses to another process: a's v2 is withdrawn.
	st.before = func(_ context.Context, loc string) {
		if strings.HasSuffix(loc, "/d/b/metadata/v2.metadata.json") {
			copyVersion(t, LocalStore{}, bDir, "v1.metadata.json", "v2.metadata.json")
		}
	}
	if err := commitBoth(); err == nil || !strings.Contains(err.Error(), ErrChangedBeforePublish.Error()) {
		t.Fatalf("Publish losing b's create: %v; want ErrChangedBeforePublish", err)
	}
	if a, b := version("a"), version("b"); a != "v1.metadata.json" || b != "v2.metadata.json" {
		t.Fatalf("after the withdrawal: a at %s, b at %s; want v1 (withdrawn) and v2 (the other process's)", a, b)
	}

	// Now another process also commits on top of a's v2 first: a stays.
	st.before = func(_ context.Context, loc string) {
		if strings.HasSuffix(loc, "/d/b/metadata/v3.metadata.json") {
			copyVersion(t, LocalStore{}, aDir, "v2.metadata.json", "v3.metadata.json")
			copyVersion(t, LocalStore{}, bDir, "v2.metadata.json", "v3.metadata.json")
		}
	}
	err = commitBoth()
	if err == nil || !strings.Contains(err.Error(), "d.a stayed committed") {
		t.Fatalf("Publish with a commit on top of a: %v; want d.a named as staying committed", err)
	}
	if a := version("a"); a != "v3.metadata.json" {
		t.Fatalf("a at %s, want v3 (the other process's, on top of icesql's v2)", a)
	}
	if _, err := st.ReadFile(ctx, Join(aDir, "metadata", "v2.metadata.json")); err != nil {
		t.Fatalf("a's v2, which v3 builds on, is gone: %v", err)
	}
}
