package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/pushdown"
)

// Table is an Iceberg table at the snapshot pinned for the statement, plus
// the files the session's open transaction staged for it.
type Table struct {
	db     *Database
	name   string
	tbl    *table.Table
	staged []iceberg.DataFile
	schema sql.Schema // every column
	// plan and staging are shared by the projections of one resolved table.
	plan    *pushdown.Plan
	aligned *alignedTasks
	staging *stagedView
	// projection is the columns the statement reads, in the order
	// go-mysql-server asked for them; nil means all.
	projection []string
	// filter is the WHERE clause's part pushed to Iceberg (lookup.go); nil
	// reads every row.
	filter *pushedFilter
	// snapshotID is the snapshot AS OF names (asof.go); nil for the pinned one.
	snapshotID *int64
	// branch is the branch read and written instead of main, tag the tag
	// snapshotID came from (refs.go).
	branch, tag string
	// names are the Iceberg names of schema's columns (see table.go).
	names []string
	// scan is the table reference this Table is in the plan (vecexec/scanid.go),
	// shared like plan by the copies of one resolved table.
	scan *vecexec.ScanID
	// bounds says which partition summaries planning may prune by
	// (partitionbounds.go); shared like plan.
	bounds *partitionBounds
	// identity is set on the row-identity variant that UPDATE, DELETE and
	// MERGE change (rowidentity.go).
	identity *identityState
	// rowSelect picks the rows a row-identity scan returns (vecexec/rowscan_fast.go).
	rowSelect *vecexec.RowSelection
	// changes are the open transaction's row-level changes (rowdelta.go).
	changes rowChanges
}

var (
	_ sql.Table           = (*Table)(nil)
	_ sql.ProjectedTable  = (*Table)(nil)
	_ sql.PrimaryKeyTable = (*Table)(nil)
	_ sql.StatisticsTable = (*Table)(nil)
	_ sql.InsertableTable = (*Table)(nil)
	_ sql.TemporaryTable  = (*Table)(nil)
)

// IsTemporary implements sql.TemporaryTable: an Iceberg table is not
// temporary. go-mysql-server refuses DROP TEMPORARY TABLE only for a table
// that says so; before, DROP TEMPORARY TABLE t dropped the Iceberg table t
// (MySQL: 1051, and the table stays).
func (t *Table) IsTemporary() bool { return false }

func newTable(db *Database, name string, tbl *table.Table, staged []iceberg.DataFile) *Table {
	return &Table{
		db:      db,
		name:    name,
		tbl:     tbl,
		staged:  staged,
		schema:  sqlColumns(sqlval.SchemaOf(tbl.Schema(), tbl.Properties(), db.name, name), tbl.Schema()),
		names:   icebergNames(tbl.Schema()),
		plan:    &pushdown.Plan{Caches: db.e.caches, Manifests: pushdown.ManifestSource{Cache: db.e.manifests, Table: tbl}},
		aligned: &alignedTasks{},
		staging: &stagedView{},
		scan:    &vecexec.ScanID{},
		bounds:  &partitionBounds{},
	}
}

// stagedView is the pinned snapshot with the open transaction's files added,
// made once per resolved table (making it writes a manifest).
type stagedView struct {
	once sync.Once
	tx   *table.Transaction
	err  error
}

// Name implements sql.Nameable.
func (t *Table) Name() string { return t.name }

// String implements fmt.Stringer.
func (t *Table) String() string { return t.db.name + "." + t.name + t.asOfString() }

// Collation implements sql.Table.
func (t *Table) Collation() sql.CollationID { return sql.Collation_Default }

// Schema implements sql.Table: the projected columns when projected. The
// primary key columns are marked only for statements that show metadata
// (keys.go).
func (t *Table) Schema(ctx *sql.Context) sql.Schema {
	return t.withKey(ctx, t.projectedSchema())
}

