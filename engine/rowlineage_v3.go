package engine

import (
	"context"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/compute"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
)

// Row lineage on format-version 3 tables. A row's id is the _row_id its
// data file stores for it or, when the file stores none (null, or no such
// column), the file's first_row_id plus the row's position. Copy-on-write
// moves rows to new files, so it stores their ids (and their
// _last_updated_sequence_number) in the new file, as the spec asks.
//
// The row-identity scan (rowidentity.go) reads positions as synthesised
// row ids: task i is given first_row_id (i+1)<<posBits, so a row without a
// stored id reads as (i+1)<<posBits + position. A row with a stored id
// reads as that id, which is below 1<<posBits (the table has had fewer
// rows than that, checked in lineageIndex), and tells neither its file
// nor its position; lineageIndex finds both by reading candidate files in
// order, without deletes or filters, so that the n-th row read is at
// position n.

// synthBase is the smallest synthesised id: task 0's first_row_id.
const synthBase = int64(1) << posBits

// lineageIndex maps the stored row ids of the files a statement reads to
// their files and positions, file by file as they are needed.
type lineageIndex struct {
	mu sync.Mutex
	// indexed are the files read.
	indexed map[string]bool
	// where locates stored ids of indexed files.
	where map[int64]rowPlace
}

type rowPlace struct {
	task int
	pos  int64
}

// locate returns the task and position of a row the identity scan read
// with id.
func (r *identityIter) locate(ctx context.Context, id int64) (int, int64, error) {
	if id >= synthBase {
		task := int(id>>posBits) - 1
		if task < 0 || task >= len(r.tasks) {
			return 0, 0, fmt.Errorf("row position %d names no scanned file", id)
		}
		return task, id & (synthBase - 1), nil
	}
	if next := r.table.tbl.Metadata().NextRowID(); next >= synthBase {
		return 0, 0, fmt.Errorf("%s has given out %d row ids; icesql tells rows apart by ids below %d", r.table, next, synthBase)
	}
	return r.lineage.place(ctx, r.table, r.tasks, id)
}

// place finds the file and position of the row whose stored id is id,
// indexing the files of tasks that may store ids until it is found.
func (x *lineageIndex) place(ctx context.Context, t *Table, tasks []table.FileScanTask, id int64) (int, int64, error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if p, ok := x.where[id]; ok {
		return p.task, p.pos, nil
	}
	// Files whose _row_id bounds hold id first, then files that may store
	// ids but have no bounds, then any other (metrics are optional).
	for pass := range 3 {
		for i, task := range tasks {
			if x.indexed[task.File.FilePath()] || candidate(task.File, id) != pass {
				continue
			}
			if err := x.indexLocked(ctx, t, i, task); err != nil {
				return 0, 0, err
			}
			if p, ok := x.where[id]; ok {
				return p.task, p.pos, nil
			}
		}
	}
	return 0, 0, fmt.Errorf("row id %d read from %s is in none of its data files", id, t)
}

func (x *lineageIndex) indexLocked(ctx context.Context, t *Table, i int, task table.FileScanTask) error {
	if x.indexed == nil {
		x.indexed, x.where = map[string]bool{}, map[int64]rowPlace{}
	}
	ids, err := t.storedRowIDs(ctx, task)
	if err != nil {
		return fmt.Errorf("read row ids of %s: %w", task.File.FilePath(), err)
	}
	live, err := t.liveRowIDs(ctx, task)
	if err != nil {
		return fmt.Errorf("read row ids of %s: %w", task.File.FilePath(), err)
	}
	x.indexed[task.File.FilePath()] = true
	for pos, id := range ids {
		// Only a live row: an older copy of the row under a deletion
		// vector has the same id.
		if id < synthBase && live[id] {
			x.where[id] = rowPlace{task: i, pos: int64(pos)}
		}
	}
	return nil
}

// candidate ranks file f as a holder of stored row id: 0 when its _row_id
// bounds hold id, 1 when it may store ids and has no bounds, 2 else.
func candidate(f iceberg.DataFile, id int64) int {
	lo, okLo := f.LowerBoundValues()[iceberg.RowIDFieldID]
	hi, okHi := f.UpperBoundValues()[iceberg.RowIDFieldID]
	switch {
	case okLo && okHi && len(lo) == 8 && len(hi) == 8:
		if int64(binary.LittleEndian.Uint64(lo)) <= id && id <= int64(binary.LittleEndian.Uint64(hi)) {
			return 0
		}
		return 2
	case mayStoreRowIDs(f):
		return 1
	}
	return 2
}

