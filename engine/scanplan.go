package engine

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/pushdown"
)

// rowFilter is the Iceberg filter of the scan, nil for none.
func (t *Table) rowFilter() iceberg.BooleanExpression {
	if t.filter == nil {
		return nil
	}
	return t.filter.expr
}

// planned is the planning shared by every scan of this table in the
// statement that has the same row filter.
func (t *Table) planned() *pushdown.Planned { return t.plan.For(t.rowFilter()) }

// scanOptions adds the row filter and planning report to opts.
func (t *Table) scanOptions(p *pushdown.Planned, opts ...table.ScanOption) []table.ScanOption {
	opts = append(opts, table.WithReporter(p))
	if f := t.rowFilter(); f != nil {
		opts = append(opts, table.WithRowFilter(f))
	}
	return opts
}