func (t *Table) projectedSchema() sql.Schema {
	if t.projection == nil {
		return t.withHidden(t.schema)
	}
	out := make(sql.Schema, 0, len(t.projection))
	for _, name := range t.projection {
		if i := t.schema.IndexOfColName(name); i >= 0 {
			out = append(out, t.schema[i])
		} else if col := t.hiddenColumn(name); col != nil {
			out = append(out, col)
		}
	}
	return out
}

// PrimaryKeySchema implements sql.PrimaryKeyTable. go-mysql-server's join
// planner needs the full schema of a projected table from here. Iceberg
// identifier fields are reported as the key only to statements that show
// metadata: nothing enforces them (keys.go).
func (t *Table) PrimaryKeySchema(ctx *sql.Context) sql.PrimaryKeySchema {
	if t.identity != nil {
		// (_file, _pos) identify a row; go-mysql-server's UPDATE ... JOIN
		// needs a key to tell the target's rows apart.
		return sql.NewPrimaryKeySchema(t.withHidden(t.schema), len(t.schema), len(t.schema)+1)
	}
	if keys := t.keyOrdinals(); len(keys) > 0 && keysShown(ctx) {
		return sql.NewPrimaryKeySchema(t.withKey(ctx, t.schema), keys...)
	}
	return sql.NewPrimaryKeySchema(t.schema)
}

// WithProjections implements sql.ProjectedTable.
func (t *Table) WithProjections(_ *sql.Context, cols []string) (sql.Table, error) {
	nt := *t
	nt.projection = append([]string{}, cols...)
	return &nt, nil
}

// Projections implements sql.ProjectedTable.
func (t *Table) Projections() []string { return t.projection }

// RowCount implements sql.StatisticsTable from the snapshot summary, so the
// planner costs joins with real sizes.
func (t *Table) RowCount(*sql.Context) (uint64, bool, error) {
	var n uint64
	if snap := t.Snapshot(); snap != nil && snap.Summary != nil {
		if v, err := strconv.ParseUint(snap.Summary.Properties["total-records"], 10, 64); err == nil {
			n = v
		}
	}
	for _, f := range t.staged {
		n += uint64(f.Count())
	}
	return n, false, nil
}

// DataLength implements sql.StatisticsTable.
func (t *Table) DataLength(*sql.Context) (uint64, error) {
	var n uint64
	if snap := t.Snapshot(); snap != nil && snap.Summary != nil {
		if v, err := strconv.ParseUint(snap.Summary.Properties["total-files-size"], 10, 64); err == nil {
			n = v
		}
	}
	for _, f := range t.staged {
		n += uint64(f.FileSizeBytes())
	}
	return n, nil
}

// scanPartition is the whole table: iceberg-go reads its files in parallel
// inside one stream, since go-mysql-server reads partitions one by one.
type scanPartition struct{}

func (scanPartition) Key() []byte { return []byte("scan") }

// Partitions implements sql.Table.
func (t *Table) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(scanPartition{}), nil
}

// PartitionRows implements sql.Table: rows are decoded lazily from Arrow
// batches of the projected columns only.
func (t *Table) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	if t.identity != nil {
		return t.identityRows(ctx)
	}
	cols := t.ResolveColumns(t.projection)
	if t.projection == nil {
		cols = t.names
	}
	if it, err := t.scanRows(ctx, cols); it != nil || err != nil { // rowcache.go
		return it, err
	}
	batches, tasks, err := t.OpenBatches(ctx, cols, true)
	if err != nil {
		return nil, err
	}
	it := &rowIter{batches: batches, width: len(cols), names: cols, rows: sqlval.RowBlocks{Width: len(cols)}}
	if smallEnough(tasks) {
		return t.keepRows(ctx, cols, it), nil
	}
	return it, nil
}

