package engine

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/engine/internal/vecexec"
	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/pushdown/vector"
)

// Methods of Table the vectorized executor and metadata answers use
// (engine/internal/vecexec reads a Table through its scanTable interface).

// withNativeDecode returns ctx asking for native decoding of t's files.
func (t *Table) WithNativeDecode(ctx *sql.Context) *sql.Context {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return ctx // iceberg-go's reader reports it
	}
	planned := t.Planned()
	n := pushdown.Native{FS: planned.IO(fs), Schema: t.tbl.Schema(), Filter: t.RowFilter(), Stats: planned.NativeStats(), Caches: t.db.e.caches}
	return ctx.WithContext(context.WithValue(ctx.Context, vecexec.NativeKey{}, n))
}

// exactRowCount is the number of rows of the pinned snapshot plus the
// transaction's staged files, when the metadata says it exactly: delete
// files would remove rows the summary still counts.
func (t *Table) ExactRowCount() (uint64, bool) {
	if t.changes.any() {
		return 0, false
	}
	var n uint64
	if snap := t.Snapshot(); snap != nil {
		if snap.Summary == nil {
			return 0, false
		}
		props := snap.Summary.Properties
		if d, ok := props["total-delete-files"]; !ok || d != "0" {
			return 0, false
		}
		v, err := strconv.ParseUint(props["total-records"], 10, 64)
		if err != nil {
			return 0, false
		}
		n = v
	}
	for _, f := range t.staged {
		n += uint64(f.Count())
	}
	return n, true
}

func (t *Table) FileBounds(ctx *sql.Context) (*vecexec.FileBoundSet, error) {
	planned := t.Planned()
	scan, err := t.NewScan(ctx, planned, t.ScanOptions(planned)...)
	if err != nil {
		return nil, err
	}
	tasks, err := planned.Tasks(ctx, scan)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	fb := &vecexec.FileBoundSet{}
	for _, task := range tasks {
		if len(task.DeleteFiles) > 0 || len(task.EqualityDeleteFiles) > 0 || len(task.DeletionVectorFiles) > 0 {
			return nil, nil
		}
		if !seen[task.File.FilePath()] {
			seen[task.File.FilePath()] = true
			fb.Files = append(fb.Files, task.File)
		}
	}
	return fb, nil
}

// owns says the column reference gf is one of t's columns.
func (t *Table) Owns(gf *expression.GetField) bool {
	if t.scan.ID == 0 {
		// Unbound: go-mysql-server analyzes the query of an EXPLAIN
		// without the pre-analysis rules. Only columns qualified by the
		// table's own name qualify then (an alias loses the pushdown in
		// what EXPLAIN shows, never rows).
		return strings.EqualFold(gf.Table(), t.name)
	}
	return !t.scan.Ambiguous && gf.TableId() == t.scan.ID
}

func (t *Table) ScanRef() *vecexec.ScanID { return t.scan }
func (t *Table) ColumnNames() []string    { return t.names }
func (t *Table) AllColumns() sql.Schema   { return t.schema }
func (t *Table) Projection() []string     { return t.projection }
func (t *Table) Iceberg() *table.Table    { return t.tbl }
func (t *Table) AsOf() *int64             { return t.snapshotID }
func (t *Table) RowIdentity() bool        { return t.identity != nil }
func (t *Table) Caches() *pushdown.Caches { return t.db.e.caches }

func (t *Table) WatchBudget(ctx *sql.Context) (*sql.Context, func()) {
	return memlimit.WatchBudget(ctx, t.db.e.budget) // memlimit/memlimit.go
}

func (t *Table) StateReserve() vector.Reserve { return memlimit.StateReserve(t.db.e.budget) } // memlimit/vecreserve.go

var _ vecexec.ScanTable = (*Table)(nil)

// inSessionZone is v, a value of column name of t, as the session sees
// it (see zoned).
func (t *Table) InSessionZone(ctx *sql.Context, name string, v any) any {
	tv, ok := v.(time.Time)
	if !ok {
		return v
	}
	f, ok := t.tbl.Schema().FindFieldByNameCaseInsensitive(name)
	if _, tz := f.Type.(iceberg.TimestampTzType); !ok || !tz {
		return v
	}
	if loc := sqlval.SessionZone(ctx); loc != nil {
		return sqlval.WallClock(tv, loc)
	}
	return v
}
