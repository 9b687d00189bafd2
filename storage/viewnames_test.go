package storage

import (
	"context"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
)

// TestListViewNames checks that one listing answers "is this a view?" as
// lookupView does: in any case, for links only, and never for names that
// cannot be files of the layout.
func TestListViewNames(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	if err := w.CreateNamespace(ctx, table.Identifier{"ns"}, nil); err != nil {
		t.Fatal(err)
	}
	names, err := w.ListViewNames(ctx, "ns")
	if err != nil {
		t.Fatalf("list views of a namespace that never had one: %v", err)
	}
	if names.Has("v") {
		t.Error("a namespace without views lists v")
	}

	version, err := view.NewVersion(1, 0, view.Representations{view.NewRepresentation("SELECT 1", "icesql")}, table.Identifier{"ns"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"Totals", "other"} {
		if _, err := w.CreateView(ctx, table.Identifier{"ns", name}, version, testSchema); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.RenameView(ctx, table.Identifier{"ns", "other"}, table.Identifier{"ns", "renamed"}); err != nil {
		t.Fatal(err)
	}
	names, err = w.ListViewNames(ctx, "ns")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"Totals": true, "totals": true, "TOTALS": true, "renamed": true,
		"other": false, "t": false, "totals-x": false, "../ns/totals": false, ".totals": false, "": false,
	} {
		if got := names.Has(name); got != want {
			t.Errorf("Has(%q) = %v, want %v", name, got, want)
		}
	}

	if err := w.DropView(ctx, table.Identifier{"ns", "totals"}); err != nil {
		t.Fatal(err)
	}
	if names, err = w.ListViewNames(ctx, "ns"); err != nil || names.Has("Totals") {
		t.Errorf("after DROP VIEW: Has(Totals) = %v (%v)", names.Has("Totals"), err)
	}
	if names, err = w.ListViewNames(ctx, "../ns"); err != nil || names.Has("renamed") {
		t.Errorf("a namespace name that is no folder name lists views: %v (%v)", names.Has("renamed"), err)
	}
}
