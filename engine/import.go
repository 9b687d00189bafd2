package engine

import (
	"context"
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
	ident := table.Identifier{namespace, name}
	tbl, err := e.catalog.LoadTable(ctx, ident)
	if err != nil {
		return 0, fmt.Errorf("import into %s.%s: %w", namespace, name, err)
	}
	wt, err := writeTable(tbl)
	if err != nil {
		return 0, fmt.Errorf("import into %s.%s: %w", namespace, name, err)
	}
	var rows int64
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for rdr.Next() {
			rec := rdr.RecordBatch()
			rec.Retain()
			rows += rec.NumRows()
			if !yield(rec, nil) {
				return
			}
			if progress != nil {
				progress(rows)
			}
		}
		if err := rdr.Err(); err != nil {
			yield(nil, err)
		}
	}
	files, err := writeFiles(ctx, wt, rdr.Schema(), records)
	if err != nil {
		discardFiles(ctx, tbl, files)
		return 0, fmt.Errorf("import into %s.%s: %w", namespace, name, err)
	}
	if _, err := storage.AppendFiles(ctx, e.catalog, ident, files, snapshotSummary()); err != nil {
		return 0, fmt.Errorf("import into %s.%s: commit: %w", namespace, name, err)
	}
	return rows, nil
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
