package storage

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/google/uuid"
)

// Format-version 3 tables delete rows with deletion vectors (DVs): a
// roaring bitmap of the deleted positions of one data file, stored as a
// `deletion-vector-v1` blob of a Puffin file, whose manifest entry names
// the data file (referenced_data_file) and where the blob lies in the
// Puffin file (content_offset, content_size_in_bytes). The spec allows at
// most one live DV per data file, and once a file has a DV readers ignore
// its position-delete files (iceberg-go's reader does, as Java's). So a new
// DV must hold every position already deleted: the old DV's and, on a table
// upgraded from v2, those of the position-delete files that apply to the
// file, as Spark (Java's BaseDVFileWriter with previous deletes) does; the
// old DV is removed in the same snapshot. The format is iceberg-go's own
// writer (table/dv), the one its merge-on-read Delete uses.

// DVTarget is a data file to delete rows of, as a statement saw it.
type DVTarget struct {
	File iceberg.DataFile
	// Positions are the newly deleted row positions.
	Positions []int64
	// Deletes are the delete files that applied to File when the
	// statement read it (its scan task's DeleteFiles).
	Deletes []iceberg.DataFile
}

// WriteDeletionVectors writes one Puffin file holding one DV per target,
// each the union of the target's new positions and those of the DV and
// position-delete files already applying to its data file. It returns the
// DVs' manifest entries and the DVs they supersede, which the commit must
// remove.
func WriteDeletionVectors(ctx context.Context, tbl *table.Table, targets []DVTarget) (dvs, superseded []iceberg.DataFile, err error) {
	if len(targets) == 0 {
		return nil, nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, nil, err
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return nil, nil, fmt.Errorf("deletion vectors of %s: the table's file IO cannot write", tbl.Identifier())
	}
	meta := tbl.Metadata()
	w := dv.NewDVWriter(wfs, func(id int32) *iceberg.PartitionSpec { return meta.PartitionSpecByID(int(id)) })
	for _, t := range targets {
		path := t.File.FilePath()
		old, err := previousDeletes(ctx, fsys, path, t.Deletes)
		if err != nil {
			return nil, nil, fmt.Errorf("deletion vector of %s: %w", path, err)
		}
		if old.dv != nil {
			superseded = append(superseded, old.dv)
		}
		if !old.positions.IsEmpty() {
			w.Load(path, old.positions, t.File.SpecID(), t.File.Partition())
		}
		if err := w.Add(path, t.Positions, t.File.SpecID(), t.File.Partition()); err != nil {
			return nil, nil, fmt.Errorf("deletion vector of %s: %w", path, err)
		}
	}
	locs, err := table.LoadLocationProvider(tbl.Location(), tbl.Properties())
	if err != nil {
		return nil, nil, err
	}
	location := locs.NewDataLocation(uuid.NewString() + "-deletes.puffin")
	if dvs, err = w.Flush(ctx, location); err != nil {
		return nil, nil, fmt.Errorf("write deletion vectors %s: %w", location, err)
	}
	return dvs, superseded, nil
}

// previous is what the delete files of one data file already delete.
type previous struct {
	positions *dv.RoaringPositionBitmap
	dv        iceberg.DataFile // the live DV, if any
}

// previousDeletes reads the positions of path that deletes (the delete
// files applying to it) delete. Equality deletes hold no positions and
// stay as they are.
func previousDeletes(ctx context.Context, fsys icebergio.IO, path string, deletes []iceberg.DataFile) (previous, error) {
	out := previous{positions: dv.NewRoaringPositionBitmap()}
	for _, d := range deletes {
		if d.ContentType() != iceberg.EntryContentPosDeletes {
			continue
		}
		if table.IsDeletionVector(d) {
			if ref := d.ReferencedDataFile(); ref == nil || *ref != path {
				continue
			}
			if out.dv != nil {
				return out, fmt.Errorf("two deletion vectors apply to it: %s and %s", out.dv.FilePath(), d.FilePath())
			}
			bm, err := dv.ReadDV(fsys, d)
			if err != nil {
				return out, fmt.Errorf("read deletion vector %s: %w", d.FilePath(), err)
			}
			out.positions.Or(bm)
			out.dv = d
			continue
		}
		rows, err := ReadPositionDeletes(ctx, fsys, d.FilePath())
		if err != nil {
			return out, err
		}
		for _, r := range rows {
			if r.Path == path {
				out.positions.Set(uint64(r.Pos))
			}
		}
	}
	return out, nil
}

// IsDeletionVector reports whether f is a DV (a Puffin position delete).
func IsDeletionVector(f iceberg.DataFile) bool { return table.IsDeletionVector(f) }

