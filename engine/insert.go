package engine

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/storage"
)

// batchRows is how many rows an insert buffers before handing them to the
// Parquet writer; the writer itself rolls files at write.target-file-size-bytes.
const batchRows = 64 * 1024

// Inserter implements sql.InsertableTable. Rows stream into Parquet files as
// they arrive; at the end of the statement the files join the session's
// transaction stage, to be committed with it.
func (t *Table) Inserter(ctx *sql.Context) sql.RowInserter {
	return &inserter{t: t}
}

type inserter struct {
	t       *Table
	target  writeTarget // where the files commit (refs.go)
	builder *array.RecordBuilder
	writer  *fileWriter
	err     error // first error; later rows are ignored
	// accepted says every row inserted so far was followed by
	// StatementComplete: Close then writes the statement's files.
	accepted bool
	// inRow counts the rows inserted since StatementBegin, the unit a
	// row-level checkpoint (below) takes back.
	inRow int
}

type writeResult struct {
	files []iceberg.DataFile
	err   error
}

// fileWriter runs iceberg-go's WriteRecords in a goroutine fed batch by batch,
// so an INSERT ... SELECT of any size holds one batch in memory at a time.
type fileWriter struct {
	batches chan arrow.RecordBatch
	done    chan writeResult
	cancel  context.CancelFunc
}

// writeTable is tbl as the Parquet writer should see it. iceberg-go rolls to
// a new file only after a row group is flushed, and buffers row groups up to
// write.parquet.row-group-size-bytes (128 MiB by default); a smaller
// write.target-file-size-bytes would never take effect, so the row group
// size is capped at the target for this write.
func writeTable(tbl *table.Table) (*table.Table, error) {
	props := tbl.Properties()
	set := iceberg.Properties{}
	target := props.GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	if target < props.GetInt(table.ParquetRowGroupSizeBytesKey, table.ParquetRowGroupSizeBytesDefault) {
		set[table.ParquetRowGroupSizeBytesKey] = strconv.Itoa(target)
	}
	rowGroupDefaults(props, set) // parallelwrite.go
	if len(set) == 0 {
		return tbl, nil
	}
	return storage.WithProperties(tbl, set, nil), nil
}

func startWriter(ctx context.Context, tbl *table.Table, schema *arrow.Schema) *fileWriter {
	return startWriting(ctx, func(ctx context.Context, records iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error) {
		return writeFiles(ctx, tbl, schema, records)
	})
}

// startWriting runs write in a goroutine, fed the batches sent to the
// returned writer.
func startWriting(ctx context.Context, write func(context.Context, iter.Seq2[arrow.RecordBatch, error]) ([]iceberg.DataFile, error)) *fileWriter {
	ctx, cancel := context.WithCancel(ctx)
	w := &fileWriter{batches: make(chan arrow.RecordBatch), done: make(chan writeResult, 1), cancel: cancel}
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for b := range w.batches {
			if !yield(b, nil) {
				// The writer failed; drain so senders never block.
				for b := range w.batches {
					b.Release()
				}
				return
			}
		}
	}
	go func() {
		var res writeResult
		res.files, res.err = write(ctx, records)
		// WriteRecords may stop early on error; keep draining the channel.
		for b := range w.batches {
			b.Release()
		}
		w.done <- res
	}()
	return w
}

// send hands a batch to the writer. It never blocks for long: a writer that
// failed keeps draining until finish.
func (w *fileWriter) send(b arrow.RecordBatch) {
	w.batches <- b
}

// finish waits for the written files.
func (w *fileWriter) finish() ([]iceberg.DataFile, error) {
	close(w.batches)
	res := <-w.done
	w.cancel()
	return res.files, res.err
}

// StatementBegin implements sql.EditOpenerCloser. go-mysql-server calls
// StatementBegin and StatementComplete once per statement, except for
// INSERT IGNORE and LOAD DATA LOCAL (which implies IGNORE): there it calls
// them around every row, a checkpoint, and DiscardChanges with an
// IgnorableError for a row it skips. So a StatementComplete only accepts
// the rows so far, and Close writes the statement's files: one set of files
// per statement either way, not a file per row.
func (ins *inserter) StatementBegin(*sql.Context) { ins.inRow = 0 }

