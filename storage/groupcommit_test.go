package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// TestGroupAppend checks a group of appends: one metadata file, a linear
// chain of one append snapshot per statement in order, each with its own
// summary, and the bad append (the same file twice) failing alone.
func TestGroupAppend(t *testing.T) {
	ctx := context.Background()
	root, err := LocalLocation(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	w, err := OpenWarehouse(ctx, root, LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	ident := table.Identifier{"d", "t"}
	if err := w.CreateNamespace(ctx, table.Identifier{"d"}, nil); err != nil {
		t.Fatal(err)
	}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	before, err := w.latestVersion(ctx, tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	var group []*groupedAppend
	for i := range 4 {
		files := []iceberg.DataFile{dataFile(t, fmt.Sprintf("%s/data/f%d.parquet", tbl.Location(), i), int64(i+1))}
		if i == 2 {
			files = append(files, files[0]) // refused when staged
		}
		group = append(group, &groupedAppend{
			files:   files,
			summary: iceberg.Properties{"statement": fmt.Sprint(i)},
		})
	}
	w.commitGroup(ctx, ident, group)
	for i, a := range group {
		if (a.err != nil) != (i == 2) {
			t.Errorf("append %d: %v", i, a.err)
		}
	}
	after, err := w.latestVersion(ctx, tbl.Location())
	if err != nil {
		t.Fatal(err)
	}
	if after != before+1 {
		t.Errorf("the group wrote metadata versions %d to %d, want one", before+1, after)
	}
	tbl, err = w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	// Walk the chain back from the current snapshot.
	var got []string
	for s := tbl.CurrentSnapshot(); s != nil; {
		got = append([]string{s.Summary.Properties["statement"] + "/" + s.Summary.Properties["added-records"] + "/" + string(s.Summary.Operation)}, got...)
		if s.ParentSnapshotID == nil {
			break
		}
		s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID)
	}
	want := []string{"0/1/append", "1/2/append", "3/4/append"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("snapshot chain (statement/added-records/operation) %v, want %v", got, want)
	}
	if n := len(tbl.Metadata().Snapshots()); n != 3 {
		t.Errorf("%d snapshots, want 3", n)
	}
}
