package storage

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Cherrypick applies snapshot id's changes to main, as Java's
// ManageSnapshots.cherrypick does. When the snapshot's parent is main's
// current snapshot, main simply moves to it (a fast-forward, no new
// snapshot). Otherwise an append snapshot's added files are appended to main
// in a new snapshot whose summary names its source (and the WAP id it
// publishes); snapshots of other operations can only be fast-forwarded to.
// It returns main's snapshot afterwards.
func Cherrypick(ctx context.Context, cat catalog.Catalog, ident table.Identifier, id int64, summary iceberg.Properties) (int64, error) {
	tbl, err := retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		meta := tbl.Metadata()
		snap := meta.SnapshotByID(id)
		if snap == nil {
			return nil, refErr(ErrRefChange, "Cannot cherry-pick unknown snapshot ID: %d", id)
		}
		wapID := summaryValue(snap, WapIDProperty)
		isAppend := snap.Summary != nil && snap.Summary.Operation == table.OpAppend
		if isAppend && wapID != "" && wapPublished(meta, wapID) {
			return nil, refErr(ErrRefChange, "Duplicate request to cherry pick wap id that was published already: %s", wapID)
		}
		cur := tbl.CurrentSnapshot()
		if isFastForward(cur, snap) {
			return fastForwardMain(ctx, cat, tbl, cur, snap)
		}
		if !isAppend {
			return nil, refErr(ErrRefChange, "Cannot cherry-pick snapshot %d: not append, dynamic overwrite, or fast-forward", id)
		}
		if cur != nil && IsAncestor(meta, id, cur.SnapshotID) {
			return nil, refErr(ErrRefChange, "Cannot cherrypick snapshot %d: already an ancestor", id)
		}
		if picked, ok := pickedInto(meta, cur, id); ok {
			return nil, refErr(ErrRefChange, "Cannot cherrypick snapshot %d: already picked to create ancestor %d", id, picked)
		}
		files, err := addedDataFiles(ctx, tbl, snap)
		if err != nil {
			return nil, err
		}
		props := iceberg.Properties{SourceSnapshotProperty: strconv.FormatInt(id, 10)}
		if wapID != "" {
			props[PublishedWapIDProperty] = wapID
		}
		for k, v := range summary {
			props[k] = v
		}
		tx := tbl.NewTransaction()
		if len(files) == 0 {
			// iceberg-go commits nothing for an append of no files; an empty
			// append still gets its own snapshot, as in Java.
			rr, err := emptyRecords(tbl)
			if err != nil {
				return nil, err
			}
			defer rr.Release()
			if err := tx.Append(ctx, rr, props); err != nil {
				return nil, err
			}
		} else if err := tx.AddDataFiles(ctx, files, props, table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping()); err != nil {
			return nil, fmt.Errorf("cherry-pick snapshot %d into %s: %w", id, ident, err)
		}
		return commitTx(ctx, tbl, tx)
	})
	if err != nil {
		return 0, err
	}
	return tbl.CurrentSnapshot().SnapshotID, nil
}

// isFastForward reports whether main can simply move to snap: its parent is
// main's current snapshot (or both are absent).
func isFastForward(cur, snap *table.Snapshot) bool {
	if cur == nil {
		return snap.ParentSnapshotID == nil
	}
	return snap.ParentSnapshotID != nil && *snap.ParentSnapshotID == cur.SnapshotID
}

// fastForwardMain points main at snap, which descends from cur.
func fastForwardMain(ctx context.Context, cat catalog.Catalog, tbl *table.Table, cur, snap *table.Snapshot) (*table.Table, error) {
	var was *int64
	old, _ := RefNamed(tbl.Metadata(), table.MainBranch)
	if cur != nil {
		was = &cur.SnapshotID
	}
	reqs, ups := setRef(table.MainBranch, snap.SnapshotID, table.BranchRef, RefRetention{}.merged(old), was)
	reqs = append(reqs, table.AssertTableUUID(tbl.Metadata().TableUUID()))
	meta, loc, err := cat.CommitTable(ctx, tbl.Identifier(), reqs, ups)
	if err != nil {
		return nil, err
	}
	return table.New(tbl.Identifier(), meta, loc, tbl.FS, nil), nil
}

func summaryValue(snap *table.Snapshot, key string) string {
	if snap == nil || snap.Summary == nil {
		return ""
	}
	return snap.Summary.Properties[key]
}

// ancestors calls yield for cur and each of its parents, newest first.
func ancestors(meta table.Metadata, cur *table.Snapshot, yield func(*table.Snapshot) bool) {
	for snap := cur; snap != nil; {
		if !yield(snap) || snap.ParentSnapshotID == nil {
			return
		}
		snap = meta.SnapshotByID(*snap.ParentSnapshotID)
	}
}

// wapPublished reports whether main's history already holds wapID, staged
// or published.
func wapPublished(meta table.Metadata, wapID string) bool {
	found := false
	ancestors(meta, meta.CurrentSnapshot(), func(s *table.Snapshot) bool {
		found = summaryValue(s, WapIDProperty) == wapID || summaryValue(s, PublishedWapIDProperty) == wapID
		return !found
	})
	return found
}

// pickedInto finds the ancestor of cur that a cherry-pick of id created.
func pickedInto(meta table.Metadata, cur *table.Snapshot, id int64) (int64, bool) {
	var picked int64
	want := strconv.FormatInt(id, 10)
	ancestors(meta, cur, func(s *table.Snapshot) bool {
		if summaryValue(s, SourceSnapshotProperty) == want {
			picked = s.SnapshotID
		}
		return picked == 0
	})
	return picked, picked != 0
}

// addedDataFiles are the data files snap itself added.
func addedDataFiles(ctx context.Context, tbl *table.Table, snap *table.Snapshot) ([]iceberg.DataFile, error) {
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	var files []iceberg.DataFile
	for _, m := range manifests {
		if m.SnapshotID() != snap.SnapshotID {
			continue
		}
		for entry, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			if entry.Status() == iceberg.EntryStatusADDED && entry.SnapshotID() == snap.SnapshotID &&
				entry.DataFile().ContentType() == iceberg.EntryContentData {
				files = append(files, entry.DataFile())
			}
		}
	}
	return files, nil
}