// SameDeleteFile reports whether a and b are the same delete-file entry:
// DVs share a Puffin file, so they are told apart by the data file they
// reference.
func SameDeleteFile(a, b iceberg.DataFile) bool {
	if a.FilePath() != b.FilePath() {
		return false
	}
	ra, rb := a.ReferencedDataFile(), b.ReferencedDataFile()
	return (ra == nil) == (rb == nil) && (ra == nil || *ra == *rb)
}

// replaceWithDVs stages a change that removes data files whole and adds
// others (copy-on-write on v3) together with the removal of the removed
// files' DVs, which would otherwise stay live and name files no snapshot
// holds (Java removes such dangling DVs in the same commit too).
func replaceWithDVs(ctx context.Context, tx *table.Transaction, d RowDelta, summary iceberg.Properties) (table.Operation, error) {
	if err := tx.ReplaceFiles(ctx, d.Removed, d.Added, d.RemovedDeletes, summary, table.WithoutAutoNameMapping()); err != nil {
		return "", err
	}
	if len(d.Added) == 0 {
		return table.OpDelete, nil
	}
	return table.OpOverwrite, nil
}

// removalsAsDVs is removalsAsDeletes on a v3 table: each removed data file
// gets a DV deleting all its rows, which supersedes its committed DV (in
// d.RemovedDeletes) if it had one. A DV staged for such a file by an
// earlier statement of the transaction is dropped: the full one covers it.
func removalsAsDVs(ctx context.Context, tbl *table.Table, d RowDelta) (RowDelta, error) {
	removed := map[string]bool{}
	for _, f := range d.Removed {
		removed[f.FilePath()] = true
	}
	var deletes []iceberg.DataFile
	for _, f := range d.Deletes {
		if ref := f.ReferencedDataFile(); ref != nil && removed[*ref] && IsDeletionVector(f) {
			continue
		}
		deletes = append(deletes, f)
	}
	var targets []DVTarget
	for _, f := range d.Removed {
		pos := make([]int64, f.Count())
		for i := range pos {
			pos[i] = int64(i)
		}
		targets = append(targets, DVTarget{File: f, Positions: pos})
	}
	dvs, _, err := WriteDeletionVectors(ctx, tbl, targets)
	if err != nil {
		return d, err
	}
	d.Deletes = append(deletes, dvs...)
	d.Removed = nil
	return d, nil
}

// ReplaceDataFiles stages on tx, a transaction on tbl, the removal of whole
// data files and the addition of new ones. On a v3 table the new files get
// row ids and the removed files' DVs are removed with them.
func ReplaceDataFiles(ctx context.Context, tbl *table.Table, tx *table.Transaction, removed, added []iceberg.DataFile, summary iceberg.Properties) error {
	opts := []table.WriteOption{table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping()}
	if tbl.Metadata().Version() < 3 {
		return tx.ReplaceDataFilesWithDataFiles(ctx, removed, added, summary, opts...)
	}
	added, err := WithFirstRowIDs(tbl.Metadata(), added)
	if err != nil {
		return err
	}
	dvs, err := liveDVsOf(ctx, tbl, removed)
	if err != nil {
		return err
	}
	return tx.ReplaceFiles(ctx, removed, added, dvs, summary, opts...)
}

// liveDVsOf lists the DVs of tbl's current snapshot that apply to files.
func liveDVsOf(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) ([]iceberg.DataFile, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil || len(files) == 0 {
		return nil, nil
	}
	paths := make(map[string]bool, len(files))
	for _, f := range files {
		paths[f.FilePath()] = true
	}
	var out []iceberg.DataFile
	err := EachLiveDeleteFile(ctx, tbl, snap, func(e iceberg.ManifestEntry) {
		df := e.DataFile()
		if ref := df.ReferencedDataFile(); ref != nil && paths[*ref] && IsDeletionVector(df) {
			out = append(out, df)
		}
	})
	return out, err
}

// EachLiveDeleteFile calls fn with the manifest entry of each live delete
// file (position, equality or deletion vector) of snapshot snap of tbl.
func EachLiveDeleteFile(ctx context.Context, tbl *table.Table, snap *table.Snapshot, fn func(iceberg.ManifestEntry)) error {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	manifests, err := snap.Manifests(fsys)
	if err != nil {
		return fmt.Errorf("read manifest list of snapshot %d: %w", snap.SnapshotID, err)
	}
	for _, m := range manifests {
		if m.ManifestContent() != iceberg.ManifestContentDeletes {
			continue
		}
		//lint:ignore SA1019 the whole manifest at once through ReadManifest, the reader the legacy-manifest and codec tests cover; Entries streams through another decoder
		entries, err := m.FetchEntries(fsys, true)
		if err != nil {
			return fmt.Errorf("read delete manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			fn(e)
		}
	}
	return nil
}
