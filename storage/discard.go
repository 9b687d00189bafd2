package storage

import (
	"context"
	"errors"
	"reflect"

	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// A commit attempt writes its snapshot's manifests and manifest list before
// it races for the next metadata version. An attempt that lost the race
// committed nothing, and nothing will ever reference what it wrote: those
// files are deleted at once, instead of piling up for remove_orphan_files
// (a 16-client contention run left 1,447 of them). Only a definite loss is
// cleaned up: table.ErrCommitFailed (the catalog refused the commit) or
// table.ErrCommitDiverged (refused before reaching the catalog); after any
// other error the catalog may have accepted the commit, and the files may
// be live.

// lostRace reports whether err says that a commit attempt committed nothing.
func lostRace(err error) bool {
	return errors.Is(err, table.ErrCommitFailed) || errors.Is(err, table.ErrCommitDiverged)
}

// commitTx commits tx, a transaction on tbl, deleting what it wrote when it
// loses the race. iceberg-go's own replays delete the manifest lists they
// rebuild, but not the first attempt's list nor the manifests.
func commitTx(ctx context.Context, tbl *table.Table, tx *table.Transaction) (*table.Table, error) {
	tc, err := tx.TableCommit()
	if err != nil {
		return nil, err
	}
	lists := manifestLists(tc.Updates) // before Commit, which may rebuild them
	out, err := tx.Commit(ctx)
	if err != nil && lostRace(err) {
		discardAttempt(ctx, tbl, tc.Updates, lists)
	}
	return out, err
}

// commitUpdates is cat.CommitTable of updates staged on tbl, deleting what
// they wrote when the commit loses the race.
func commitUpdates(ctx context.Context, cat catalog.Catalog, tbl *table.Table, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	meta, loc, err := cat.CommitTable(ctx, tbl.Identifier(), reqs, updates)
	if err != nil && lostRace(err) {
		discardAttempt(ctx, tbl, updates, manifestLists(updates))
	}
	return meta, loc, err
}

// manifestLists are the manifest lists of the snapshots updates add.
func manifestLists(updates []table.Update) []string {
	var out []string
	for _, s := range addedSnapshots(updates) {
		out = append(out, s.ManifestList)
	}
	return out
}

// discardAttempt deletes the manifest lists of a commit attempt that
// committed nothing, and the manifests its snapshots wrote (those whose
// added snapshot is theirs: snapshot ids are fresh, so no other snapshot
// can have written them). It is best effort: a file left behind is an
// orphan for remove_orphan_files, never a loss.
func discardAttempt(ctx context.Context, tbl *table.Table, updates []table.Update, lists []string) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return
	}
	for i, s := range addedSnapshots(updates) {
		snap := *s
		if i < len(lists) {
			snap.ManifestList = lists[i]
		}
		if manifests, err := snap.Manifests(fsys); err == nil {
			for _, m := range manifests {
				if m.SnapshotID() == snap.SnapshotID {
					_ = wfs.Remove(m.FilePath())
				}
			}
		}
		_ = wfs.Remove(snap.ManifestList)
		if s.ManifestList != snap.ManifestList {
			_ = wfs.Remove(s.ManifestList)
		}
	}
}

// addedSnapshots are the snapshots that updates add. Their update type is
// unexported, so they are reached by reflection.
func addedSnapshots(updates []table.Update) []*table.Snapshot {
	var out []*table.Snapshot
	for _, u := range updates {
		if u.Action() != table.UpdateAddSnapshot {
			continue
		}
		rv := reflect.ValueOf(u)
		if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct {
			continue
		}
		f := rv.Elem().FieldByName("Snapshot")
		if !f.IsValid() || f.Type() != reflect.TypeFor[*table.Snapshot]() || f.IsNil() {
			continue
		}
		out = append(out, f.Interface().(*table.Snapshot))
	}
	return out
}
