package engine

import (
	"errors"
	"io"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// go-mysql-server runs a correlated subquery once per outer row, and each
// run used to scan the table again: plan, open and decode every data file.
// A table written by single-row INSERTs has one file per row, so
// sqllogictest's select1 (30 rows, subqueries in most queries) opened
// thousands of files per query. Small tables are therefore decoded once per
// statement and their rows served from memory to later scans in the same
// statement that read the same thing: the same snapshot of the same table,
// the same columns, the same pushed filter. Every reference to a table in a
// statement resolves to the same pinned table (Session.pinnedTable), so a
// self-join or a subquery on the same table shares the rows too; since
// such references are read at once (both sides of a join), a table the
// statement names more than once is read to the end by its first scan,
// which the others wait for. The statement's snapshot is pinned, so the
// rows cannot change meanwhile.

// rowCacheMaxRows bounds the tables whose rows are kept: by the record
// counts of the planned files, before deletes.
const rowCacheMaxRows = 10_000

// rowCache is a session's rows kept for its running statement.
type rowCache struct {
	mu   sync.Mutex
	pid  uint64 // the statement the rows were read in
	rows map[cacheKey]*statementScan
	// refs are the references (table ids) to each pinned table in the
	// statement's plan (bindScanIDs).
	refs map[*table.Table]map[sql.TableId]bool
}

// statementScan is the rows of one scan, or a read of them under way.
type statementScan struct {
	done chan struct{} // closed when the read ended
	rows []sql.Row     // set before done is closed; nil if it gave up
	ok   bool
}

// cacheKey says what a scan read. owner is the pinned table for a scan of
// a snapshot; a scan that also reads what the open transaction changed, or
// selects rows for a row-level change, is kept for its own table value.
type cacheKey struct {
	owner    any
	snapshot int64 // -1 without one
	branch   string
	cols     string
	filter   string
}

func projectionKey(cols []string) string { return strings.Join(cols, "\x00") }

// cacheKey is what t reads for the columns cols.
func (t *Table) cacheKey(cols []string) cacheKey {
	k := cacheKey{owner: t, snapshot: -1, branch: t.branch, cols: projectionKey(cols)}
	if t.identity == nil && t.rowSelect == nil && len(t.staged) == 0 && !t.changes.any() {
		k.owner = t.tbl
	}
	if snap := t.Snapshot(); snap != nil {
		k.snapshot = snap.SnapshotID
	}
	if f := t.RowFilter(); f != nil {
		k.filter = f.String()
	}
	return k
}

// statementRows is the row cache of ctx's session for its running
// statement, locked; nil outside an icesql session. Unlock it.
func statementRows(ctx *sql.Context) *rowCache {
	s, ok := ctx.Session.(*Session)
	if !ok {
		return nil
	}
	c := &s.rows
	c.mu.Lock()
	if c.pid != ctx.Pid() {
		// An earlier statement's rows go.
		c.pid, c.rows, c.refs = ctx.Pid(), map[cacheKey]*statementScan{}, map[*table.Table]map[sql.TableId]bool{}
	}
	return c
}

// noteReference counts a reference, by its table id, to t's pinned table
// in the running statement.
func (t *Table) NoteReference(ctx *sql.Context, id sql.TableId) {
	c := statementRows(ctx)
	if c == nil {
		return
	}
	defer c.mu.Unlock()
	if c.refs[t.tbl] == nil {
		c.refs[t.tbl] = map[sql.TableId]bool{}
	}
	c.refs[t.tbl][id] = true
}

// scanRows returns the rows of t for cols from the statement's cache,
// waiting for a read of them under way; for a table the statement names
// more than once it reads them itself first, when there are few enough.
// It returns nil when the caller is to read the rows (see keepRows).
func (t *Table) scanRows(ctx *sql.Context, cols []string) (sql.RowIter, error) {
	c := statementRows(ctx)
	if c == nil {
		return nil, nil
	}
	key := t.cacheKey(cols)
	if kept, ok := c.rows[key]; ok {
		c.mu.Unlock()
		select {
		case <-kept.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if !kept.ok {
			return nil, nil
		}
		return &cachedIter{rows: kept.rows}, nil
	}
	if key.owner != t.tbl || len(c.refs[t.tbl]) < 2 {
		c.mu.Unlock()
		return nil, nil
	}
	kept := &statementScan{done: make(chan struct{})}
	c.rows[key] = kept
	c.mu.Unlock()
	defer close(kept.done)
	batches, tasks, err := t.OpenBatches(ctx, cols, true)
	if err != nil {
		return nil, err
	}
	it := &rowIter{batches: batches, width: len(cols), names: cols, rows: sqlval.RowBlocks{Width: len(cols)}}
	if !smallEnough(tasks) {
		return it, nil
	}
	var rows []sql.Row
	for {
		row, err := it.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			it.Close(ctx)
			return nil, err
		}
		rows = append(rows, row.Copy())
		if len(rows)%memlimit.CheckEvery == 0 && ctx.Memory != nil && !ctx.Memory.HasAvailable() {
			// Past the budget (memlimit/memlimit.go): this scan goes on
			// without keeping its rows, the others read their own.
			return &restIter{rows: rows, it: it}, nil
		}
	}
	if err := it.Close(ctx); err != nil {
		return nil, err
	}
	kept.rows, kept.ok = rows, true
	return &cachedIter{rows: rows}, nil
}

// smallEnough reports whether the planned files hold few enough rows to keep.
func smallEnough(tasks []table.FileScanTask) bool {
	var n int64
	for _, task := range tasks {
		n += task.File.Count()
		if n > rowCacheMaxRows {
			return false
		}
	}
	return true
}

// keepRows returns it, remembering the rows it yields for later scans in
// this statement if it is read to the end. A scan stopped early (LIMIT,
// EXISTS) keeps nothing, and opens no more files than without the cache.
func (t *Table) keepRows(ctx *sql.Context, cols []string, it sql.RowIter) sql.RowIter {
	return &keepingIter{t: t, cols: cols, it: it}
}

type keepingIter struct {
	t    *Table
	cols []string
	it   sql.RowIter
	rows []sql.Row
	done bool
}

func (k *keepingIter) Next(ctx *sql.Context) (sql.Row, error) {
	row, err := k.it.Next(ctx)
	if errors.Is(err, io.EOF) && !k.done {
		k.done = true
		k.t.storeRows(ctx, k.cols, k.rows)
	}
	if err != nil {
		return nil, err
	}
	if !k.done {
		k.rows = append(k.rows, row.Copy())
		// The kept rows are the statement's memory: past the budget
		// (memlimit/memlimit.go) the scan goes on without keeping them.
		if len(k.rows)%memlimit.CheckEvery == 0 && ctx.Memory != nil && !ctx.Memory.HasAvailable() {
			k.rows, k.done = nil, true
		}
	}
	return row, nil
}

func (k *keepingIter) Close(ctx *sql.Context) error { return k.it.Close(ctx) }

func (t *Table) storeRows(ctx *sql.Context, cols []string, rows []sql.Row) {
	c := statementRows(ctx)
	if c == nil {
		return
	}
	defer c.mu.Unlock()
	key := t.cacheKey(cols)
	if _, ok := c.rows[key]; ok {
		return // read meanwhile by another scan
	}
	done := make(chan struct{})
	close(done)
	c.rows[key] = &statementScan{done: done, rows: rows, ok: true}
}

// cachedIter hands out copies, so that no consumer can change the kept rows.
type cachedIter struct {
	rows []sql.Row
	i    int
}

func (c *cachedIter) Next(*sql.Context) (sql.Row, error) {
	if c.i >= len(c.rows) {
		return nil, io.EOF
	}
	row := c.rows[c.i].Copy()
	c.i++
	return row, nil
}

func (c *cachedIter) Close(*sql.Context) error { return nil }

// restIter returns rows, then what it has left.
type restIter struct {
	rows []sql.Row
	it   sql.RowIter
}

func (r *restIter) Next(ctx *sql.Context) (sql.Row, error) {
	if len(r.rows) > 0 {
		row := r.rows[0]
		r.rows = r.rows[1:]
		return row, nil
	}
	return r.it.Next(ctx)
}

func (r *restIter) Close(ctx *sql.Context) error { return r.it.Close(ctx) }
