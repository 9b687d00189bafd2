package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/pushdown"
)

// tableChanges is the table function
//
//	table_changes('db.t', start [, end])
//
// which returns the rows inserted and deleted between two snapshots, with
// the columns of Spark's changelog views: the table's columns, then
// _change_type (INSERT or DELETE), _change_ordinal (the commit's position in
// the range, from 0) and _commit_snapshot_id. start is exclusive and end
// inclusive, as Spark's start-snapshot-id and end-snapshot-id: each is a
// snapshot id, or a timestamp meaning the snapshot current at that time (in
// the session time zone). A NULL start, or a timestamp before the first
// snapshot, starts at the table's first snapshot; end defaults to the
// current snapshot.
type tableChanges struct {
	e    *Engine
	db   sql.Database
	args []sql.Expression

	// Set by NewInstance.
	name   string // db.t
	tbl    *table.Table
	schema sql.Schema
}

var (
	_ sql.TableFunction = (*tableChanges)(nil)
	_ sql.ExecSourceRel = (*tableChanges)(nil)
)

// TableFunction implements sql.TableFunctionProvider.
func (p *provider) TableFunction(_ *sql.Context, name string) (sql.TableFunction, bool) {
	if strings.EqualFold(name, "table_changes") {
		return &tableChanges{e: p.e}, true
	}
	return nil, false
}

// WithTableFunctions implements sql.TableFunctionProvider; icesql's table
// functions are fixed.
func (p *provider) WithTableFunctions(...sql.TableFunction) (sql.TableFunctionProvider, error) {
	return p, nil
}

func (t *tableChanges) Name() string { return "table_changes" }
func (t *tableChanges) String() string {
	return fmt.Sprintf("table_changes(%s)", t.name)
}
func (t *tableChanges) Resolved() bool {
	for _, a := range t.args {
		if !a.Resolved() {
			return false
		}
	}
	return true
}
func (t *tableChanges) IsReadOnly() bool               { return true }
func (t *tableChanges) Children() []sql.Node           { return nil }
func (t *tableChanges) Schema(*sql.Context) sql.Schema { return t.schema }
func (t *tableChanges) Database() sql.Database         { return t.db }
func (t *tableChanges) Expressions() []sql.Expression  { return t.args }
func (t *tableChanges) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(children), 0)
	}
	return t, nil
}
func (t *tableChanges) WithDatabase(db sql.Database) (sql.Node, error) {
	nt := *t
	nt.db = db
	return &nt, nil
}
func (t *tableChanges) WithExpressions(_ *sql.Context, exprs ...sql.Expression) (sql.Node, error) {
	if len(exprs) != len(t.args) {
		return nil, sql.ErrInvalidChildrenNumber.New(t, len(exprs), len(t.args))
	}
	nt := *t
	nt.args = exprs
	return &nt, nil
}

// NewInstance implements sql.TableFunction. It resolves the table now,
// since the result's columns are the table's; the bounds are evaluated when
// the rows are read, so that they may be subqueries or variables.
func (t *tableChanges) NewInstance(ctx *sql.Context, db sql.Database, args []sql.Expression) (sql.Node, error) {
	if len(args) < 2 || len(args) > 3 {
		return nil, wrongArguments("table_changes takes 2 or 3 arguments (table, start [, end]), not %d", len(args))
	}
	var name any
	var err error
	if args[0].Resolved() {
		name, err = args[0].Eval(ctx, nil)
	}
	s, ok := name.(string)
	if err != nil || !ok {
		return nil, wrongArguments("table_changes: the first argument must name a table as a string constant, such as 'db.t'")
	}
	nt := &tableChanges{e: t.e, db: db, args: args}
	it, err := nt.resolveTable(ctx, db, s)
	if err != nil {
		return nil, err
	}
	nt.name, nt.tbl = it.db.name+"."+it.name, it.tbl
	for _, c := range it.schema {
		nc := *c
		nc.Source, nc.DatabaseSource = "table_changes", ""
		nt.schema = append(nt.schema, &nc)
	}
	nt.schema = append(nt.schema,
		&sql.Column{Name: "_change_type", Type: types.LongText, Source: "table_changes"},
		&sql.Column{Name: "_change_ordinal", Type: types.Int32, Source: "table_changes"},
		&sql.Column{Name: "_commit_snapshot_id", Type: types.Int64, Source: "table_changes"},
	)
	return nt, nil
}

