package engine

import (
	"io"
	"strings"
	"sync"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
)

// go-mysql-server runs a correlated subquery once per outer row, and each
// run used to scan the table again: plan, open and decode every data file.
// A table written by single-row INSERTs has one file per row, so
// sqllogictest's select1 (30 rows, subqueries in most queries) opened
// thousands of files per query. Small tables are therefore decoded once per
// statement and their rows served from memory to later scans of the same
// resolved table in the same statement. The statement's snapshot is pinned,
// so the rows cannot change meanwhile.

// rowCacheMaxRows bounds the tables whose rows are kept: by the record
// counts of the planned files, before deletes.
const rowCacheMaxRows = 10_000

// rowCache is shared by the copies (projections) of one resolved table;
// each copy's rows are kept apart, since copies may read differently.
type rowCache struct {
	mu   sync.Mutex
	pid  uint64 // the statement the rows were read in
	rows map[cacheKey][]sql.Row
}

type cacheKey struct {
	t    *Table
	cols string
}

func projectionKey(cols []string) string { return strings.Join(cols, "\x00") }

// cachedRows returns an iterator over rows read earlier in this statement
// by this very table value for the same columns.
func (t *Table) cachedRows(ctx *sql.Context, cols []string) (sql.RowIter, bool) {
	c := t.rowCache
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid != ctx.Pid() {
		return nil, false
	}
	rows, ok := c.rows[cacheKey{t, projectionKey(cols)}]
	if !ok {
		return nil, false
	}
	return &cachedIter{rows: rows}, true
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
	if err == io.EOF && !k.done {
		k.done = true
		k.t.storeRows(ctx, k.cols, k.rows)
	}
	if err != nil {
		return nil, err
	}
	k.rows = append(k.rows, row.Copy())
	return row, nil
}

func (k *keepingIter) Close(ctx *sql.Context) error { return k.it.Close(ctx) }

func (t *Table) storeRows(ctx *sql.Context, cols []string, rows []sql.Row) {
	c := t.rowCache
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pid != ctx.Pid() || c.rows == nil {
		c.pid, c.rows = ctx.Pid(), map[cacheKey][]sql.Row{}
	}
	c.rows[cacheKey{t, projectionKey(cols)}] = rows
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
