package storage

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// TestWithPropertiesSharesHistory checks that a table given other
// properties for a write (engine.writeTable, the append defaults) hands its
// writers metadata that a MetadataBuilder starts from without copying the
// history. The engine used to build new metadata with the properties, which
// the writer's builder then deep-copied, a map per snapshot: a single-row
// INSERT's cost grew with the table's history (at 10,000 snapshots, a third
// of its CPU). The allocation count stands in for that cost; the old way is
// measured too, so the test shows what it tells apart.
func TestWithPropertiesSharesHistory(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(iceberg.Properties{"format-version": "2"}))
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	// A long history, built in memory: each snapshot a child of the last.
	const history = 2000
	meta := tbl.Metadata()
	cur := meta.CurrentSnapshot()
	var updates []table.Update
	for i := int64(1); i <= history; i++ {
		s := *cur
		s.SnapshotID, s.SequenceNumber, s.TimestampMs = cur.SnapshotID+i, cur.SequenceNumber+i, cur.TimestampMs+i
		parent := s.SnapshotID - 1
		s.ParentSnapshotID = &parent
		s.Summary = &table.Summary{Operation: table.OpAppend, Properties: iceberg.Properties{"added-records": fmt.Sprint(i)}}
		updates = append(updates, table.NewAddSnapshotUpdate(&s), table.NewSetSnapshotRefUpdate(table.MainBranch, s.SnapshotID, table.BranchRef, -1, -1, -1))
	}
	long, err := table.UpdateTableMetadata(share(meta), updates, tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	tbl = table.New(ident, share(long), tbl.MetadataLocation(), tbl.FS, w)

	set := iceberg.Properties{table.ParquetRowGroupSizeBytesKey: "1048576"}
	wt := WithProperties(tbl, set, nil)
	if got := wt.Properties()[table.ParquetRowGroupSizeBytesKey]; got != "1048576" {
		t.Fatalf("property %s = %q, want 1048576", table.ParquetRowGroupSizeBytesKey, got)
	}
	if got, want := len(wt.Metadata().Snapshots()), len(long.Snapshots()); got != want {
		t.Fatalf("the wrapped metadata has %d snapshots, want %d", got, want)
	}
	if _, set := tbl.Properties()[table.ParquetRowGroupSizeBytesKey]; set {
		t.Fatal("WithProperties changed the table's own properties")
	}
	builderAllocs := func(meta table.Metadata) float64 {
		return testing.AllocsPerRun(3, func() {
			if _, err := table.MetadataBuilderFromBase(meta, tbl.MetadataLocation()); err != nil {
				t.Fatal(err)
			}
		})
	}
	if n := builderAllocs(wt.Metadata()); n >= history {
		t.Errorf("a builder from the wrapped metadata allocates %v times, want fewer than one per snapshot (%d)", n, history)
	}
	// The old way: new metadata built with the properties.
	b, err := table.MetadataBuilderFromBase(tbl.Metadata(), tbl.MetadataLocation())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.SetProperties(set); err != nil {
		t.Fatal(err)
	}
	built, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if n := builderAllocs(built); n < history {
		t.Errorf("a builder from rebuilt metadata allocates %v times; the test no longer measures the copy it guards against", n)
	}
}
