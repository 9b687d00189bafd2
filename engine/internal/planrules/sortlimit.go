package planrules

import (
	"errors"
	"io"
	"slices"
	"unsafe"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/icesql/icesql/engine/internal/memlimit"
)

// SortBuilder runs ORDER BY without LIMIT (plan.Sort) itself.
// go-mysql-server's sort holds every row in a cache that asks the memory
// budget for each row, then sorts without ever looking at the context (a
// KILL QUERY waited for the whole sort) and evaluates the ORDER BY
// expressions at each comparison (ORDER BY RAND() compared values that
// changed under the sort). This one evaluates them once a row, as MySQL
// does, checks the budget as rows arrive (1038 when over) and the context
// while it sorts.
type SortBuilder struct {
	Next   sql.NodeExecBuilder // the vectorized builder
	Base   sql.NodeExecBuilder // go-mysql-server's builder, for the child
	Budget *memlimit.Budget    // the engine's memory budget, nil without a limit
}

func (b SortBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	s, ok := n.(*plan.Sort)
	if !ok {
		return b.Next.Build(ctx, n, row)
	}
	child, err := b.Base.Build(ctx, s.Child, row)
	if err != nil {
		return nil, err
	}
	return &sortIter{conds: s.SortConditions, child: child, budget: b.Budget}, nil
}

// sortIter sorts its child's rows on the first Next.
type sortIter struct {
	conds  sql.SortConditions
	child  sql.RowIter
	budget *memlimit.Budget
	rows   []keyedRow
	sorted bool
	next   int
}

// keyedRow is a row and the values of the ORDER BY expressions for it.
type keyedRow struct {
	row  sql.Row
	keys []any
}

func (it *sortIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !it.sorted {
		if err := it.sort(ctx); err != nil {
			return nil, err
		}
		it.sorted = true
	}
	if it.next >= len(it.rows) {
		return nil, io.EOF
	}
	r := it.rows[it.next].row
	it.rows[it.next] = keyedRow{} // the consumer holds it now
	it.next++
	return r, nil
}

func (it *sortIter) Close(ctx *sql.Context) error {
	it.rows = nil
	return it.child.Close(ctx)
}

func (it *sortIter) sort(ctx *sql.Context) error {
	var growth memlimit.Growth
	for {
		row, err := it.child.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		keys := make([]any, len(it.conds))
		for i, c := range it.conds {
			if keys[i], err = c.Expr.Eval(ctx, row); err != nil {
				return sql.ErrUnableSort.Wrap(err)
			}
		}
		if len(it.rows) == cap(it.rows) {
			// Doubling the array of millions of rows allocates hundreds of
			// MB at once, between two of growth's checks: ask first.
			more := max(len(it.rows), 64)
			if !it.budget.Admits(uint64(len(it.rows)+more) * uint64(unsafe.Sizeof(keyedRow{}))) {
				it.rows = nil
				return memlimit.OutOfMemory(true)
			}
			it.rows = slices.Grow(it.rows, more)
		}
		it.rows = append(it.rows, keyedRow{row: row, keys: keys})
		if err := growth.Grow(ctx, true); err != nil {
			it.rows = nil
			return err
		}
	}
	types := make([]sql.Type, len(it.conds))
	for i, c := range it.conds {
		types[i] = c.Expr.Type(ctx)
	}
	return sortStopping(ctx, it.rows, func(a, b keyedRow) (int, error) {
		return compareKeys(ctx, it.conds, types, a.keys, b.keys)
	})
}

// compareKeys orders two rows by their ORDER BY values as go-mysql-server's
// row sorter does (sql/sorters): direction first, then NULL placement.
func compareKeys(ctx *sql.Context, conds sql.SortConditions, types []sql.Type, a, b []any) (int, error) {
	for i, c := range conds {
		av, bv := a[i], b[i]
		if c.Order == sql.Descending {
			av, bv = bv, av
		}
		if av == nil && bv == nil {
			continue
		}
		if c.NullOrdering == sql.NullsFirst {
			if av == nil {
				return -1, nil
			}
			if bv == nil {
				return 1, nil
			}
		}
		cmp, err := types[i].Compare(ctx, av, bv)
		if err != nil {
			return 0, err
		}
		if cmp != 0 {
			return cmp, nil
		}
	}
	return 0, nil
}

// stoppedSort carries the error that ends a sort from inside the
// comparison, which slices.SortStableFunc gives no other way out of.
type stoppedSort struct{ err error }

// sortStopping sorts s stably with cmp, looking at the context every few
// thousand comparisons: a killed statement stops sorting at once. The first
// error cmp returns ends the sort too.
func sortStopping[T any](ctx *sql.Context, s []T, cmp func(a, b T) (int, error)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			stop, ok := r.(stoppedSort)
			if !ok {
				panic(r)
			}
			err = stop.err
		}
	}()
	var n uint32
	slices.SortStableFunc(s, func(a, b T) int {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				panic(stoppedSort{err: err})
			}
		}
		c, err := cmp(a, b)
		if err != nil {
			panic(stoppedSort{err: err})
		}
		return c
	})
	return nil
}
