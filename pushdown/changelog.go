package pushdown

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// ChangeRange is the snapshots whose changes a changelog read returns: those
// committed after After (exclusive; nil means from the first snapshot of To's
// history) up to and including To.
type ChangeRange struct {
	After *int64
	To    int64
}

// ErrNotAncestor means a changelog's start is not in the history of its end
// (after a rollback, or on another branch).
var ErrNotAncestor = errors.New("not an ancestor")

// PlanChanges plans the changelog of tbl over r, one ordinal per snapshot
// in commit order (replace snapshots, which change no rows, are skipped):
//
//   - a data file the snapshot added: its rows were inserted (less those the
//     snapshot's own delete files delete);
//   - a data file it removed: its rows live until then were deleted;
//   - delete files it added (merge-on-read DELETE, UPDATE, MERGE): for each
//     data file they apply to, the rows live before and not after were
//     deleted, a table.DeletedRowsScanTask (see ReadDeletedRows).
//
// iceberg-go's IncrementalChangelogScan does the first two and refuses the
// third, which is why icesql plans changes itself.
func PlanChanges(ctx context.Context, tbl *table.Table, r ChangeRange) ([]table.ChangelogScanTask, error) {
	chain, err := changeSnapshots(tbl, r)
	if err != nil {
		return nil, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	var tasks []table.ChangelogScanTask
	ordinal := 0
	for _, snap := range chain {
		if snap.Summary != nil && snap.Summary.Operation == table.OpReplace {
			continue
		}
		ch, err := snapshotChanges(ctx, fs, snap)
		if err != nil {
			return nil, err
		}
		var before *liveFiles
		if snap.ParentSnapshotID != nil && (len(ch.removedData) > 0 || len(ch.addedDeletes) > 0) {
			parent := meta.SnapshotByID(*snap.ParentSnapshotID)
			if parent == nil {
				return nil, fmt.Errorf("snapshot %d: parent %d has expired, so its changes cannot be read", snap.SnapshotID, *snap.ParentSnapshotID)
			}
			if before, err = live(ctx, fs, parent); err != nil {
				return nil, err
			}
		}
		for _, d := range ch.addedData {
			t, err := table.NewAddedRowsScanTask(d.file, applicable(ch.addedDeletes, d), ordinal, snap.SnapshotID)
			if err != nil {
				return nil, err
			}
			tasks = append(tasks, t)
		}
		removed := map[string]bool{}
		for _, d := range ch.removedData {
			removed[d.file.FilePath()] = true
			var existing []iceberg.DataFile
			if before != nil {
				existing = applicable(before.deletes, d)
			}
			t, err := table.NewDeletedDataFileScanTask(d.file, existing, ordinal, snap.SnapshotID)
			if err != nil {
				return nil, err
			}
			tasks = append(tasks, t)
		}
		if len(ch.addedDeletes) > 0 && before != nil {
			for _, d := range before.data {
				added := applicable(ch.addedDeletes, d)
				if len(added) == 0 || removed[d.file.FilePath()] {
					continue
				}
				t, err := table.NewDeletedRowsScanTask(d.file, added, applicable(before.deletes, d), ordinal, snap.SnapshotID)
				if err != nil {
					return nil, err
				}
				tasks = append(tasks, t)
			}
		}
		ordinal++
	}
	return tasks, nil
}

// changeSnapshots returns the snapshots of r, oldest first.
func changeSnapshots(tbl *table.Table, r ChangeRange) ([]table.Snapshot, error) {
	if r.After != nil && *r.After == r.To {
		return nil, nil
	}
	var chain []table.Snapshot
	found := r.After == nil
	for _, s := range table.AncestorsOf(r.To, tbl.Metadata().SnapshotByID) {
		if r.After != nil && s.SnapshotID == *r.After {
			found = true
			break
		}
		chain = append(chain, s)
	}
	if !found {
		return nil, fmt.Errorf("%w: snapshot %d is not an ancestor of snapshot %d, so there are no changes from one to the other", ErrNotAncestor, *r.After, r.To)
	}
	slices.Reverse(chain)
	return chain, nil
}

// fileEntry is a data or delete file with its data sequence number, which
// decides which delete files apply to which data files.
type fileEntry struct {
	file iceberg.DataFile
	seq  int64
}

// changes is what one snapshot's own manifest entries say it did.
type changes struct {
	addedData, removedData, addedDeletes []fileEntry
}

func snapshotChanges(ctx context.Context, fs icebergio.IO, snap table.Snapshot) (changes, error) {
	var ch changes
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return ch, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		if m.SnapshotID() != snap.SnapshotID {
			continue // carried over from an earlier snapshot
		}
		for entry, err := range m.Entries(fs, false) {
			if err != nil {
				return ch, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			if err := ctx.Err(); err != nil {
				return ch, err
			}
			if entry.SnapshotID() != snap.SnapshotID {
				continue
			}
			fe := fileEntry{file: entry.DataFile(), seq: entry.SequenceNum()}
			isData := fe.file.ContentType() == iceberg.EntryContentData
			switch {
			case entry.Status() == iceberg.EntryStatusADDED && isData:
				ch.addedData = append(ch.addedData, fe)
			case entry.Status() == iceberg.EntryStatusDELETED && isData:
				ch.removedData = append(ch.removedData, fe)
			case entry.Status() == iceberg.EntryStatusADDED:
				ch.addedDeletes = append(ch.addedDeletes, fe)
			}
		}
	}
	return ch, nil
}

// liveFiles is a snapshot's live data and delete files.
type liveFiles struct {
	data, deletes []fileEntry
}

func live(ctx context.Context, fs icebergio.IO, snap *table.Snapshot) (*liveFiles, error) {
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return nil, fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	lf := &liveFiles{}
	for _, m := range manifests {
		for entry, err := range m.Entries(fs, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			fe := fileEntry{file: entry.DataFile(), seq: entry.SequenceNum()}
			if fe.file.ContentType() == iceberg.EntryContentData {
				lf.data = append(lf.data, fe)
			} else {
				lf.deletes = append(lf.deletes, fe)
			}
		}
	}
	return lf, nil
}

// applicable returns the delete files of deletes that apply to data file d,
// by the spec's rules: a deletion vector or a position delete file that
// names its data file applies to that file only; other position deletes to
// the files of the same partition with a sequence number no greater; equality
// deletes to those with a smaller one, in the same partition unless the
// delete file is unpartitioned. Position delete files that apply may still
// hold positions of other files; the reader keeps the rows of d's path only.
func applicable(deletes []fileEntry, d fileEntry) []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, del := range deletes {
		f := del.file
		samePartition := f.SpecID() == d.file.SpecID() && reflect.DeepEqual(f.Partition(), d.file.Partition())
		switch {
		case f.ReferencedDataFile() != nil && *f.ReferencedDataFile() != "":
			if *f.ReferencedDataFile() != d.file.FilePath() {
				continue
			}
		case f.ContentType() == iceberg.EntryContentPosDeletes:
			if !samePartition || del.seq < d.seq {
				continue
			}
		case f.ContentType() == iceberg.EntryContentEqDeletes:
			if del.seq <= d.seq || (!samePartition && len(f.Partition()) > 0) {
				continue
			}
		}
		out = append(out, f)
	}
	return out
}

