package engine

import (
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// INSERT OVERWRITE inside BEGIN … COMMIT (or with autocommit off) is staged
// like the row-level statements (rowdelta.go): the committed data files it
// replaces join the stage's removed files, the files the transaction staged
// earlier in its scope leave the stage, and position deletes staged for a
// file it removes are dropped with the file. Later statements of the
// transaction read the result (stageView), ROLLBACK discards it, and
// COMMIT makes the transaction's one snapshot of the table, validated
// against what others committed since the transaction first read the
// table: a file it removes must not have been removed or given deletes
// meanwhile, and no file added meanwhile may lie in what it replaces
// (serializable, as the autocommit INSERT OVERWRITE checks). Dynamic mode's
// partitions are not an Iceberg row filter, so there any file added
// meanwhile conflicts, as a whole-table overwrite's does.
//
// An autocommit INSERT OVERWRITE keeps its own commit (filechange.go),
// which names a snapshot that empties the table `delete`, as Spark does.

// stageOverwrite stages an INSERT OVERWRITE that wrote added, in the open
// transaction.
func (s *Session) stageOverwrite(ctx *sql.Context, ot *overwriteTable, added []iceberg.DataFile) error {
	in := ot.scope(added)
	if in == nil {
		return nil // dynamic mode without rows replaces nothing
	}
	snap := ot.tbl.CurrentSnapshot()
	live, err := liveDataFiles(ctx, ot.tbl, snap)
	if err != nil {
		return fmt.Errorf("overwrite %s: list data files: %w", ot, err)
	}
	committed, err := filesIn(live, in)
	if err != nil {
		return err
	}
	ident := ot.db.ident(ot.name)
	k := writeTarget{}.stageKey(ident)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.staged[k]
	if !ok {
		st = &stage{ident: ident}
	}
	if st.change != nil {
		return mysqlerr.NotSupported("INSERT OVERWRITE %s: the transaction already replaced the table's files another way; commit it first", ot)
	}
	stagedIn, err := filesIn(st.files, in)
	if err != nil {
		return err
	}
	gone := map[string]bool{}
	for _, f := range st.removed {
		gone[f.FilePath()] = true
	}
	next := st.clone()
	for _, f := range committed {
		if !gone[f.FilePath()] {
			gone[f.FilePath()] = true
			next.removed = append(next.removed, f)
		}
	}
	dropped := map[string]bool{}
	for _, f := range stagedIn {
		dropped[f.FilePath()] = true
	}
	next.files = append(slices.DeleteFunc(next.files, func(f iceberg.DataFile) bool { return dropped[f.FilePath()] }), added...)
	next.deletes = slices.DeleteFunc(next.deletes, func(f iceberg.DataFile) bool {
		ref := f.ReferencedDataFile()
		return ref != nil && gone[*ref]
	})
	if !next.any() && len(next.files) == 0 {
		delete(s.staged, k) // nothing left to commit: the transaction changes nothing here
		return nil
	}
	if !next.based {
		next.based = true
		if snap != nil {
			next.base = ptrTo(snap.SnapshotID)
		}
	}
	next.serializable, next.overwrite = true, true
	switch {
	case ot.mode == overwriteDynamic || ot.filter == nil:
		next.unfiltered = true
	case next.filter == nil:
		next.filter = ot.filter
	default:
		next.filter = iceberg.NewOr(next.filter, ot.filter)
	}
	s.staged[k] = &next
	return nil
}

// filesIn are the files in scope.
func filesIn(files []iceberg.DataFile, in func(iceberg.DataFile) (bool, error)) ([]iceberg.DataFile, error) {
	var out []iceberg.DataFile
	for _, f := range files {
		ok, err := in(f)
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, f)
		}
	}
	return out, nil
}
