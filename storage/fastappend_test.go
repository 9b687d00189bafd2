package storage

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// TestFastAppendAsIcebergGo commits the same groups of appends to two
// tables, one through the fast append and one through iceberg-go's merge
// (or fast) append, and compares what a reader finds: every snapshot of the
// chain (sequence number, summary, row ids), every manifest list entry and
// every manifest entry with its data file's statistics. Merging is due every
// third manifest; a row deleted halfway gives the appends after it a delete
// manifest to carry forward, and a new warehouse handle on the fast side
// (a restart) must read what it carries and merges.
func TestFastAppendAsIcebergGo(t *testing.T) {
	ctx := context.Background()
	groups := [][]int{{1}, {2}, {3, 4}, {5}, {6, 7, 8}, {9}, {10}, {11, 12}}
	for _, version := range []string{"2", "3"} {
		for _, merge := range []string{"true", "false"} {
			t.Run("v"+version+"/merge="+merge, func(t *testing.T) {
				fastDir := t.TempDir()
				fast := openTestWarehouse(t, fastDir)
				slow := openTestWarehouse(t, t.TempDir())
				slow.slowAppends = true
				ident := table.Identifier{"db", "t"}
				tables := map[*Warehouse]*table.Table{}
				for _, w := range []*Warehouse{fast, slow} {
					mustCreateNamespace(t, w, "db")
					tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(iceberg.Properties{
						"format-version":                  version,
						table.ManifestMergeEnabledKey:     merge,
						table.ManifestMinMergeCountKey:    "3",
						table.ManifestTargetSizeBytesKey:  "1000000",
						"write.parquet.compression-codec": "zstd",
					}))
					if err != nil {
						t.Fatal(err)
					}
					tables[w] = tbl
				}
				var fastCommits int64
				for gi, g := range groups {
					if gi == 6 {
						// A new handle, as after a restart: it reads the
						// manifests it merges.
						fastCommits += fast.fastAppends.Load()
						tbl := tables[fast]
						fast = openTestWarehouse(t, fastDir)
						tables[fast] = tbl
					}
					if gi == 4 {
						// A row deleted: a delete manifest to carry forward.
						for _, w := range []*Warehouse{fast, slow} {
							tbl, err := w.LoadTable(ctx, ident)
							if err != nil {
								t.Fatal(err)
							}
							// The same data file name on both sides, for
							// delete files of the same size.
							target := dataFile(t, "file:///data/same.parquet", 2)
							var deletes []iceberg.DataFile
							if version == "2" {
								del, err := WritePositionDeletes(ctx, tbl, target, []int64{0})
								if err != nil {
									t.Fatal(err)
								}
								deletes = append(deletes, del)
							} else if deletes, _, err = WriteDeletionVectors(ctx, tbl, []DVTarget{{File: target, Positions: []int64{0}}}); err != nil {
								t.Fatal(err)
							}
							if _, err := CommitRowDelta(ctx, w, ident, RowDelta{Deletes: deletes}, nil); err != nil {
								t.Fatal(err)
							}
						}
					}
					for _, w := range []*Warehouse{fast, slow} {
						var group []*groupedAppend
						for _, stmt := range g {
							ids := []int64{int64(stmt * 10), int64(stmt*10 + 1)}[:1+stmt%2]
							group = append(group, &groupedAppend{
								files:   writeFile(t, tables[w], ids...),
								summary: iceberg.Properties{"statement": fmt.Sprint(stmt)},
							})
						}
						w.commitGroup(ctx, ident, group)
						for _, a := range group {
							if a.err != nil {
								t.Fatalf("group %v: %v", g, a.err)
							}
						}
					}
				}
				if n := fastCommits + fast.fastAppends.Load(); n != int64(len(groups)) {
					t.Errorf("%d of %d commits were fast appends", n, len(groups))
				}
				if slow.fastAppends.Load() != 0 {
					t.Errorf("the iceberg-go side made %d fast appends", slow.fastAppends.Load())
				}
				got, want := describeTable(t, fast, ident), describeTable(t, slow, ident)
				if len(got) != len(want) {
					t.Fatalf("fast append: %d lines, iceberg-go: %d\n%s\n---\n%s", len(got), len(want), strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				for i := range got {
					if got[i] != want[i] {
						t.Errorf("line %d:\n fast append %s\n iceberg-go  %s", i, got[i], want[i])
					}
				}
			})
		}
	}
}

// describeTable lists what a reader of the table finds, with snapshot ids
// replaced by their place in the main branch's chain, and no file names
// (each table's files have names of their own).
func describeTable(t *testing.T, w *Warehouse, ident table.Identifier) []string {
	t.Helper()
	ctx := context.Background()
	tbl, err := w.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	meta := tbl.Metadata()
	var chain []*table.Snapshot
	for s := tbl.CurrentSnapshot(); s != nil; {
		chain = append([]*table.Snapshot{s}, chain...)
		if s.ParentSnapshotID == nil {
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	place := map[int64]int{}
	for i, s := range chain {
		place[s.SnapshotID] = i
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{fmt.Sprintf("snapshots=%d last-sequence-number=%d next-row-id=%d", len(meta.Snapshots()), meta.LastSequenceNumber(), meta.NextRowID())}
	for i, s := range chain {
		props := s.Summary.Properties
		var summary []string
		for _, k := range slices.Sorted(maps.Keys(props)) {
			summary = append(summary, k+"="+props[k])
		}
		out = append(out, fmt.Sprintf("snapshot %d: seq=%d op=%s schema=%v first-row-id=%v added-rows=%v %s",
			i, s.SequenceNumber, s.Summary.Operation, deref(s.SchemaID), deref(s.FirstRowID), deref(s.AddedRows), strings.Join(summary, ",")))
		manifests, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range manifests {
			out = append(out, fmt.Sprintf("  manifest content=%v spec=%d seq=%d min-seq=%d added-by=%d files=%d/%d/%d rows=%d/%d/%d partitions=%d first-row-id=%v",
				m.ManifestContent(), m.PartitionSpecID(), m.SequenceNum(), m.MinSequenceNum(), place[m.SnapshotID()],
				m.AddedDataFiles(), m.ExistingDataFiles(), m.DeletedDataFiles(), m.AddedRows(), m.ExistingRows(), m.DeletedRows(),
				len(m.Partitions()), deref(m.FirstRowID())))
			for e, err := range m.Entries(fsys, false) {
				if err != nil {
					t.Fatal(err)
				}
				df := e.DataFile()
				out = append(out, fmt.Sprintf("    entry status=%v snapshot=%d seq=%d file-seq=%v content=%v format=%s spec=%d rows=%d size=%d sizes=%v values=%v nulls=%v nans=%v lower=%v upper=%v splits=%v sort=%v first-row-id=%v key=%v eq=%v partition=%v",
					e.Status(), place[e.SnapshotID()], e.SequenceNum(), deref(e.FileSequenceNum()), df.ContentType(), df.FileFormat(), df.SpecID(),
					df.Count(), df.FileSizeBytes(), df.ColumnSizes(), df.ValueCounts(), df.NullValueCounts(), df.NaNValueCounts(),
					df.LowerBoundValues(), df.UpperBoundValues(), df.SplitOffsets(), deref(df.SortOrderID()), deref(df.FirstRowID()),
					df.KeyMetadata(), df.EqualityFieldIDs(), df.Partition()))
			}
		}
	}
	return out
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestFastAppendNeverBeforeItsParent gives a table a head snapshot stamped
// an hour ahead (another writer's clock) and checks that the fast append's
// snapshot is not older than its parent: TIMESTAMP AS OF picks snapshots by
// the log, whose order must follow the chain.
func TestFastAppendNeverBeforeItsParent(t *testing.T) {
	ctx := context.Background()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1), nil); err != nil {
		t.Fatal(err)
	}
	head := tbl.CurrentSnapshot()
	ahead := *head
	ahead.SnapshotID, ahead.ParentSnapshotID = head.SnapshotID+1, &head.SnapshotID
	ahead.SequenceNumber = head.SequenceNumber + 1
	ahead.TimestampMs = head.TimestampMs + 3_600_000
	if _, _, err := w.CommitTable(ctx, ident, nil, []table.Update{
		table.NewAddSnapshotUpdate(&ahead),
		table.NewSetSnapshotRefUpdate(table.MainBranch, ahead.SnapshotID, table.BranchRef, 0, 0, 0),
	}); err != nil {
		t.Fatal(err)
	}
	before := w.fastAppends.Load()
	if tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 2), nil); err != nil {
		t.Fatal(err)
	}
	if w.fastAppends.Load() == before {
		t.Fatal("the append was not a fast append")
	}
	s := tbl.CurrentSnapshot()
	if *s.ParentSnapshotID != ahead.SnapshotID || s.TimestampMs < ahead.TimestampMs {
		t.Errorf("snapshot at %d on parent %d, want on %d at %d or later", s.TimestampMs, *s.ParentSnapshotID, ahead.SnapshotID, ahead.TimestampMs)
	}
}

// TestKeptListsBounded checks the bounds of what the fast append keeps: a
// table with more data file entries than one may keep keeps its list
// without them, and the entries of all tables stay within their bound.
func TestKeptListsBounded(t *testing.T) {
	var k keptLists
	list := func(path string, files int) (keptManifestList, map[string][]keptEntry) {
		m := manifestRecord{path: path + "-m1.avro", content: iceberg.ManifestContentData}
		return keptManifestList{path: path, entries: []manifestRecord{m}}, map[string][]keptEntry{m.path: make([]keptEntry, files)}
	}
	big := uuid.New()
	l, files := list("big", keptFilesPerTable+1)
	k.put(big, l, files)
	if got, ok := k.get(big, "big"); !ok || len(got.entries) != 1 || got.fileCount() != 0 {
		t.Errorf("a table over the bound: kept %v, %d entries, %d files", ok, len(got.entries), got.fileCount())
	}
	first := uuid.New()
	for i := range 2 * keptFiles / keptFilesPerTable {
		id := uuid.New()
		if i == 0 {
			id = first
		}
		l, files := list(fmt.Sprint(i), keptFilesPerTable)
		k.put(id, l, files)
		if k.files > keptFiles {
			t.Fatalf("after %d tables %d files kept, over %d", i+1, k.files, keptFiles)
		}
		if got, ok := k.get(id, fmt.Sprint(i)); !ok || got.fileCount() != keptFilesPerTable {
			t.Fatalf("table %d: its own list is not kept whole", i)
		}
	}
	if _, ok := k.get(first, "0"); ok {
		t.Error("the first table's entries outlived twice the bound")
	}
}