// OpenChange starts reading the rows of one changelog task, in the table's
// current schema. For a table.DeletedRowsScanTask these are the rows live
// before its added deletes, which ReadDeletedRows narrows to those deleted.
func OpenChange(ctx context.Context, tbl *table.Table, task table.ChangelogScanTask) (*Batches, error) {
	return Open(ctx, TableRead(ctx, tbl), []table.FileScanTask{task.ScanTask()})
}

// OpenAfterDeletes reads the rows of a table.DeletedRowsScanTask's data
// file that are still live after its added deletes. A new deletion vector
// replaces the file's previous one: it holds every deleted position.
func OpenAfterDeletes(ctx context.Context, tbl *table.Table, task table.DeletedRowsScanTask) (*Batches, error) {
	added := task.AddedDeletes()
	newDV := slices.ContainsFunc(added, isDeletionVector)
	var deletes []iceberg.DataFile
	for _, f := range task.ExistingDeletes() {
		if !newDV || !isDeletionVector(f) {
			deletes = append(deletes, f)
		}
	}
	deletes = append(deletes, added...)
	after, err := table.NewAddedRowsScanTask(task.File, deletes, task.ChangeOrdinal(), task.CommitSnapshotID())
	if err != nil {
		return nil, err
	}
	return Open(ctx, TableRead(ctx, tbl), []table.FileScanTask{after.ScanTask()})
}

func isDeletionVector(f iceberg.DataFile) bool { return f.FileFormat() == iceberg.PuffinFile }

// SnapshotAsOf returns the snapshot that was tbl's current snapshot at
// timestampMs: the last snapshot-log entry at or before that time. Of
// several commits in the same millisecond it is the last one, the state a
// reader at that time saw (iceberg-go's Table.SnapshotAsOf keeps the first).
func SnapshotAsOf(tbl *table.Table, timestampMs int64) (int64, bool) {
	var id int64
	found := false
	for entry := range tbl.Metadata().SnapshotLogs() {
		if entry.TimestampMs <= timestampMs {
			id, found = entry.SnapshotID, true
		}
	}
	return id, found
}
