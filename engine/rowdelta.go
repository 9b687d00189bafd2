package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/storage"
)

// Row-level changes are made at the end of each statement, so that later
// statements of the transaction read them: copy-on-write rewrites the data
// files holding deleted rows (without them) and merge-on-read writes
// position-delete files. The transaction's stage collects the results; its
// commit is one snapshot per table (storage.CommitRowDelta), validated
// against what others committed since the first statement read the table.
// Files the transaction itself staged are always rewritten, whatever the
// mode: nobody else has seen them.

// rowChanges is the row-level part of a table's stage.
type rowChanges struct {
	// removed are committed data files the transaction removes whole:
	// rewritten (copy-on-write), every row deleted, or replaced by INSERT
	// OVERWRITE.
	removed []iceberg.DataFile
	// deletes are position-delete files for committed data files.
	deletes []iceberg.DataFile
	// removedDeletes are committed deletion vectors superseded (v3,
	// rowlevel_v3.go).
	removedDeletes []iceberg.DataFile
	// base is the snapshot the first row-level statement read; based says
	// it was set (base nil: the table had no snapshot). Whoever stages
	// removals that depend on what a statement read must set both, so that
	// the commit is validated against commits made since.
	base  *int64
	based bool
	// serializable: some statement ran under serializable isolation, with
	// the row filters below (nil filter and unfiltered: any row).
	serializable bool
	filter       iceberg.BooleanExpression
	unfiltered   bool
	// overwrite: an INSERT OVERWRITE replaced rows (overwrite_tx.go), so
	// the commit is validated even when it removes nothing committed.
	overwrite bool
	// readAt is the metadata the transaction read the table at with a
	// lock (isolation.go); its commit fails if rows changed since.
	readAt table.Metadata
}

func (c rowChanges) any() bool { return len(c.removed) > 0 || len(c.deletes) > 0 }

func (st stage) clone() stage {
	c := st
	c.files = slices.Clone(st.files)
	c.removed = slices.Clone(st.removed)
	c.deletes = slices.Clone(st.deletes)
	c.removedDeletes = slices.Clone(st.removedDeletes)
	return c
}

// stagedChanges returns the open transaction's row-level changes to a
// table for target w (refs.go).
func (s *Session) stagedChanges(ident table.Identifier, w writeTarget) rowChanges {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.staged[w.stageKey(ident)]; ok {
		c := st.clone()
		return c.rowChanges
	}
	return rowChanges{}
}

// delta is the stage as the storage layer commits it.
func (st *stage) delta() storage.RowDelta {
	d := storage.RowDelta{Added: st.files, Removed: st.removed, Deletes: st.deletes, RemovedDeletes: st.removedDeletes, Validate: st.based, Base: st.base, Serializable: st.serializable, Branch: st.target.branch, ReadAt: st.readAt}
	if !st.unfiltered {
		d.Filter = st.filter
	}
	return d
}

// commitStage commits one table's stage as one snapshot through cat (the
// engine's catalog, or a storage.Deferred holding the commit back).
func (s *Session) commitStage(ctx *sql.Context, cat catalog.Catalog, st *stage) error {
	if st.change != nil {
		return commitFileChange(ctx, cat, st) // TRUNCATE, INSERT OVERWRITE, REPLACE TABLE (filechange.go)
	}
	if !st.any() && !st.overwrite && (st.readAt == nil || st.target.wapID != "") {
		return st.commit(ctx, cat, snapshotSummary()) // a WAP stage's locked read was checked by validateCommit
	}
	_, err := storage.CommitRowDelta(ctx, cat, st.ident, st.delta(), snapshotSummary())
	if errors.Is(err, storage.ErrRowConflict) {
		return mysqlerr.Conflict("%s: another transaction changed the same rows first; nothing was changed, retry the statement", err)
	}
	return err
}

// stageView stages the transaction's changes on tx, for reads in the
// transaction.
func (t *Table) stageView(ctx context.Context, tx *table.Transaction) error {
	added, err := storage.WithFirstRowIDs(t.tbl.Metadata(), t.staged)
	if err != nil {
		return err
	}
	d := storage.RowDelta{Added: added, Removed: t.changes.removed, Deletes: t.changes.deletes, RemovedDeletes: t.changes.removedDeletes}
	_, err = storage.ApplyRowDelta(ctx, t.tbl, tx, d, nil)
	return err
}