// Insert implements sql.RowInserter.
func (ins *inserter) Insert(ctx *sql.Context, row sql.Row) error {
	if ins.err != nil {
		return ins.err
	}
	ins.accepted = false
	ins.inRow++
	if err := ins.open(ctx); err != nil {
		return err
	}
	zone := sqlval.SessionZone(ctx) // sqlval/timezone.go
	for i, v := range row {
		if err := sqlval.AppendValue(ins.builder.Field(i), sqlval.Unzoned(ins.builder.Field(i), v, zone)); err != nil {
			ins.err = sql.ErrInvalidValue.New(fmt.Sprint(v), ins.t.schema[i].Type.String()+" (column "+ins.t.schema[i].Name+": "+err.Error()+")")
			return ins.err
		}
	}
	if ins.builder.Field(0).Len() >= batchLimit(ins.t.tbl) {
		ins.flush(ctx)
	}
	return nil
}

// open finds where the statement writes and starts its Arrow builder, on
// the first row.
func (ins *inserter) open(ctx *sql.Context) error {
	if ins.builder != nil {
		return nil
	}
	if ins.target, ins.err = ins.t.writeTarget(ctx); ins.err != nil {
		return ins.err
	}
	schema, err := table.SchemaToArrowSchema(ins.t.tbl.Schema(), nil, true, false)
	if err != nil {
		return fmt.Errorf("insert into %s: %w", ins.t, err)
	}
	ins.builder = array.NewRecordBuilder(memory.DefaultAllocator, schema)
	return nil
}

func (ins *inserter) flush(ctx *sql.Context) {
	if ins.builder == nil || ins.builder.Field(0).Len() == 0 {
		return
	}
	ins.send(ctx, ins.builder.NewRecordBatch())
}

// send hands a batch of the table's Arrow schema to the statement's
// Parquet writer, which it starts on the first batch.
func (ins *inserter) send(ctx *sql.Context, rec arrow.RecordBatch) {
	if ins.writer == nil {
		wt, err := writeTable(ins.t.tbl)
		if err != nil {
			rec.Release()
			ins.err = fmt.Errorf("insert into %s: %w", ins.t, err)
			return
		}
		ins.writer = startWriter(ctx, wt, rec.Schema())
	}
	ins.writer.send(rec)
}

// StatementComplete implements sql.EditOpenerCloser: the rows so far are
// accepted (see StatementBegin).
func (ins *inserter) StatementComplete(*sql.Context) error {
	if ins.err != nil {
		return ins.err
	}
	ins.accepted = true
	return nil
}

// finish writes the statement's last rows; its files join the transaction.
func (ins *inserter) finish(ctx *sql.Context) error {
	ins.flush(ctx)
	if ins.err != nil {
		return ins.err
	}
	if ins.writer == nil {
		return nil
	}
	files, err := ins.writer.finish()
	ins.writer = nil
	if err != nil {
		discardFiles(ctx, ins.t.tbl, files)
		return fmt.Errorf("write data files of %s: %w", ins.t, err)
	}
	ident := ins.t.db.ident(ins.t.name)
	sessionOf(ctx).stageFilesAt(ident, ins.target, files)
	return nil
}

// DiscardChanges implements sql.EditOpenerCloser. For a row an INSERT
// IGNORE skips (an IgnorableError), only that row is taken back: nothing,
// when it failed before reaching Insert; a row half appended to the Arrow
// builder cannot be taken back, so the statement then fails. Otherwise
// nothing of the statement is staged, and a table CREATE TABLE ... AS
// SELECT made is dropped again.
func (ins *inserter) DiscardChanges(ctx *sql.Context, err error) error {
	var skipped sql.IgnorableError
	if errors.As(err, &skipped) {
		if ins.inRow > 0 && ins.err == nil {
			ins.err = fmt.Errorf("insert into %s: a row skipped by IGNORE was already partly written: %w", ins.t, err)
		}
		return nil
	}
	ins.accepted = false
	ins.stop(ctx)
	return sessionOf(ctx).dropIfCreatedInStatement(ctx, ins.t.db.ident(ins.t.name))
}

func (ins *inserter) stop(ctx *sql.Context) {
	if ins.writer != nil {
		ins.writer.cancel()
		files, _ := ins.writer.finish()
		discardFiles(ctx, ins.t.tbl, files) // the statement failed: nothing references them
		ins.writer = nil
	}
	if ins.builder != nil {
		ins.builder.Release()
		ins.builder = nil
	}
}

// Close implements sql.Closer. go-mysql-server calls it after
// StatementComplete and after DiscardChanges alike; its error reaches the
// client as the statement's.
func (ins *inserter) Close(ctx *sql.Context) error {
	defer ins.stop(ctx)
	if !ins.accepted || ins.err != nil {
		return nil
	}
	ins.accepted = false
	return ins.finish(ctx)
}