// openBatches reads the columns cols (Iceberg names) of the files the
// table's filter keeps, as Arrow batches. With rowFiltered, iceberg-go
// also drops the rows the filter rejects (copying the survivors of every
// batch); a reader that evaluates the whole WHERE clause itself (the vector
// path) saves that copy, but only where files have one row group each:
// the same filter is what skips row groups within a file.
func (t *Table) OpenBatches(ctx *sql.Context, cols []string, rowFiltered bool) (vecexec.BatchSource, []table.FileScanTask, error) {
	// An empty projection (COUNT(*)) still needs the row count; read the
	// first column, the cheapest choice without statistics.
	read := cols
	if len(read) == 0 {
		read = t.names[:1]
	}
	planned := t.Planned()
	scan, err := t.NewScan(ctx, planned, t.ScanOptions(planned, table.WithSelectedFields(read...))...)
	if err != nil {
		return nil, nil, err
	}
	tasks, err := planned.Tasks(ctx, scan)
	if err != nil {
		return nil, nil, err
	}
	if err := vecexec.CheckFormats(t.String(), tasks); err != nil {
		return nil, nil, err
	}
	if tasks, err = t.aligned.align(ctx, t.db.e, t.tbl, t.Snapshot(), tasks); err != nil {
		return nil, nil, err
	}
	// readOpts are the options of the scan that reads the tasks, for the
	// columns given.
	readOpts := func(cols []string) []table.ScanOption {
		return t.ScanOptions(planned, table.WithSelectedFields(cols...))
	}
	if f := t.RowFilter(); f != nil {
		// Planning pruned files with the filter, and row groups are pruned
		// from their statistics (parallelwrite.go); reading uses a weakened
		// filter (see pushdown.ReadFilter), or none at all for a reader
		// that evaluates the whole WHERE clause itself.
		var rf iceberg.BooleanExpression
		if rowFiltered {
			if rf, err = pushdown.ReadFilter(t.tbl.Schema(), f); err != nil {
				return nil, nil, err
			}
		}
		readOpts = func(cols []string) []table.ScanOption {
			opts := []table.ScanOption{table.WithReporter(planned), table.WithSelectedFields(cols...)}
			if rf != nil {
				opts = append(opts, table.WithRowFilter(rf))
			}
			return opts
		}
		if !oneRowGroupEach(tasks) {
			tasks = t.pruneRowGroups(ctx, planned, tasks, f) // parallelwrite.go
		}
		if scan, err = t.NewScan(ctx, planned, readOpts(read)...); err != nil {
			return nil, nil, err
		}
		tasks = pushdown.ReadTasks(tasks)
	}
	widen := func(extra []string) (*table.Scan, error) {
		return t.NewScan(ctx, planned, readOpts(append(slices.Clone(read), extra...))...)
	}
	r := t.read(ctx, planned, t.tbl, scan, widen)
	r.Whole = t.wholeScan(ctx, planned) // filecache.go
	batches, err := vecexec.OpenTasks(ctx, t.tbl, r, tasks, read)
	return batches, tasks, err
}

// read is scan of tbl for pushdown.Open, widen the same scan with more
// columns; the rows it hands up count on planned (the statement's
// rows_read, scanmetrics.go).
func (t *Table) read(ctx context.Context, planned *pushdown.Planned, tbl *table.Table, scan *table.Scan, widen func([]string) (*table.Scan, error)) pushdown.Read {
	r := pushdown.Read{Scan: scan, Widen: widen, Table: tbl, Caches: t.db.e.caches, Rows: planned.Rows()}
	if fs, err := t.tbl.FS(ctx); err == nil {
		r.FS = planned.IO(fs)
	}
	return r
}