// Write modes and isolation levels, as Spark reads them from table properties.
const (
	copyOnWrite = "copy-on-write"
	mergeOnRead = "merge-on-read"
)

// rowMode is the write mode of op (delete, update or merge) on tbl.
func rowMode(tbl *table.Table, op string) (string, error) {
	key := "write." + op + ".mode"
	mode := strings.ToLower(tbl.Properties().Get(key, copyOnWrite))
	switch mode {
	case copyOnWrite, mergeOnRead:
	default:
		return "", sql.ErrInvalidArgument.New(fmt.Sprintf("table property %s=%q: want copy-on-write or merge-on-read", key, mode))
	}
	if tbl.Metadata().Version() < 2 {
		return copyOnWrite, nil // format v1 has no delete files
	}
	return mode, nil
}

// serializable reports the isolation level of op on tbl.
func serializable(tbl *table.Table, op string) (bool, error) {
	key := "write." + op + ".isolation-level"
	switch level := strings.ToLower(tbl.Properties().Get(key, "serializable")); level {
	case "serializable":
		return true, nil
	case "snapshot":
		return false, nil
	default:
		return false, sql.ErrInvalidArgument.New(fmt.Sprintf("table property %s=%q: want serializable or snapshot", key, level))
	}
}

// rowEffect is what one statement's deletes do to the files.
type rowEffect struct {
	removed  []iceberg.DataFile // committed files removed whole
	replaced map[string]bool    // staged files dropped from the stage
	added    []iceberg.DataFile // rewritten files
	deletes  []iceberg.DataFile // position-delete files
	// superseded are deletion vectors the statement replaces (v3).
	superseded []iceberg.DataFile
}

// stageRowChanges makes a statement's row-level changes and adds them to
// the transaction: deleted positions per data file, and the data files of
// new rows (UPDATE's new values, MERGE's inserts). A statement that
// changes nothing stages nothing, so it makes no snapshot.
func (s *Session) stageRowChanges(ctx *sql.Context, t *Table, op string, dels map[string][]int64, added []iceberg.DataFile) error {
	if len(dels) == 0 && len(added) == 0 {
		return nil
	}
	mode, err := rowMode(t.tbl, op)
	if err != nil {
		return err
	}
	ser, err := serializable(t.tbl, op)
	if err != nil {
		return err
	}
	target, err := t.writeTarget(ctx)
	if err != nil {
		return err
	}
	eff, err := t.rowEffects(ctx, mode, dels)
	if err != nil {
		return err
	}
	ident := t.db.ident(t.name)
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.staged[target.stageKey(ident)]
	if !ok {
		st = &stage{ident: ident, target: target}
		s.staged[target.stageKey(ident)] = st
	}
	if len(eff.replaced) > 0 {
		st.files = slices.DeleteFunc(st.files, func(f iceberg.DataFile) bool { return eff.replaced[f.FilePath()] })
	}
	st.files = append(append(st.files, eff.added...), added...)
	st.removed = append(st.removed, eff.removed...)
	st.supersede(eff.superseded)
	st.deletes = append(st.deletes, eff.deletes...)
	if !st.based && len(dels) > 0 {
		st.based = true
		if snap := t.rowLevelBase(); snap != nil {
			st.base = ptrTo(snap.SnapshotID)
		}
	}
	if ser && len(dels) > 0 {
		st.serializable = true
		switch f := t.identity.readFilter(); {
		case f == nil:
			st.unfiltered = true
		case st.filter == nil:
			st.filter = f
		default:
			st.filter = iceberg.NewOr(st.filter, f)
		}
	}
	return nil
}

// rowEffects deletes the given positions of each data file, in mode.
func (t *Table) rowEffects(ctx *sql.Context, mode string, dels map[string][]int64) (eff rowEffect, err error) {
	eff = rowEffect{replaced: map[string]bool{}}
	staged := map[string]bool{}
	for _, f := range t.staged {
		staged[f.FilePath()] = true
	}
	var dvs []storage.DVTarget
	defer func() {
		if err == nil {
			err = t.writeDVs(ctx, &eff, dvs)
		}
	}()
	rewritten, err := t.rewriteAll(ctx, mode, dels, staged) // rowrewrite_parallel.go
	if err != nil {
		return eff, err
	}
	for _, path := range slices.Sorted(mapsKeys(dels)) {
		task, ok := t.identity.task(path)
		if !ok {
			return eff, fmt.Errorf("change rows of %s: data file %s was not read by the statement", t, path)
		}
		positions := slices.Clone(dels[path])
		slices.Sort(positions)
		positions = slices.Compact(positions)
		whole := int64(len(positions)) >= task.File.Count()
		switch {
		case whole:
		case staged[path] || mode == copyOnWrite:
			eff.added = append(eff.added, rewritten[path]...)
		case t.formatV3():
			dvs = append(dvs, storage.DVTarget{File: task.File, Positions: positions, Deletes: taskDeletes(task)})
			continue
		default:
			del, err := storage.WritePositionDeletes(ctx, t.tbl, task.File, positions)
			if err != nil {
				return eff, err
			}
			eff.deletes = append(eff.deletes, del)
			continue
		}
		if staged[path] {
			eff.replaced[path] = true
		} else {
			eff.removed = append(eff.removed, task.File)
			eff.superseded = append(eff.superseded, danglingDVs(task)...)
		}
	}
	return eff, nil
}