// resolveTable finds the table a string such as 'db.t', 'icesql.db.t' or
// 't' (in the current database) names.
func (t *tableChanges) resolveTable(ctx *sql.Context, current sql.Database, name string) (*Table, error) {
	parts := strings.Split(name, ".")
	if len(parts) == 3 && strings.EqualFold(parts[0], t.e.cfg.CatalogName) {
		parts = parts[1:]
	}
	var dbName, tableName string
	switch len(parts) {
	case 1:
		if current == nil || current.Name() == "" {
			return nil, sql.ErrNoDatabaseSelected.New()
		}
		dbName, tableName = current.Name(), parts[0]
	case 2:
		dbName, tableName = parts[0], parts[1]
	default:
		return nil, wrongArguments("table_changes: %q is not a table name of the form db.table", name)
	}
	db, err := t.e.provider.Database(ctx, dbName)
	if err != nil {
		return nil, err
	}
	st, ok, err := db.GetTableInsensitive(ctx, tableName)
	if err != nil {
		return nil, err
	}
	it, isTable := st.(*Table)
	if !ok || !isTable {
		return nil, sql.ErrTableNotFound.New(name)
	}
	return it, nil
}

// changeRange resolves table_changes' start and optional end.
func changeRange(ctx *sql.Context, tbl *table.Table, name string, bounds []any) (pushdown.ChangeRange, bool, error) {
	var r pushdown.ChangeRange
	current := tbl.CurrentSnapshot()
	if current == nil {
		return r, true, nil
	}
	r.To = current.SnapshotID
	if len(bounds) > 1 && bounds[1] != nil {
		end, found, err := snapshotAt(ctx, tbl, name, "end", bounds[1])
		if err != nil {
			return r, false, err
		}
		if !found {
			return r, true, nil // nothing was committed by then
		}
		r.To = end
	}
	if bounds[0] != nil {
		start, found, err := snapshotAt(ctx, tbl, name, "start", bounds[0])
		if err != nil {
			return r, false, err
		}
		if found {
			r.After = &start
		}
	}
	return r, false, nil
}

// snapshotAt resolves a bound: a snapshot id, or a timestamp meaning the
// snapshot current at that time. found is false for a time before the
// table's first snapshot.
func snapshotAt(ctx *sql.Context, tbl *table.Table, name, which string, v any) (int64, bool, error) {
	var ts time.Time
	switch v := v.(type) {
	case time.Time:
		ts = v
	case string:
		if id, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil {
			return snapshotByID(tbl, name, which, id)
		}
		t, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if err != nil {
			return 0, false, wrongArguments("table_changes %s %q: neither a snapshot id nor a timestamp", which, v)
		}
		ts = t.(time.Time)
	default:
		id, err := toInt64(v)
		if err != nil {
			return 0, false, wrongArguments("table_changes %s %v: neither a snapshot id nor a timestamp", which, v)
		}
		return snapshotByID(tbl, name, which, id)
	}
	tz, err := function.SessionTimeZone(ctx)
	if err != nil {
		return 0, false, err
	}
	if utc, ok := sql.ConvertTimeZone(ts, tz, "UTC"); ok {
		ts = utc
	}
	id, found := pushdown.SnapshotAsOf(tbl, ts.UnixMilli())
	return id, found, nil
}

func snapshotByID(tbl *table.Table, name, which string, id int64) (int64, bool, error) {
	if tbl.Metadata().SnapshotByID(id) == nil {
		return 0, false, wrongArguments("table_changes %s: table %s has no snapshot %d", which, name, id)
	}
	return id, true, nil
}

// RowIter implements sql.ExecSourceRel.
func (t *tableChanges) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	bounds := make([]any, 0, 2)
	for i, a := range t.args[1:] {
		v, err := a.Eval(ctx, nil)
		if err != nil {
			return nil, fmt.Errorf("table_changes argument %d: %w", i+2, err)
		}
		bounds = append(bounds, v)
	}
	rng, empty, err := changeRange(ctx, t.tbl, t.name, bounds)
	if err != nil || empty {
		return sql.RowsToRowIter(), err
	}
	tasks, err := pushdown.PlanChanges(ctx, t.tbl, rng)
	if errors.Is(err, pushdown.ErrNotAncestor) {
		return nil, wrongArguments("table_changes(%s): %v", t.name, err)
	}
	if err != nil {
		return nil, fmt.Errorf("table_changes(%s): %w", t.name, err)
	}
	return &changeRowIter{tbl: t.tbl, tasks: tasks, width: len(t.schema) - 3}, nil
}