// newScan scans the pinned snapshot, with the session's staged files added
// when the open transaction wrote to the table.
func (t *Table) NewScan(ctx *sql.Context, planned *pushdown.Planned, opts ...table.ScanOption) (*table.Scan, error) {
	if t.snapshotID != nil {
		return t.countingTable(ctx, planned).Scan(append(opts, table.WithSnapshotID(*t.snapshotID))...), nil
	}
	if len(t.staged) == 0 && !t.changes.any() {
		return t.onBranch(t.countingTable(ctx, planned).Scan(opts...))
	}
	v := t.staging
	v.once.Do(func() {
		v.tx = t.tbl.NewTransactionOnBranch(cmp.Or(t.branch, table.MainBranch))
		v.err = t.stageView(ctx, v.tx)
	})
	if v.err != nil {
		return nil, v.err
	}
	scan, err := v.tx.Scan(opts...)
	if err != nil {
		return nil, err
	}
	return t.onBranch(scan)
}

// rowIter turns Arrow batches into rows.
type rowIter struct {
	batches vecexec.BatchSource
	names   []string
	width   int
	rec     arrow.RecordBatch
	cols    []arrow.Array // rec's columns in row order
	row     int
	rows    sqlval.RowBlocks // where rows are allocated (sqlval/rowalloc.go)
	zone    *time.Location   // the session's, for timestamptz (sqlval/timezone.go)
	started bool
}

func (r *rowIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !r.started {
		r.zone, r.started = sqlval.SessionZone(ctx), true
	}
	for r.rec == nil || r.row >= int(r.rec.NumRows()) {
		rec, err := r.batches.Next()
		if err != nil {
			return nil, err // io.EOF ends the rows
		}
		r.rec, r.row = rec, 0
		r.cols = r.cols[:0]
		for _, name := range r.names[:r.width] {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return nil, fmt.Errorf("scan of %s returned no column %s", rec.Schema(), name)
			}
			r.cols = append(r.cols, rec.Column(idx[0]))
		}
	}
	row := r.rows.Next()
	for i, col := range r.cols {
		v, err := sqlval.RowValue(col, r.row)
		if err != nil {
			return nil, err
		}
		row[i] = sqlval.Zoned(col, v, r.zone)
	}
	r.row++
	return row, nil
}

func (r *rowIter) Close(*sql.Context) error {
	r.batches.Close()
	return nil
}

// oneRowGroupEach says every task's file has at most one row group, as far
// as its split offsets tell.
func oneRowGroupEach(tasks []table.FileScanTask) bool {
	for _, t := range tasks {
		if len(t.File.SplitOffsets()) > 1 {
			return false
		}
	}
	return true
}

// Iceberg column names are case sensitive and MySQL's are not, so a table
// may hold columns that differ only in case (PyIceberg's user_id and
// uSeR_Id), which go-mysql-server would resolve to one column. Such a column
// is shown under its name with its field id appended (uSeR_Id_2), so that
// every column stays reachable; sqlColumns gives the SQL names and
// resolveColumns maps them back.

// sqlColumns renames the later of columns whose names are equal ignoring case.
func sqlColumns(schema sql.Schema, sc *iceberg.Schema) sql.Schema {
	seen := map[string]bool{}
	fields := sc.Fields()
	var out sql.Schema
	for i, col := range schema {
		key := strings.ToLower(col.Name)
		if seen[key] && i < len(fields) {
			if out == nil {
				out = append(sql.Schema{}, schema...)
			}
			c := *col
			c.Name = fmt.Sprintf("%s_%d", col.Name, fields[i].ID)
			out[i] = &c
		}
		seen[key] = true
	}
	if out == nil {
		return schema
	}
	return out
}

// icebergNames lists a schema's column names in order.
func icebergNames(sc *iceberg.Schema) []string {
	fields := sc.Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}

// resolveColumns maps the column names go-mysql-server projects (which it
// may lower-case) to the Iceberg names that Arrow batches and iceberg-go's
// column selection match exactly.
func (t *Table) ResolveColumns(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c
		if j := t.schema.IndexOfColName(c); j >= 0 && j < len(t.names) {
			out[i] = t.names[j]
		}
	}
	return out
}
