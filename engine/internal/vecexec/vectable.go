// Package vecexec is the vectorized executor: where a plan above an Iceberg
// scan is a filter, a GROUP BY, a hash join, an ORDER BY ... LIMIT or a
// COUNT/MIN/MAX that metadata answers, it runs on Arrow batches
// (pushdown/vector evaluates the expressions) and go-mysql-server sees only
// the result rows. Entry points: Vectorize and the other analyzer rules
// (vectorize.go, vecfilter.go), VectorBuilder (the exec builder),
// CountFromMetadata and MinMaxFromMetadata (metacount.go, metaminmax.go),
// BindScanIDs (scanid.go), and the batch-to-row iterator the row path reads
// scans through (vecfilteriter.go). It reads a table through the ScanTable
// interface (vectable.go), which engine's *Table implements.
package vecexec

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/icesql/icesql/pushdown"
	"github.com/icesql/icesql/pushdown/vector"
)

// ScanTable is an Iceberg table of a plan as the vectorized executor reads
// it: engine's *Table (engine/tablescan.go).
type ScanTable interface {
	sql.StatisticsTable
	// ScanRef is the table reference the table is in the plan (scanid.go).
	ScanRef() *ScanID
	// ColumnNames are the Iceberg names of AllColumns, in order.
	ColumnNames() []string
	// AllColumns is the schema of every column, whatever is projected.
	AllColumns() sql.Schema
	// Projection is the columns the statement reads; nil means all.
	Projection() []string
	Iceberg() *table.Table
	// AsOf is the snapshot AS OF names; nil for the pinned one.
	AsOf() *int64
	// RowIdentity says whether the table is the row-identity variant that
	// UPDATE, DELETE and MERGE change.
	RowIdentity() bool
	// WatchBudget runs growing work under the statement memory budget (see
	// memlimit.WatchBudget).
	WatchBudget(ctx *sql.Context) (*sql.Context, func())
	// StateReserve asks the statement memory budget before the vectorized
	// GROUP BY's state grows (memlimit/vecreserve.go).
	StateReserve() vector.Reserve
	// Caches are the engine's scan plan and footer caches.
	Caches() *pushdown.Caches
	ResolveColumns(cols []string) []string
	InSessionZone(ctx *sql.Context, name string, v any) any
	RowFilter() iceberg.BooleanExpression
	Planned() *pushdown.Planned
	ScanOptions(p *pushdown.Planned, opts ...table.ScanOption) []table.ScanOption
	NewScan(ctx *sql.Context, planned *pushdown.Planned, opts ...table.ScanOption) (*table.Scan, error)
	OpenBatches(ctx *sql.Context, cols []string, rowFiltered bool) (BatchSource, []table.FileScanTask, error)
	NoteReference(ctx *sql.Context, id sql.TableId)
	Snapshot() *table.Snapshot
	WithNativeDecode(ctx *sql.Context) *sql.Context
	ExactRowCount() (uint64, bool)
	FileBounds(ctx *sql.Context) (*FileBoundSet, error)
	Owns(gf *expression.GetField) bool
}

// AsScanTable is the Iceberg table under t's wrappers, if it is one.
func AsScanTable(t sql.Table) (ScanTable, bool) {
	for {
		switch w := t.(type) {
		case ScanTable:
			return w, true
		case sql.TableWrapper:
			t = w.Underlying()
		default:
			return nil, false
		}
	}
}

// ScanTables are the Iceberg tables n reads, subqueries included.
func ScanTables(ctx *sql.Context, n sql.Node) []ScanTable {
	var out []ScanTable
	WalkPlan(ctx, n, func(n sql.Node) {
		switch n := n.(type) {
		case *plan.IndexedTableAccess:
			if t, ok := AsScanTable(n.Table); ok {
				out = append(out, t)
			}
		case *plan.ResolvedTable:
			if t, ok := AsScanTable(n.Table); ok {
				out = append(out, t)
			}
		}
	})
	return out
}
