package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// RowDelta is what row-level statements (DELETE, UPDATE, MERGE) of one
// transaction change in one table: data files added, committed data files
// removed whole (copy-on-write rewrites, and files every row of which was
// deleted), and position-delete files added (merge-on-read).
type RowDelta struct {
	Added   []iceberg.DataFile
	Removed []iceberg.DataFile
	Deletes []iceberg.DataFile
	// RemovedDeletes are committed deletion vectors the changes supersede
	// (format v3, dv.go): the old DV of a file given a new one, and the DV
	// of a data file removed whole.
	RemovedDeletes []iceberg.DataFile

	// Validate asks that commits made since Base, the snapshot the
	// statements read (nil: the table had none), be checked against the
	// changes. Changes that read nothing (a whole-table replacement) need not.
	Validate bool
	Base     *int64
	// Serializable asks that no data file committed since Base could hold
	// rows matching Filter (nil: any row); without it (snapshot isolation)
	// only changes to the same data files conflict.
	Serializable bool
	Filter       iceberg.BooleanExpression

	// Branch is the branch the changes commit to ("" is main); Base is
	// then a snapshot of its ancestry (branchrowdelta.go).
	Branch string

	// ReadAt is the metadata a transaction read the table at with reads
	// that must stay unchanged until it commits (readcheck.go); nil for
	// none. The commit fails if rows changed since, checked on the same
	// reload the commit builds on.
	ReadAt table.Metadata
}

// ErrRowConflict is returned when a commit made since the statements' base
// snapshot changed what they changed; retrying the statements on the new
// snapshot is the only way forward.
var ErrRowConflict = errors.New("row-level change conflicts with a concurrent commit")

func (d RowDelta) hasRowChanges() bool { return len(d.Removed) > 0 || len(d.Deletes) > 0 }

// CommitRowDelta commits d as one snapshot: an append when it only adds
// data files (validated when d.Validate asks, as for an INSERT OVERWRITE
// of rows nobody had committed yet), a delete when it only removes rows, an overwrite when it does
// both (Spark's operation names). On a lost race the table is reloaded, the
// commits made since Base are checked against d, and the commit is replayed
// on the new snapshot when they do not conflict.
func CommitRowDelta(ctx context.Context, cat catalog.Catalog, ident table.Identifier, d RowDelta, summary iceberg.Properties) (*table.Table, error) {
	if !d.hasRowChanges() && !d.Validate && d.ReadAt == nil {
		return AppendFilesToBranch(ctx, cat, ident, d.Branch, d.Added, summary)
	}
	if len(d.Removed) > 0 && len(d.Deletes) > 0 {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		if d, err = removalsAsDeletes(ctx, tbl, d); err != nil {
			return nil, err
		}
	}
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		if err := validateSince(ctx, tbl, d); err != nil {
			return nil, err
		}
		if err := checkRead(tbl, ident, d.ReadAt); err != nil {
			return nil, err
		}
		tx, err := newTransactionOn(tbl, d.Branch)
		if err != nil {
			return nil, err
		}
		op, err := ApplyRowDelta(ctx, tbl, tx, d, summary)
		if err != nil {
			return nil, fmt.Errorf("stage row changes of %s: %w", ident, err)
		}
		tc, err := tx.TableCommit()
		if err != nil {
			return nil, fmt.Errorf("commit row changes of %s: %w", ident, err)
		}
		setOperation(tc.Updates, op)
		meta, loc, err := commitUpdates(ctx, cat, tbl, baseRequirements(tc.Requirements), tc.Updates)
		if err != nil {
			return nil, err
		}
		tx.MarkCommitted()
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}

// ValidateRowDelta checks d against the table's newest metadata as its
// commit would, without committing: a transaction that changes several
// tables checks them all before it commits the first.
func ValidateRowDelta(ctx context.Context, cat catalog.Catalog, ident table.Identifier, d RowDelta) error {
	if !d.Validate && d.ReadAt == nil {
		return nil
	}
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	if err := validateSince(ctx, tbl, d); err != nil {
		return err
	}
	return checkRead(tbl, ident, d.ReadAt)
}

