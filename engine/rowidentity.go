package engine

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/pushdown"
)

// Row identity: UPDATE, DELETE and MERGE need to know where each row they
// change lives, as (data file, position in the file). go-mysql-server
// identifies rows only by their values, so the target of such a statement
// is resolved as a row-identity variant of the table (the parser renames
// it, see rowlevel.go) whose rows end with two hidden columns, _file and
// _pos; go-mysql-server's own UPDATE and DELETE nodes evaluate the WHERE
// clause, joins and subqueries, and hand the editor (rowedit.go) the old
// rows, hidden columns included.
//
// iceberg-go v0.7.0 has no _file or _pos column, but it synthesises the v3
// row-lineage column _row_id as the task's first_row_id plus the row's
// original position in the file, counted before deletes and filters drop
// rows (arrow_scanner.go, synthesizeRowLineageColumns). Reading task i with
// first_row_id = i<<posBits therefore yields both the task (file) and the
// position. The scan is made over an in-memory format-version 3 view of
// the metadata, since iceberg-go refuses _row_id below v3; the view is never
// committed. On v3 tables a data file may store _row_id values, which win
// over the synthesised ones; rowlineage_v3.go finds those rows' positions.

// rowIdentityPrefix marks the name of a table's row-identity variant. The
// NUL bytes keep it apart from any name a user can create.
const rowIdentityPrefix = "\x00rowid\x00"

// Hidden columns of the row-identity variant.
const (
	fileColumn = "_file"
	posColumn  = "_pos"
)

// posBits is how many low bits of the synthesised _row_id hold the
// position; the high bits number the task.
const posBits = 40

// identityState is shared by the copies of one resolved row-identity
// table: the tasks its scans read, by data file, and the row filters they
// read with (for the conflict check at commit).
type identityState struct {
	mu         sync.Mutex
	tasks      map[string]table.FileScanTask
	filter     iceberg.BooleanExpression
	unfiltered bool
}

func (s *identityState) record(tasks []table.FileScanTask, filter iceberg.BooleanExpression) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tasks == nil {
		s.tasks = map[string]table.FileScanTask{}
	}
	for _, t := range tasks {
		if _, ok := s.tasks[t.File.FilePath()]; !ok {
			s.tasks[t.File.FilePath()] = t
		}
	}
	switch {
	case filter == nil:
		s.unfiltered = true
	case s.filter == nil:
		s.filter = filter
	default:
		s.filter = iceberg.NewOr(s.filter, filter)
	}
}

func (s *identityState) task(path string) (table.FileScanTask, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tasks[path]
	return t, ok
}

// readFilter is what the statement's scans could have matched; nil for
// any row.
func (s *identityState) readFilter() iceberg.BooleanExpression {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.unfiltered {
		return nil
	}
	return s.filter
}

// rowIdentityTable resolves the row-identity variant of table name.
func (d *Database) rowIdentityTable(ctx *sql.Context, name string) (sql.Table, bool, error) {
	it, ok, err := d.rowLevelTable(ctx, name)
	if err != nil || !ok {
		if _, isView, verr := d.GetViewDefinition(ctx, name); verr != nil || isView {
			return nil, false, cmp.Or(verr, errViewNotUpdatable(name))
		}
		return nil, ok, err
	}
	for _, col := range it.schema {
		if strings.EqualFold(col.Name, fileColumn) || strings.EqualFold(col.Name, posColumn) {
			return nil, false, mysqlerr.NotSupported("table %s has a column named %s, the name UPDATE, DELETE and MERGE give the hidden row-identity column; rename the column to change rows of this table", it.name, col.Name)
		}
	}
	target, err := it.writeTarget(ctx)
	if err != nil {
		return nil, false, err
	}
	if err := rowLevelRefusal(ctx, it, target); err != nil {
		return nil, false, err
	}
	it.identity = sessionOf(ctx).identityState(ctx, target.stageKey(d.ident(it.name)))
	return it, true, nil
}

// identityState is the row-identity state of a table in the current
// statement, shared by every resolution of the table in it (a MERGE
// resolves its target again after its query ran). k is the stage key of
// the table and its write target, so that a branch has its own.
func (s *Session) identityState(ctx *sql.Context, k string) *identityState {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	st, ok := s.stmt.identities[k]
	if !ok {
		st = &identityState{}
		s.stmt.identities[k] = st
	}
	return st
}