// changeRowIter reads the changelog tasks one after another. A commit that
// both removes and adds data files (a copy-on-write DELETE, UPDATE or MERGE,
// a compaction) rewrites rows it did not change: those come back deleted
// from the old file and inserted in the new one. Like Spark's changelog
// views, table_changes drops such carry-over pairs, so such a commit's tasks
// are read together first; other commits' rows stream.
type changeRowIter struct {
	tbl     *table.Table
	tasks   []table.ChangelogScanTask
	width   int // the table's columns
	batches *pushdown.Batches
	task    table.ChangelogScanTask
	rec     arrow.RecordBatch
	row     int
	ready   []sql.Row // a rewriting commit's changes, carry-overs dropped
	// pending holds the rows of a table.DeletedRowsScanTask, which are
	// computed whole; inPending says they are being read.
	pending   []sql.Row
	inPending bool
}

func (r *changeRowIter) Next(ctx *sql.Context) (sql.Row, error) {
	for {
		if len(r.ready) > 0 {
			row := r.ready[0]
			r.ready = r.ready[1:]
			return row, nil
		}
		if r.between() {
			if len(r.tasks) == 0 {
				return nil, io.EOF
			}
			if rewrites(r.tasks) {
				if err := r.readRewrite(ctx); err != nil {
					return nil, err
				}
				continue
			}
		}
		row, err := r.nextInTask(ctx)
		if err == io.EOF {
			continue
		}
		return row, err
	}
}

// rewrites reports whether the commit of the first task removes and adds files.
func rewrites(tasks []table.ChangelogScanTask) bool {
	ops := map[table.ChangelogOperation]bool{}
	for _, t := range tasks {
		if t.ChangeOrdinal() != tasks[0].ChangeOrdinal() {
			break
		}
		ops[t.Operation()] = true
	}
	return len(ops) > 1
}

// readRewrite reads the tasks of the first task's commit and keeps the
// rows that changed: a deleted row and an inserted row with the same values
// cancel out.
func (r *changeRowIter) readRewrite(ctx *sql.Context) error {
	ordinal := r.tasks[0].ChangeOrdinal()
	n := 0
	for n < len(r.tasks) && r.tasks[n].ChangeOrdinal() == ordinal {
		n++
	}
	group := &changeRowIter{tbl: r.tbl, tasks: r.tasks[:n], width: r.width}
	r.tasks = r.tasks[n:]
	defer group.Close(ctx)
	var rows []sql.Row
	for len(group.tasks) > 0 || !group.between() {
		row, err := group.nextInTask(ctx)
		if err == io.EOF {
			continue
		}
		if err != nil {
			return err
		}
		rows = append(rows, row)
	}
	// A row deleted n times and inserted m times was carried over
	// min(n, m) times; those copies go on both sides.
	counts := map[string]*[2]int{} // deleted, inserted
	for _, row := range rows {
		key := rowKey(row[:r.width])
		if counts[key] == nil {
			counts[key] = &[2]int{}
		}
		if row[r.width] == string(table.ChangelogOpDelete) {
			counts[key][0]++
		} else {
			counts[key][1]++
		}
	}
	drop := make(map[string]*[2]int, len(counts))
	for key, c := range counts {
		m := min(c[0], c[1])
		drop[key] = &[2]int{m, m}
	}
	for _, row := range rows {
		side := 1
		if row[r.width] == string(table.ChangelogOpDelete) {
			side = 0
		}
		if d := drop[rowKey(row[:r.width])]; d[side] > 0 {
			d[side]--
			continue
		}
		r.ready = append(r.ready, row)
	}
	return nil
}