// ApplyRowDelta stages d on tx, a transaction on tbl, for a commit or for
// the reads of the open transaction, and returns the operation the snapshot
// should carry.
func ApplyRowDelta(ctx context.Context, tbl *table.Table, tx *table.Transaction, d RowDelta, summary iceberg.Properties) (table.Operation, error) {
	if len(d.Removed) > 0 && len(d.Deletes) > 0 {
		var err error
		if d, err = removalsAsDeletes(ctx, tbl, d); err != nil {
			return "", err
		}
	}
	var err error
	if d.Added, err = WithFirstRowIDs(tbl.Metadata(), d.Added); err != nil {
		return "", err
	}
	if len(d.RemovedDeletes) > 0 && len(d.Deletes) == 0 {
		return replaceWithDVs(ctx, tx, d, summary)
	}
	switch {
	case len(d.Deletes) > 0:
		rd := tx.NewRowDelta(summary).AddRows(d.Added...).AddDeletes(d.Deletes...).RemoveDeletes(d.RemovedDeletes...)
		if len(d.Added) > 0 {
			return table.OpOverwrite, rd.Commit(ctx)
		}
		return table.OpDelete, rd.Commit(ctx)
	case len(d.Removed) > 0:
		if err := tx.ReplaceDataFilesWithDataFiles(ctx, d.Removed, d.Added, summary, table.WithoutAutoNameMapping()); err != nil {
			return "", err
		}
		if len(d.Added) == 0 {
			return table.OpDelete, nil
		}
		return table.OpOverwrite, nil
	case len(d.Added) > 0:
		return table.OpAppend, tx.AddDataFiles(ctx, d.Added, summary, table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping())
	}
	return "", nil
}

// setOperation gives the staged snapshot Spark's operation name:
// iceberg-go calls any commit that removes data files an overwrite, also
// one that only removes them, which Spark and Java Iceberg call a delete.
// The snapshot is reached by reflection because its update type is
// unexported; when that fails the operation stays as iceberg-go set it.
func setOperation(updates []table.Update, op table.Operation) {
	if op == "" {
		return
	}
	for _, snap := range addedSnapshots(updates) {
		if snap.Summary != nil {
			snap.Summary.Operation = op
		}
	}
}

// removalsAsDeletes turns each removed data file into a position-delete
// file deleting all its rows: iceberg-go has no single operation that
// removes data files and adds delete files, which a transaction mixing
// copy-on-write and merge-on-read statements needs.
func removalsAsDeletes(ctx context.Context, tbl *table.Table, d RowDelta) (RowDelta, error) {
	if tbl.Metadata().Version() >= 3 {
		return removalsAsDVs(ctx, tbl, d)
	}
	for _, f := range d.Removed {
		pos := make([]int64, f.Count())
		for i := range pos {
			pos[i] = int64(i)
		}
		del, err := WritePositionDeletes(ctx, tbl, f, pos)
		if err != nil {
			return d, err
		}
		d.Deletes = append(d.Deletes, del)
	}
	d.Removed = nil
	return d, nil
}