// hiddenColumn is the hidden column called name, or nil.
func (t *Table) hiddenColumn(name string) *sql.Column {
	if t.identity == nil {
		return nil
	}
	switch strings.ToLower(name) {
	case fileColumn:
		return &sql.Column{Name: fileColumn, Type: types.LongText, Source: t.name, DatabaseSource: t.db.name, PrimaryKey: true}
	case posColumn:
		return &sql.Column{Name: posColumn, Type: types.Int64, Source: t.name, DatabaseSource: t.db.name, PrimaryKey: true}
	}
	return nil
}

// withHidden is schema followed by the hidden columns of a row-identity table.
func (t *Table) withHidden(schema sql.Schema) sql.Schema {
	if t.identity == nil {
		return schema
	}
	out := append(sql.Schema{}, schema...)
	return append(out, t.hiddenColumn(fileColumn), t.hiddenColumn(posColumn))
}

// identityColumns are the output columns of a row-identity scan: for each,
// the index of the Iceberg column read, or -1 for _file, -2 for _pos.
func (t *Table) identityOutput() (read []string, out []int) {
	names := t.projection
	if names == nil {
		for _, c := range t.schema {
			names = append(names, c.Name)
		}
		names = append(names, fileColumn, posColumn)
	}
	for _, n := range names {
		switch strings.ToLower(n) {
		case fileColumn:
			out = append(out, -1)
		case posColumn:
			out = append(out, -2)
		default:
			out = append(out, len(read))
			read = append(read, t.ResolveColumns([]string{n})[0])
		}
	}
	return read, out
}

// identityRows reads the rows of a row-identity table with their _file and
// _pos.
func (t *Table) identityRows(ctx *sql.Context) (sql.RowIter, error) {
	read, out := t.identityOutput()
	cols := read
	if len(cols) == 0 {
		cols = t.names[:1]
	}
	if t.rowSelect != nil {
		cols = t.rowSelect.ReadWith(cols) // vecexec/rowscan_fast.go
	}
	picker, err := vecexec.NewRowPicker(t.rowSelect)
	if err != nil {
		return nil, err
	}
	planned := t.Planned()
	scan, err := t.NewScan(ctx, planned, t.ScanOptions(planned, table.WithSelectedFields(cols...))...)
	if err != nil {
		return nil, err
	}
	tasks, err := planned.Tasks(ctx, scan)
	if err != nil {
		return nil, err
	}
	if err := vecexec.CheckFormats(t.String(), tasks); err != nil {
		return nil, err
	}
	if tasks, err = t.aligned.align(ctx, t.db.e, t.tbl, t.Snapshot(), tasks); err != nil {
		return nil, err
	}
	t.identity.record(tasks, t.RowFilter())
	// Planning pruned files with the row filter; reading uses the weakened
	// one (pushdown.ReadFilter): with the filter itself, iceberg-go skipped
	// every row group holding as many NULLs as values in the filtered
	// column, and DELETE ... WHERE k = 78 deleted nothing there. The Filter
	// above the scan decides each row.
	var readFilter iceberg.BooleanExpression
	if f := t.RowFilter(); f != nil {
		if readFilter, err = pushdown.ReadFilter(t.tbl.Schema(), f); err != nil {
			return nil, err
		}
		tasks = pushdown.ReadTasks(tasks)
	}
	numbered := make([]table.FileScanTask, len(tasks))
	for i, task := range tasks {
		task.FirstRowID = ptrTo(int64(i+1) << posBits) // rowlineage_v3.go
		numbered[i] = task
	}
	rtbl, rscan, err := t.positionScan(cols, readFilter)
	if err != nil {
		return nil, err
	}
	widen := func(extra []string) (*table.Scan, error) {
		_, s, err := t.positionScan(append(slices.Clone(cols), extra...), readFilter)
		return s, err
	}
	batches, err := vecexec.OpenTasks(ctx, rtbl, t.read(ctx, planned, rtbl, rscan, widen), numbered, cols)
	if err != nil {
		return nil, err
	}
	return &identityIter{batches: batches, names: read, out: out, tasks: numbered, table: t, lineage: &lineageIndex{}, picker: picker}, nil
}

func ptrTo[T any](v T) *T { return &v }