// rowKey encodes a row's values so that equal rows, and only they, get the
// same key. Decimals are pointers, so values are compared by their text.
func rowKey(row sql.Row) string {
	var b strings.Builder
	for _, v := range row {
		var text string
		switch v := v.(type) {
		case nil:
			b.WriteString("N;")
			continue
		case []byte:
			text = string(v)
		case fmt.Stringer:
			text = v.String()
		default:
			text = fmt.Sprint(v)
		}
		fmt.Fprintf(&b, "%T:%d:%s;", v, len(text), text)
	}
	return b.String()
}

// between reports whether no task is being read.
func (r *changeRowIter) between() bool { return r.batches == nil && !r.inPending }

// nextInTask reads the next row of the current task, opening the next task
// first if none is open; io.EOF ends each task.
func (r *changeRowIter) nextInTask(ctx *sql.Context) (sql.Row, error) {
	if r.between() {
		if len(r.tasks) == 0 {
			return nil, io.EOF
		}
		r.task, r.tasks = r.tasks[0], r.tasks[1:]
		if dr, ok := r.task.(table.DeletedRowsScanTask); ok {
			rows, err := r.deletedRows(ctx, dr)
			if err != nil {
				return nil, err
			}
			r.pending, r.inPending = rows, true
		} else {
			b, err := pushdown.OpenChange(ctx, r.tbl, r.task)
			if err != nil {
				return nil, err
			}
			r.batches, r.rec = b, nil
		}
	}
	if r.inPending {
		if len(r.pending) == 0 {
			r.inPending = false
			return nil, io.EOF
		}
		row := r.pending[0]
		r.pending = r.pending[1:]
		return row, nil
	}
	for r.rec == nil || r.row >= int(r.rec.NumRows()) {
		rec, err := r.batches.Next()
		if err == io.EOF {
			r.batches.Close()
			r.batches, r.rec = nil, nil
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		r.rec, r.row = rec, 0
	}
	row, err := r.tableRow(r.rec, r.row)
	if err != nil {
		return nil, err
	}
	r.row++
	return r.withChange(row, r.task), nil
}

// tableRow reads the table's columns of row i of rec.
func (r *changeRowIter) tableRow(rec arrow.RecordBatch, i int) (sql.Row, error) {
	row := make(sql.Row, 0, r.width+3)
	for c := 0; c < r.width; c++ {
		v, err := rowValue(rec.Column(c), i)
		if err != nil {
			return nil, err
		}
		row = append(row, v)
	}
	return row, nil
}

func (r *changeRowIter) withChange(row sql.Row, task table.ChangelogScanTask) sql.Row {
	return append(row, string(task.Operation()), int32(task.ChangeOrdinal()), task.CommitSnapshotID())
}

// deletedRows returns the rows a merge-on-read commit's delete files
// deleted from one data file: the rows live before them and not after.
func (r *changeRowIter) deletedRows(ctx *sql.Context, task table.DeletedRowsScanTask) ([]sql.Row, error) {
	before, err := pushdown.OpenChange(ctx, r.tbl, task)
	if err != nil {
		return nil, err
	}
	beforeRows, err := r.allRows(before)
	if err != nil {
		return nil, err
	}
	after, err := pushdown.OpenAfterDeletes(ctx, r.tbl, task)
	if err != nil {
		return nil, err
	}
	afterRows, err := r.allRows(after)
	if err != nil {
		return nil, err
	}
	remaining := map[string]int{}
	for _, row := range afterRows {
		remaining[rowKey(row)]++
	}
	var out []sql.Row
	for _, row := range beforeRows {
		if key := rowKey(row); remaining[key] > 0 {
			remaining[key]--
			continue
		}
		out = append(out, r.withChange(row, task))
	}
	return out, nil
}

// allRows reads every row of b and closes it.
func (r *changeRowIter) allRows(b *pushdown.Batches) ([]sql.Row, error) {
	defer b.Close()
	var rows []sql.Row
	for {
		rec, err := b.Next()
		if err == io.EOF {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			row, err := r.tableRow(rec, i)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		}
	}
}

func (r *changeRowIter) Close(*sql.Context) error {
	if r.batches != nil {
		r.batches.Close()
		r.batches = nil
	}
	return nil
}

// wrongArguments is MySQL error 1210 (ER_WRONG_ARGUMENTS).
func wrongArguments(format string, args ...any) error {
	return mysql.NewSQLError(mysql.ERWrongArguments, "HY000", format, args...)
}