// mayStoreRowIDs reports whether a data file may hold a _row_id column:
// its column metrics say so, or it has none to tell.
func mayStoreRowIDs(f iceberg.DataFile) bool {
	if len(f.ValueCounts()) == 0 && len(f.ColumnSizes()) == 0 {
		return true
	}
	_, ok1 := f.ValueCounts()[iceberg.RowIDFieldID]
	_, ok2 := f.ColumnSizes()[iceberg.RowIDFieldID]
	return ok1 || ok2
}

// storedRowIDs reads the _row_id of every row of task's file in order,
// with no delete or filter applied, the synthesised ones as synthBase plus
// the position.
func (t *Table) storedRowIDs(ctx context.Context, task table.FileScanTask) ([]int64, error) {
	ids, err := t.readRowIDs(ctx, task, false)
	if err != nil {
		return nil, err
	}
	if int64(len(ids)) != task.File.Count() {
		return nil, fmt.Errorf("read %d rows, the manifest says %d", len(ids), task.File.Count())
	}
	return ids, nil
}

// liveRowIDs are the stored _row_ids of the rows of task's file that its
// delete files leave. A row id is unique among a table's live rows only:
// a merge-on-read UPDATE or MERGE writes the new row with the old row's
// id, and the old row stays in its file under a deletion vector.
func (t *Table) liveRowIDs(ctx context.Context, task table.FileScanTask) (map[int64]bool, error) {
	ids, err := t.readRowIDs(ctx, task, true)
	if err != nil {
		return nil, err
	}
	live := make(map[int64]bool, len(ids))
	for _, id := range ids {
		live[id] = true
	}
	return live, nil
}

// readRowIDs reads the _row_id of the rows of task's whole file, with its
// delete files applied or not.
func (t *Table) readRowIDs(ctx context.Context, task table.FileScanTask, withDeletes bool) ([]int64, error) {
	if t.tbl.Metadata().NextRowID() >= synthBase {
		return nil, fmt.Errorf("%s has given out %d row ids; icesql tells rows apart by ids below %d", t, t.tbl.Metadata().NextRowID(), synthBase)
	}
	if !withDeletes {
		task.DeleteFiles, task.EqualityDeleteFiles, task.DeletionVectorFiles = nil, nil, nil
	}
	task.Residual = nil
	task.Start, task.Length = 0, task.File.FileSizeBytes()
	task.FirstRowID = ptrTo(synthBase)
	cols := t.names[:1]
	_, rscan, err := t.positionScan(cols, nil)
	if err != nil {
		return nil, err
	}
	_, batches, err := rscan.ReadTasks(ctx, []table.FileScanTask{task})
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, task.File.Count())
	for rec, err := range batches {
		if err != nil {
			return nil, err
		}
		col, err := int64Column(rec, iceberg.RowIDColumnName)
		if err != nil {
			rec.Release()
			return nil, err
		}
		for i := range col.Len() {
			ids = append(ids, col.Value(i))
		}
		rec.Release()
	}
	return ids, nil
}

func int64Column(rec arrow.RecordBatch, name string) (*array.Int64, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("scan returned no column %s", name)
	}
	col, ok := rec.Column(idx[0]).(*array.Int64)
	if !ok {
		return nil, fmt.Errorf("column %s is %s, want int64", name, rec.Column(idx[0]).DataType())
	}
	return col, nil
}

// rewriteKeepingLineage is rewriteWithout on a v3 table: the rows kept
// keep their _row_id and _last_updated_sequence_number; staged says the
// file is one the transaction wrote, whose rows have neither yet.
func (t *Table) rewriteKeepingLineage(ctx *sql.Context, task table.FileScanTask, drop []int64, staged bool) ([]iceberg.DataFile, error) {
	cols := t.names
	rscan, err := t.lineageScan(cols)
	if err != nil {
		return nil, err
	}
	read := task
	read.FirstRowID = ptrTo(synthBase)
	read.Residual = nil
	read.Start, read.Length = 0, task.File.FileSizeBytes()
	if staged {
		read.DataSequenceNumber = nil
	}
	_, batches, err := rscan.ReadTasks(ctx, []table.FileScanTask{read})
	if err != nil {
		return nil, err
	}
	tableSchema := iceberg.SchemaWithRowLineage(t.tbl.Schema())
	schema, err := table.SchemaToArrowSchemaWithOptions(tableSchema, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: t.tbl.Properties()})
	if err != nil {
		return nil, err
	}
	m := &movedRows{t: t, task: task, staged: staged, drop: make(map[int64]bool, len(drop))}
	for _, p := range drop {
		m.drop[p] = true
	}
	var readErr error
	records := func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range batches {
			if err == nil {
				var out arrow.RecordBatch
				out, err = m.batch(ctx, rec, cols, schema)
				rec.Release()
				if err == nil && out.NumRows() == 0 {
					out.Release()
					continue
				}
				if err == nil {
					if !yield(out, nil) {
						return
					}
					continue
				}
			}
			readErr = err
			yield(nil, err)
			return
		}
	}
	wt, err := writeTable(t.tbl)
	if err != nil {
		return nil, err
	}
	files, err := collectFiles(table.WriteRecords(ctx, wt, schema, records, table.WithPreserveRowLineage(tableSchema)))
	if readErr != nil {
		return nil, readErr
	}
	return files, err
}

