package engine

import (
	"context"
	"fmt"
	"iter"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// An UPDATE on a format-version 3 table keeps each updated row's _row_id,
// as the spec asks, and leaves its _last_updated_sequence_number null, so
// that it inherits the sequence number of the snapshot that commits it.
// The new rows are written with the ids stored, by movedWriter.

// movedWriter writes the new values of updated rows with their row ids.
type movedWriter struct {
	t       *Table
	builder *array.RecordBuilder
	n       int // columns of the table
	writer  *fileWriter
	// stored caches, per data file, the ids read at each position
	// (storedRowIDs), for files that may store ids.
	stored map[string][]int64
	err    error
}

// keepID writes row, the new values of the row at pos of file, with the
// old row's id.
func (ed *rowEditor) keepID(ctx *sql.Context, file string, pos int64, row sql.Row) error {
	if ed.moved == nil {
		ed.moved = newMovedWriter(ed.t)
	}
	return ed.moved.add(ctx, file, pos, row)
}

func newMovedWriter(t *Table) *movedWriter {
	return &movedWriter{t: t, n: len(t.schema), stored: map[string][]int64{}}
}

func (m *movedWriter) add(ctx *sql.Context, file string, pos int64, row sql.Row) error {
	if m.err != nil {
		return m.err
	}
	id, err := m.rowID(ctx, file, pos)
	if err != nil {
		m.err = err
		return err
	}
	if m.builder == nil {
		schema, err := lineageArrowSchema(m.t.tbl)
		if err != nil {
			m.err = err
			return err
		}
		m.builder = array.NewRecordBuilder(memory.DefaultAllocator, schema)
	}
	zone := sqlval.SessionZone(ctx) // sqlval/timezone.go
	for i, v := range row {
		if err := sqlval.AppendValue(m.builder.Field(i), sqlval.Unzoned(m.builder.Field(i), v, zone)); err != nil {
			m.err = sql.ErrInvalidValue.New(fmt.Sprint(v), m.t.schema[i].Type.String()+" (column "+m.t.schema[i].Name+": "+err.Error()+")")
			return m.err
		}
	}
	ids := m.builder.Field(m.n).(*array.Int64Builder)
	if id == nil {
		ids.AppendNull()
	} else {
		ids.Append(*id)
	}
	m.builder.Field(m.n + 1).AppendNull() // the commit's sequence number
	if m.builder.Field(0).Len() >= batchLimit(m.t.tbl) {
		m.flush(ctx)
	}
	return m.err
}

// rowID is the id of the row at pos of file, nil for a row the
// transaction inserted (it has none yet).
func (m *movedWriter) rowID(ctx context.Context, file string, pos int64) (*int64, error) {
	task, ok := m.t.identity.task(file)
	if !ok {
		return nil, fmt.Errorf("update %s: data file %s was not read by the statement", m.t, file)
	}
	if mayStoreRowIDs(task.File) {
		ids, ok := m.stored[file]
		if !ok {
			var err error
			if ids, err = m.t.storedRowIDs(ctx, task); err != nil {
				return nil, fmt.Errorf("read row ids of %s: %w", file, err)
			}
			m.stored[file] = ids
		}
		if pos < 0 || pos >= int64(len(ids)) {
			return nil, fmt.Errorf("update %s: row %d of %s is past its end", m.t, pos, file)
		}
		if ids[pos] < synthBase {
			return ptrTo(ids[pos]), nil
		}
	}
	if m.t.isStaged(file) || task.FirstRowID == nil {
		// A row the transaction inserted, or one written before the table
		// had row ids: it gets an id at commit.
		return nil, nil
	}
	return ptrTo(*task.FirstRowID + pos), nil
}

func (m *movedWriter) flush(ctx *sql.Context) {
	if m.builder == nil || m.builder.Field(0).Len() == 0 {
		return
	}
	rec := m.builder.NewRecordBatch()
	if m.writer == nil {
		w, err := startLineageWriter(ctx, m.t.tbl)
		if err != nil {
			rec.Release()
			m.err = err
			return
		}
		m.writer = w
	}
	m.writer.batches <- rec
}

// finish writes what is buffered and returns the files written.
func (m *movedWriter) finish(ctx *sql.Context) ([]iceberg.DataFile, error) {
	if m == nil {
		return nil, nil
	}
	if m.err != nil {
		return nil, m.err
	}
	m.flush(ctx)
	if m.err != nil || m.writer == nil {
		return nil, m.err
	}
	files, err := m.writer.finish()
	m.writer = nil
	if err != nil {
		return nil, fmt.Errorf("write data files of %s: %w", m.t, err)
	}
	return files, nil
}

func (m *movedWriter) stop() {
	if m == nil {
		return
	}
	if m.writer != nil {
		m.writer.cancel()
		m.writer.finish() // the files written so far are orphans
		m.writer = nil
	}
	if m.builder != nil {
		m.builder.Release()
		m.builder = nil
	}
}

// lineageArrowSchema is the table's columns followed by _row_id and
// _last_updated_sequence_number, with their field ids.
func lineageArrowSchema(tbl *table.Table) (*arrow.Schema, error) {
	return table.SchemaToArrowSchemaWithOptions(iceberg.SchemaWithRowLineage(tbl.Schema()), table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: tbl.Properties()})
}

// startLineageWriter runs WriteRecords with the row-lineage columns
// stored, in a goroutine fed batch by batch (as the inserter's).
func startLineageWriter(ctx context.Context, tbl *table.Table) (*fileWriter, error) {
	wt, err := writeTable(tbl)
	if err != nil {
		return nil, err
	}
	schema, err := lineageArrowSchema(tbl)
	if err != nil {
		return nil, err
	}
	lineage := table.WithPreserveRowLineage(iceberg.SchemaWithRowLineage(tbl.Schema()))
	return startWriting(ctx, func(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
		return collectFiles(table.WriteRecords(ctx, wt, schema, records, lineage))
	}), nil
}
