package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Import appends Arrow records to an existing table as one snapshot,
// without going through SQL: the bulk path for loaders and the benchmark.
// The records' columns must match the table's by name and type, as Iceberg
// requires of any write; progress, when not nil, is told the rows written
// so far after each batch.
func (e *Engine) Import(ctx context.Context, namespace, name string, rdr array.RecordReader, progress func(rows int64)) (int64, error) {
	res, err := e.ImportTable(ctx, namespace, name, rdr, ImportOptions{Progress: progress})
	return res.Rows, err
}

// ImportOptions say how ImportTable writes.
type ImportOptions struct {
	// Overwrite replaces every row of the table (one overwrite snapshot)
	// instead of appending; rows other writers append meanwhile survive.
	Overwrite bool
	// Progress, when not nil, is told the rows written so far after each
	// batch.
	Progress func(rows int64)
}

// ImportResult is what ImportTable did.
type ImportResult struct {
	Rows  int64
	Files int // data files written
	// SnapshotID is the snapshot committed; 0 when nothing was (no rows to
	// append).
	SnapshotID int64
}

// ImportTable writes Arrow records into a table as one snapshot: the
// records stream into the Parquet writers (files of the table's target
// size, on every core). When the records fail, the context is cancelled
// or the commit fails, the files written are deleted and the table is as
// it was.
func (e *Engine) ImportTable(ctx context.Context, namespace, name string, rdr array.RecordReader, opts ImportOptions) (ImportResult, error) {
	ident := table.Identifier{namespace, name}
	var res ImportResult
	fail := func(err error) (ImportResult, error) {
		return ImportResult{}, fmt.Errorf("import into %s.%s: %w", namespace, name, err)
	}
	tbl, err := e.catalog.LoadTable(ctx, ident)
	if err != nil {
		return fail(err)
	}
	wt, err := writeTable(tbl)
	if err != nil {
		return fail(err)
	}
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			res.Rows += rec.NumRows()
			if !yield(rec, nil) {
				return
			}
			if opts.Progress != nil {
				opts.Progress(res.Rows)
			}
		}
		if err := rdr.Err(); err != nil {
			yield(nil, err)
		}
	}
	files, err := writeFiles(ctx, wt, rdr.Schema(), records)
	if err == nil {
		err = ctx.Err() // cancelled after the last batch: commit nothing
	}
	// The files are deleted with a context of their own: the import's may
	// be the one cancelled.
	cleanup := context.WithoutCancel(ctx)
	if err != nil {
		discardFiles(cleanup, tbl, files)
		return fail(err)
	}
	res.Files = len(files)
	var committed *table.Table
	switch {
	case opts.Overwrite:
		snap := tbl.CurrentSnapshot()
		var ch storage.FileChange
		if snap != nil {
			id := snap.SnapshotID
			ch.Base = &id
		}
		if ch.Removed, err = liveDataFiles(ctx, tbl, snap); err != nil {
			discardFiles(cleanup, tbl, files)
			return fail(fmt.Errorf("list data files: %w", err))
		}
		if len(ch.Removed) == 0 && len(files) == 0 {
			return res, nil
		}
		ch.Added, ch.Summary = files, snapshotSummary()
		committed, err = storage.CommitFileChange(ctx, e.catalog, ident, ch)
	case len(files) == 0:
		return res, nil
	default:
		committed, err = storage.AppendFiles(ctx, e.catalog, ident, files, snapshotSummary())
	}
	if err != nil {
		if errors.Is(err, storage.ErrConflict) {
			// Every attempt lost its race: no metadata names the files.
			discardFiles(cleanup, tbl, files)
		}
		return fail(fmt.Errorf("commit: %w", err))
	}
	if snap := committed.CurrentSnapshot(); snap != nil {
		res.SnapshotID = snap.SnapshotID
	}
	return res, nil
}

// collectFiles gathers the files a write yields; after an error, with the
// files it completed before, which the caller is to discard.
func collectFiles(seq iter.Seq2[iceberg.DataFile, error]) ([]iceberg.DataFile, error) {
	var files []iceberg.DataFile
	for f, err := range seq {
		if err != nil {
			return files, err
		}
		files = append(files, f)
	}
	return files, nil
}

// discardFiles deletes data files a failed statement wrote and nothing
// references. It is best effort: a file left behind is an orphan for
// remove_orphan_files, never a loss.
func discardFiles(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) {
	if len(files) == 0 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	if wfs, ok := fsys.(icebergio.WriteFileIO); ok {
		for _, f := range files {
			_ = wfs.Remove(f.FilePath())
		}
	}
}