// positionScan is a scan of cols plus _row_id over the v3 view of the
// table as the statement sees it (with the transaction's staged changes).
func (t *Table) positionScan(cols []string, filter iceberg.BooleanExpression) (*table.Table, *table.Scan, error) {
	meta := t.tbl.Metadata()
	if t.staging.tx != nil {
		staged, err := t.staging.tx.StagedTable()
		if err != nil {
			return nil, nil, err
		}
		meta = staged.Metadata()
	}
	if meta.Version() < 3 {
		b, err := table.MetadataBuilderFromBase(meta, t.tbl.MetadataLocation())
		if err != nil {
			return nil, nil, err
		}
		if err := b.SetFormatVersion(3); err != nil {
			return nil, nil, fmt.Errorf("row positions of %s: %w", t, err)
		}
		if meta, err = b.Build(); err != nil {
			return nil, nil, fmt.Errorf("row positions of %s: %w", t, err)
		}
	}
	rtbl := table.New(t.tbl.Identifier(), meta, t.tbl.MetadataLocation(), t.tbl.FS, nil)
	opts := []table.ScanOption{table.WithSelectedFields(append(append([]string{}, cols...), iceberg.RowIDColumnName)...)}
	if filter != nil {
		opts = append(opts, table.WithRowFilter(filter))
	}
	return rtbl, rtbl.Scan(opts...), nil
}

// identityIter turns batches with _row_id into rows ending in _file, _pos.
type identityIter struct {
	batches vecexec.BatchSource
	names   []string
	out     []int
	tasks   []table.FileScanTask
	table   *Table
	lineage *lineageIndex
	rec     arrow.RecordBatch
	cols    []arrow.Array
	rowID   *array.Int64
	row     int
	picker  *vecexec.RowPicker // nil: every row
	zone    *time.Location     // the session's, for timestamptz (sqlval/timezone.go)
	started bool
}

func (r *identityIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !r.started {
		r.zone, r.started = sqlval.SessionZone(ctx), true
	}
	for r.rec == nil || r.row >= r.picker.Rows(int(r.rec.NumRows())) {
		rec, err := r.batches.Next()
		if err != nil {
			return nil, err
		}
		r.rec, r.row = rec, 0
		r.cols = r.cols[:0]
		for _, name := range r.names {
			idx := rec.Schema().FieldIndices(name)
			if len(idx) == 0 {
				return nil, fmt.Errorf("scan of %s returned no column %s", rec.Schema(), name)
			}
			r.cols = append(r.cols, rec.Column(idx[0]))
		}
		idx := rec.Schema().FieldIndices(iceberg.RowIDColumnName)
		if len(idx) == 0 {
			return nil, fmt.Errorf("scan returned no row positions (%s)", iceberg.RowIDColumnName)
		}
		ids, ok := rec.Column(idx[0]).(*array.Int64)
		if !ok {
			return nil, fmt.Errorf("row positions are %s, want int64", rec.Column(idx[0]).DataType())
		}
		r.rowID = ids
		if err := r.picker.Choose(rec); err != nil {
			return nil, err
		}
	}
	at := r.picker.Index(r.row)
	if r.rowID.IsNull(at) {
		return nil, fmt.Errorf("scan returned a row without a position")
	}
	id := r.rowID.Value(at)
	task, pos, err := r.locate(ctx, id)
	if err != nil {
		return nil, err
	}
	row := make(sql.Row, len(r.out))
	for i, o := range r.out {
		switch o {
		case -1:
			row[i] = r.tasks[task].File.FilePath()
		case -2:
			row[i] = pos
		default:
			v, err := sqlval.RowValue(r.cols[o], at)
			if err != nil {
				return nil, err
			}
			row[i] = sqlval.Zoned(r.cols[o], v, r.zone)
		}
	}
	r.row++
	return row, nil
}

func (r *identityIter) Close(*sql.Context) error {
	r.batches.Close()
	return nil
}

// rowLevelRefusal says why rows of t cannot be changed yet, or nil.
//   - A write-audit-publish session with a WAP id: its writes are staged
//     as snapshots no branch points at, and row changes commit to a branch.
//
// Tags and tables read AS OF are refused by writeTarget, as for INSERT.
func rowLevelRefusal(ctx *sql.Context, t *Table, target writeTarget) error {
	if target.wapID != "" {
		return mysqlerr.NotSupported("%s has write-audit-publish on and this session set the WAP id %s: UPDATE, DELETE and MERGE cannot stage a WAP snapshot yet; set spark.wap.branch instead of spark.wap.id to change rows on a branch", t, target.wapID)
	}
	return nil
}