func mapsKeys[K comparable, V any](m map[K]V) iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// rewriteWithout writes the rows of the task's data file that survive its
// deletes, except those at the given positions, as new data files.
func (t *Table) rewriteWithout(ctx *sql.Context, task table.FileScanTask, drop []int64) ([]iceberg.DataFile, error) {
	if t.formatV3() {
		return t.rewriteKeepingLineage(ctx, task, drop, t.isStaged(task.File.FilePath()))
	}
	cols := t.names
	rtbl, rscan, err := t.positionScan(cols, nil)
	if err != nil {
		return nil, err
	}
	task.FirstRowID = ptrTo(int64(0))
	task.Residual = nil
	task.Start, task.Length = 0, task.File.FileSizeBytes()
	widen := func(extra []string) (*table.Scan, error) {
		_, s, err := t.positionScan(append(slices.Clone(cols), extra...), nil)
		return s, err
	}
	batches, err := vecexec.OpenTasks(ctx, rtbl, t.read(ctx, t.Planned(), rtbl, rscan, widen), []table.FileScanTask{task}, cols)
	if err != nil {
		return nil, err
	}
	defer batches.Close()
	schema, err := table.SchemaToArrowSchema(t.tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, err
	}
	var readErr error
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for {
			rec, err := batches.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					readErr = err
					yield(nil, err)
				}
				return
			}
			kept, err := keepRows(ctx, rec, cols, schema, drop)
			if err != nil {
				readErr = err
				yield(nil, err)
				return
			}
			if kept.NumRows() == 0 {
				kept.Release()
				continue
			}
			if !yield(kept, nil) {
				return
			}
		}
	}
	wt, err := writeTable(t.tbl)
	if err != nil {
		return nil, err
	}
	files, err := collectFiles(table.WriteRecords(ctx, wt, schema, records))
	if readErr != nil {
		return nil, readErr
	}
	return files, err
}

// keepRows is rec without the rows at the dropped positions, as a batch
// of the table's columns in the writer's schema.
func keepRows(ctx context.Context, rec arrow.RecordBatch, cols []string, schema *arrow.Schema, drop []int64) (arrow.RecordBatch, error) {
	idx := rec.Schema().FieldIndices(iceberg.RowIDColumnName)
	if len(idx) == 0 {
		return nil, fmt.Errorf("scan returned no row positions")
	}
	ids, ok := rec.Column(idx[0]).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("row positions are %s, want int64", rec.Column(idx[0]).DataType())
	}
	mask := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer mask.Release()
	for i := range ids.Len() {
		_, found := slices.BinarySearch(drop, ids.Value(i))
		mask.Append(!found)
	}
	m := mask.NewArray()
	defer m.Release()
	columns := make([]arrow.Array, len(cols))
	for i, c := range cols {
		ci := rec.Schema().FieldIndices(c)
		if len(ci) == 0 {
			return nil, fmt.Errorf("scan returned no column %s", c)
		}
		col := rec.Column(ci[0])
		if !arrow.TypeEqual(col.DataType(), schema.Field(i).Type) {
			cast, err := compute.CastArray(ctx, col, compute.SafeCastOptions(schema.Field(i).Type))
			if err != nil {
				return nil, fmt.Errorf("column %s: %w", c, err)
			}
			defer cast.Release()
			col = cast
		}
		columns[i] = col
	}
	projected := array.NewRecordBatch(schema, columns, rec.NumRows())
	defer projected.Release()
	return compute.FilterRecordBatch(ctx, projected, m, compute.DefaultFilterOptions())
}
