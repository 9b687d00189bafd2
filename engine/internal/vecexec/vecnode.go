package vecexec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"

	"github.com/icesql/icesql/pushdown/vector"
)

// vectorAggregate is a GroupBy (with the Filter under it) over an Iceberg
// scan, computed by pushdown/vector on Arrow batches on all cores. Its rows
// are the GroupBy's: same columns, same Go values.
type vectorAggregate struct {
	t      ScanTable
	read   []string // Iceberg names of the columns read
	plan   *vector.Plan
	outs   []vecOutput
	schema sql.Schema
	// original is the GroupBy subtree it replaces, kept as the node's only
	// child so that the analyzer's later rules (column indexes, process
	// tracking) prepare it too. It runs instead when a value leaves the
	// range the vector path computes exactly in (vector.ErrInexact), which
	// only the data can tell.
	original sql.Node
}

var _ sql.ExecBuilderNode = (*vectorAggregate)(nil)

func (v *vectorAggregate) Resolved() bool                 { return true }
func (v *vectorAggregate) IsReadOnly() bool               { return true }
func (v *vectorAggregate) Children() []sql.Node           { return []sql.Node{v.original} }
func (v *vectorAggregate) Schema(*sql.Context) sql.Schema { return v.schema }

func (v *vectorAggregate) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(v, len(children), 1)
	}
	nv := *v
	nv.original = children[0]
	return &nv, nil
}

func (v *vectorAggregate) String() string {
	pr := sql.NewTreePrinter()
	_ = pr.WriteNode("VectorizedGroupBy")
	var children []string
	if gb, ok := v.original.(*plan.GroupBy); ok {
		var sel, group []string
		for _, dep := range gb.SelectDeps {
			sel = append(sel, dep.String())
		}
		for _, g := range gb.GroupByExprs {
			group = append(group, g.String())
		}
		children = append(children, "select: "+strings.Join(sel, ", "), "group: "+strings.Join(group, ", "))
		if f, ok := gb.Child.(*plan.Filter); ok {
			children = append(children, "filter: "+f.Expression.String())
		}
	}
	children = append(children, fmt.Sprintf("Table(%s) columns: [%s]", v.t.String(), strings.Join(v.read, " ")))
	_ = pr.WriteChildren(children...)
	return pr.String()
}

// BuildRowIter implements sql.ExecBuilderNode.
func (v *vectorAggregate) BuildRowIter(ctx *sql.Context, b sql.NodeExecBuilder, row sql.Row) (sql.RowIter, error) {
	if len(row) > 0 {
		// Run inside an outer scope after all (vectorize declines
		// subqueries): the row path knows how to carry it.
		return b.Build(ctx, v.original, row)
	}
	groups, err := v.run(ctx)
	if errors.Is(err, vector.ErrInexact) {
		return b.Build(ctx, v.original, row)
	}
	if err != nil {
		return nil, err
	}
	return &groupIter{outs: v.outs, groups: groups}, nil // vecjoinagg.go
}

func (v *vectorAggregate) run(ctx *sql.Context) ([]vector.Group, error) {
	ctx, stop := v.t.WatchBudget(ctx) // memlimit/memlimit.go
	defer stop()
	src, _, err := v.t.OpenBatches(withPrefilter(v.t.WithNativeDecode(ctx), v.plan.Filter), v.read, false)
	if err != nil {
		return nil, err
	}
	defer src.Close()
	groups, err := vector.RunWithin(ctx, src, v.plan, 0, v.t.StateReserve()) // memlimit/vecreserve.go
	if err != nil && !errors.Is(err, vector.ErrInexact) {
		return nil, fmt.Errorf("vectorized aggregate over %s: %w", v.t.String(), err)
	}
	return groups, err
}