// validateSince checks the commits made after d.Base against d: a data
// file d removes or deletes rows from must not have been removed or given
// new deletes meanwhile, and under serializable isolation no data file
// added meanwhile may hold rows d's filter could match.
func validateSince(ctx context.Context, tbl *table.Table, d RowDelta) error {
	cur := headOf(tbl, d.Branch)
	if !d.Validate || cur == nil || (d.Base != nil && cur.SnapshotID == *d.Base) {
		return nil
	}
	meta := tbl.Metadata()
	var since []*table.Snapshot
	for s := cur; s != nil; {
		if d.Base != nil && s.SnapshotID == *d.Base {
			break
		}
		since = append(since, s)
		if s.ParentSnapshotID == nil {
			if d.Base != nil {
				return fmt.Errorf("%w: snapshot %d the statement read is no longer an ancestor of the snapshot the commit builds on", ErrRowConflict, *d.Base)
			}
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	touched := map[string]iceberg.DataFile{}
	for _, f := range d.Removed {
		touched[f.FilePath()] = f
	}
	for _, f := range d.Deletes {
		if ref := f.ReferencedDataFile(); ref != nil {
			touched[*ref] = f
		}
	}
	added := map[string]int64{}
	for _, s := range since {
		if err := changesOf(fsys, s, func(status iceberg.ManifestEntryStatus, f iceberg.DataFile) error {
			return checkChange(s.SnapshotID, status, f, touched, added)
		}); err != nil {
			return err
		}
	}
	if !d.Serializable || len(added) == 0 {
		return nil
	}
	return checkAddedRows(ctx, tbl, cur, d.Filter, added)
}

// changesOf calls visit for each file snapshot s added or removed.
func changesOf(fsys icebergio.IO, s *table.Snapshot, visit func(iceberg.ManifestEntryStatus, iceberg.DataFile) error) error {
	manifests, err := s.Manifests(fsys)
	if err != nil {
		return fmt.Errorf("read manifest list of snapshot %d: %w", s.SnapshotID, err)
	}
	for _, m := range manifests {
		if m.SnapshotID() != s.SnapshotID {
			continue // written by an earlier snapshot: holds no change of s
		}
		//lint:ignore SA1019 the whole manifest at once through ReadManifest, the reader the legacy-manifest and codec tests cover; Entries streams through another decoder
		entries, err := m.FetchEntries(fsys, false)
		if err != nil {
			return fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
		}
		for _, e := range entries {
			if e.SnapshotID() != s.SnapshotID || e.Status() == iceberg.EntryStatusEXISTING {
				continue
			}
			if err := visit(e.Status(), e.DataFile()); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkChange(snap int64, status iceberg.ManifestEntryStatus, f iceberg.DataFile, touched map[string]iceberg.DataFile, added map[string]int64) error {
	switch f.ContentType() {
	case iceberg.EntryContentData:
		if status == iceberg.EntryStatusDELETED {
			if _, ok := touched[f.FilePath()]; ok {
				return fmt.Errorf("%w: snapshot %d removed data file %s, which this statement changes", ErrRowConflict, snap, f.FilePath())
			}
			return nil
		}
		added[f.FilePath()] = snap
	case iceberg.EntryContentPosDeletes, iceberg.EntryContentEqDeletes:
		if status != iceberg.EntryStatusADDED {
			return nil
		}
		if ref := f.ReferencedDataFile(); ref != nil && f.ContentType() == iceberg.EntryContentPosDeletes {
			if _, ok := touched[*ref]; ok {
				return fmt.Errorf("%w: snapshot %d deleted rows of data file %s, which this statement changes", ErrRowConflict, snap, *ref)
			}
			return nil
		}
		// A delete file that names no data file may apply to any file of
		// its partition.
		for path, t := range touched {
			if t.SpecID() == f.SpecID() && samePartition(t.Partition(), f.Partition()) {
				return fmt.Errorf("%w: snapshot %d added deletes that may apply to data file %s, which this statement changes", ErrRowConflict, snap, path)
			}
		}
	}
	return nil
}

func samePartition(a, b map[int]any) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || fmt.Sprint(v) != fmt.Sprint(w) {
			return false
		}
	}
	return true
}

// checkAddedRows fails when a data file added since the base snapshot
// could hold rows matching filter, judged as a scan of head (the snapshot
// the commit builds on) prunes files (partition values and column bounds).
func checkAddedRows(ctx context.Context, tbl *table.Table, head *table.Snapshot, filter iceberg.BooleanExpression, added map[string]int64) error {
	opts := []table.ScanOption{table.WithSnapshotID(head.SnapshotID)}
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	tasks, err := tbl.Scan(opts...).PlanFiles(ctx)
	if err != nil {
		return fmt.Errorf("plan conflict check: %w", err)
	}
	for _, t := range tasks {
		if snap, ok := added[t.File.FilePath()]; ok {
			return fmt.Errorf("%w: snapshot %d added data file %s whose rows the statement's condition may match (serializable isolation)", ErrRowConflict, snap, t.File.FilePath())
		}
	}
	return nil
}
