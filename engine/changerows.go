package engine

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/pushdown"
)

// changeRowIter reads the changelog tasks one after another. A commit that
// both removes and adds data files (a copy-on-write DELETE, UPDATE or MERGE,
// a compaction) rewrites rows it did not change: those come back deleted
// from the old file and inserted in the new one. Like Spark's changelog
// views, table_changes drops such carry-over pairs, so such a commit's tasks
// are read together first; other commits' rows stream.
type changeRowIter struct {
	tbl     *table.Table
	tasks   []table.ChangelogScanTask
	width   int            // the table's columns
	zone    *time.Location // the session's, for timestamptz (sqlval/timezone.go)
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
		if errors.Is(err, io.EOF) {
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
	group := &changeRowIter{tbl: r.tbl, tasks: r.tasks[:n], width: r.width, zone: r.zone}
	r.tasks = r.tasks[n:]
	defer group.Close(ctx)
	var rows []sql.Row
	for len(group.tasks) > 0 || !group.between() {
		row, err := group.nextInTask(ctx)
		if errors.Is(err, io.EOF) {
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
		if errors.Is(err, io.EOF) {
			r.batches.Close()
			r.batches, r.rec = nil, nil
			return nil, io.EOF
		}
		if err != nil {
			return nil, err
		}
		r.rec, r.row = rec, 0
		sessionOf(ctx).noteRows(ctx, rec.NumRows()) // scanmetrics.go
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
		v, err := sqlval.RowValue(rec.Column(c), i)
		if err != nil {
			return nil, err
		}
		row = append(row, sqlval.Zoned(rec.Column(c), v, r.zone))
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
	beforeRows, err := r.allRows(ctx, before)
	if err != nil {
		return nil, err
	}
	after, err := pushdown.OpenAfterDeletes(ctx, r.tbl, task)
	if err != nil {
		return nil, err
	}
	afterRows, err := r.allRows(ctx, after)
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
func (r *changeRowIter) allRows(ctx *sql.Context, b *pushdown.Batches) ([]sql.Row, error) {
	defer b.Close()
	var rows []sql.Row
	for {
		rec, err := b.Next()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		if err != nil {
			return nil, err
		}
		sessionOf(ctx).noteRows(ctx, rec.NumRows())
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