// lineageScan is a positionScan of cols plus _last_updated_sequence_number.
func (t *Table) lineageScan(cols []string) (*table.Scan, error) {
	rtbl, _, err := t.positionScan(cols, nil)
	if err != nil {
		return nil, err
	}
	fields := append(append([]string{}, cols...), iceberg.RowIDColumnName, iceberg.LastUpdatedSequenceNumberColumnName)
	return rtbl.Scan(table.WithSelectedFields(fields...)), nil
}

// movedRows turns the batches read from one file into the batches of its
// rewrite: the rows not dropped, with their lineage.
type movedRows struct {
	t      *Table
	task   table.FileScanTask
	staged bool
	drop   map[int64]bool
	// stored maps the file's stored ids to their positions, read on the
	// first stored id met.
	stored map[int64]int64
}

// position is the position in the file of the row read with id.
func (m *movedRows) position(ctx context.Context, id int64) (int64, error) {
	if id >= synthBase {
		return id - synthBase, nil
	}
	if m.stored == nil {
		ids, err := m.t.storedRowIDs(ctx, m.task)
		if err != nil {
			return 0, fmt.Errorf("read row ids of %s: %w", m.task.File.FilePath(), err)
		}
		m.stored = map[int64]int64{}
		for pos, v := range ids {
			if v < synthBase {
				m.stored[v] = int64(pos)
			}
		}
	}
	pos, ok := m.stored[id]
	if !ok {
		return 0, fmt.Errorf("row id %d is not in %s", id, m.task.File.FilePath())
	}
	return pos, nil
}

func (m *movedRows) batch(ctx context.Context, rec arrow.RecordBatch, cols []string, schema *arrow.Schema) (arrow.RecordBatch, error) {
	read, err := int64Column(rec, iceberg.RowIDColumnName)
	if err != nil {
		return nil, err
	}
	seqs, err := int64Column(rec, iceberg.LastUpdatedSequenceNumberColumnName)
	if err != nil {
		return nil, err
	}
	ids := array.NewInt64Builder(memory.DefaultAllocator)
	defer ids.Release()
	keep := array.NewBooleanBuilder(memory.DefaultAllocator)
	defer keep.Release()
	for i := range read.Len() {
		id := read.Value(i)
		pos, err := m.position(ctx, id)
		if err != nil {
			return nil, err
		}
		keep.Append(!m.drop[pos])
		switch {
		case id < synthBase:
			ids.Append(id)
		case !m.staged && m.task.FirstRowID != nil:
			ids.Append(*m.task.FirstRowID + pos)
		default:
			ids.AppendNull() // a new row: it takes its id at commit
		}
	}
	idArr, mask := ids.NewArray(), keep.NewArray()
	defer idArr.Release()
	defer mask.Release()
	columns := make([]arrow.Array, 0, len(cols)+2)
	for i, c := range cols {
		col, err := columnAs(ctx, rec, c, schema.Field(i).Type)
		if err != nil {
			return nil, err
		}
		defer col.Release()
		columns = append(columns, col)
	}
	columns = append(columns, idArr, seqs)
	all := array.NewRecordBatch(schema, columns, rec.NumRows())
	defer all.Release()
	return compute.FilterRecordBatch(ctx, all, mask, compute.DefaultFilterOptions())
}

// columnAs is rec's column name as type typ.
func columnAs(ctx context.Context, rec arrow.RecordBatch, name string, typ arrow.DataType) (arrow.Array, error) {
	idx := rec.Schema().FieldIndices(name)
	if len(idx) == 0 {
		return nil, fmt.Errorf("scan returned no column %s", name)
	}
	col := rec.Column(idx[0])
	if arrow.TypeEqual(col.DataType(), typ) {
		col.Retain()
		return col, nil
	}
	cast, err := compute.CastArray(ctx, col, compute.SafeCastOptions(typ))
	if err != nil {
		return nil, fmt.Errorf("column %s: %w", name, err)
	}
	return cast, nil
}
