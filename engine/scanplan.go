package engine

import (
	"context"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/pushdown"
)

// rowFilter is the Iceberg filter of the scan, nil for none.
func (t *Table) RowFilter() iceberg.BooleanExpression {
	if t.filter == nil {
		return nil
	}
	return t.filter.expr
}

// planned is the planning shared by every scan of this table in the
// statement that has the same row filter.
func (t *Table) Planned() *pushdown.Planned { return t.plan.For(t.RowFilter()) }

// scanOptions adds the row filter and planning report to opts.
func (t *Table) ScanOptions(p *pushdown.Planned, opts ...table.ScanOption) []table.ScanOption {
	opts = append(opts, table.WithReporter(p))
	if f := t.RowFilter(); f != nil {
		opts = append(opts, table.WithRowFilter(f))
	}
	return opts
}

// countingTable is the pinned table reading through an IO that records, for
// EXPLAIN ANALYZE, what its scans read. The transaction's staged files are
// read through the table's own IO.
func (t *Table) countingTable(ctx context.Context, p *pushdown.Planned) *table.Table {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return t.tbl
	}
	counting := p.IO(fs)
	return table.New(t.tbl.Identifier(), t.tbl.Metadata(), t.tbl.MetadataLocation(),
		func(context.Context) (icebergio.IO, error) { return counting, nil }, nil)
}
