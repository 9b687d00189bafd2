package planrules

import (
	"errors"
	"fmt"
	"io"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// A join whose condition is an OR of conditions ran as a nested loop:
// go-mysql-server hashes a join only on an equality every joined row
// satisfies, and an OR has none. `a CROSS JOIN b WHERE a.k = b.id AND
// MONTH(a.d) >= 5 OR b.d <=> '2023-05-24'` (AND binds tighter: the
// equality is in the first branch only) compared 3,000 x 3,000 rows, over
// 10 s; MariaDB answered in 1 s. So did `ON a.k = b.id OR a.x = b.y`, and
// NOT EXISTS (... WHERE q.k = l.k OR q.s = l.s), an anti join on the OR.
//
// Only right rows for which some branch of the OR can be true can make the
// condition true. A branch holding an equality of a left expression with a
// right one is true only for the right rows of the left row's key that
// pass its conditions on the right side alone, and for none when its
// conditions on the left side alone fail for the left row; a branch
// reading only the right side is true for the same right rows whatever the
// left row; one reading only the left side makes every right row a
// candidate when it is true. keyOrJoins gives such a join a HashLookup
// over an OrSource as its right side; HashJoinBuilder reads it once per
// statement into one table: the right rows under their key in each keyed
// branch, the rows a right-only branch accepts, and, when there are
// left-only branches, every row, for a left row one of them holds for. Each
// left row gets the union of its rows, each right row once (a row found
// under an earlier table's key is not given again), and the join checks
// its whole condition on them as before: the rows given are the rows of
// the nested loop less rows for which the condition cannot be true, so
// inner, left outer, semi and anti joins (NOT EXISTS: a NULL condition is
// not true) answer exactly as before, NULLs included.

// maxOrBranches bounds the branches of an OR that is keyed.
const maxOrBranches = 6

// keyOrJoins gives the nested-loop joins of n whose condition holds an OR
// that every branch of can be keyed a HashLookup over an OrSource as their
// right side. SET icesql_decorrelate = OFF turns it off.
func keyOrJoins(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
	if !sqlval.SwitchedOn(ctx, DecorrelateVar) {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		j, ok := n.(*plan.JoinNode)
		if !ok || j.Filter == nil {
			return n, transform.SameTree, nil
		}
		switch j.Op {
		case plan.JoinTypeInner, plan.JoinTypeLeftOuter, plan.JoinTypeSemi, plan.JoinTypeAntiIncludeNulls:
		default:
			return n, transform.SameTree, nil
		}
		right := j.Right()
		if c, ok := right.(*plan.CachedResults); ok {
			right = c.Child
		}
		if _, ok := right.(*plan.HashLookup); ok || readsOuterScope(ctx, right) {
			return n, transform.SameTree, nil
		}
		for _, c := range expression.SplitConjunction(ctx, j.Filter) {
			if lookup := orLookup(ctx, c, j.Left().Schema(ctx), right); lookup != nil {
				out, err := j.WithChildren(ctx, j.Left(), lookup)
				return out, transform.NewTree, err
			}
		}
		return n, transform.SameTree, nil
	})
}

// orLookup is the HashLookup over an OrSource of right for the conjunct
// c, an OR each of whose branches is keyed, reads the right side alone or
// the left side alone (left is the left side's schema); nil when c is
// something else or no branch is keyed. The lookup's keys are the tuple
// of every keyed branch's keys, then the right-only branches' value (TRUE
// on the left) and the left-only branches' (TRUE on the right), so that
// go-mysql-server places their columns as it does a hash join's.
func orLookup(ctx *sql.Context, c sql.Expression, left sql.Schema, right sql.Node) *plan.HashLookup {
	if _, ok := c.(*expression.Or); !ok || !movable(ctx, c) {
		return nil
	}
	branches := expression.SplitDisjunction(c)
	if len(branches) > maxOrBranches {
		return nil
	}
	rs := right.Schema(ctx)
	src := &OrSource{Source: right}
	yes := expression.NewLiteral(true, types.Boolean)
	var lefts, rights, rightOnly, leftOnly []sql.Expression
	for _, b := range branches {
		switch {
		case readsOnlyColumnsOf(ctx, b, rs):
			rightOnly = append(rightOnly, b)
		case readsNoColumnOutside(ctx, b, left):
			leftOnly = append(leftOnly, b)
		default:
			l, r, lf, rf := branchKeys(ctx, b, left, rs)
			if len(l) == 0 {
				return nil
			}
			lefts, rights = append(lefts, l...), append(rights, r...)
			br := orBranchShape{width: len(l)}
			if br.rightFilter = rf != nil; br.rightFilter {
				lefts, rights = append(lefts, yes), append(rights, expression.NewIsTrue(rf))
			}
			if br.leftFilter = lf != nil; br.leftFilter {
				lefts, rights = append(lefts, expression.NewIsTrue(lf)), append(rights, yes)
			}
			src.shapes = append(src.shapes, br)
		}
	}
	if len(src.shapes) == 0 {
		return nil
	}
	if src.rightOnly = len(rightOnly) > 0; src.rightOnly {
		lefts, rights = append(lefts, yes), append(rights, expression.NewIsTrue(expression.JoinOr(rightOnly...)))
	}
	if src.leftOnly = len(leftOnly) > 0; src.leftOnly {
		lefts, rights = append(lefts, expression.NewIsTrue(expression.JoinOr(leftOnly...))), append(rights, yes)
	}
	return plan.NewHashLookup(ctx, src, expression.Tuple(rights), expression.Tuple(lefts), plan.JoinTypeInner)
}

// branchKeys splits a keyed branch b into its keys, the conjuncts that
// equal an expression of the left side (lefts) with one of the right side
// (rights), of types the hash table compares exactly (as hashPartialJoins
// takes them), and the AND of its conjuncts on the left side alone (lf)
// and on the right side alone (rf), nil when none: a left row lf is not
// true for, or a right row rf is not true for, cannot make b true.
func branchKeys(ctx *sql.Context, b sql.Expression, ls, rs sql.Schema) (lefts, rights []sql.Expression, lf, rf sql.Expression) {
	var lfs, rfs []sql.Expression
	for _, c := range expression.SplitConjunction(ctx, b) {
		switch {
		case readsOnlyColumnsOf(ctx, c, rs):
			rfs = append(rfs, c)
			continue
		case readsNoColumnOutside(ctx, c, ls):
			lfs = append(lfs, c)
			continue
		}
		eq, ok := c.(*expression.Equals)
		if !ok {
			continue
		}
		l, r := eq.Left(), eq.Right()
		if readsOnlyColumnsOf(ctx, r, ls) && readsOnlyColumnsOf(ctx, l, rs) {
			l, r = r, l
		}
		if readsOnlyColumnsOf(ctx, l, ls) && readsOnlyColumnsOf(ctx, r, rs) && HashableEquality(ctx, l, r) {
			lefts, rights = append(lefts, l), append(rights, r)
		}
	}
	if len(lfs) > 0 {
		lf = expression.JoinAnd(lfs...)
	}
	if len(rfs) > 0 {
		rf = expression.JoinAnd(rfs...)
	}
	return lefts, rights, lf, rf
}

// readsNoColumnOutside says c reads no column but those of schema (a
// constant reads none).
func readsNoColumnOutside(ctx *sql.Context, c sql.Expression, schema sql.Schema) bool {
	outside := false
	transform.InspectExpr(ctx, c, func(ctx *sql.Context, e sql.Expression) bool {
		if gf, ok := e.(*expression.GetField); ok && !schema.Contains(gf.Name(), gf.Table()) {
			outside = true
		}
		return outside
	})
	return !outside
}

// OrSource is the child of the HashLookup keyOrJoins makes: the join's
// right side, and how the lookup's key tuples split into the OR's
// branches. HashJoinBuilder reads it into one table per branch.
type OrSource struct {
	Source sql.Node
	shapes []orBranchShape // the keyed branches, in order
	// rightOnly: the keys end with whether a right-only branch holds;
	// leftOnly: then with whether a left-only branch holds.
	rightOnly, leftOnly bool
}

// orBranchShape is where a keyed branch's parts are in the lookup's key
// tuples: width key columns, then, when rightFilter, the right row's
// filter (TRUE on the left), then, when leftFilter, the left row's
// (TRUE on the right).
type orBranchShape struct {
	width                   int
	rightFilter, leftFilter bool
}

var (
	_ sql.Node            = (*OrSource)(nil)
	_ sql.ExecBuilderNode = (*OrSource)(nil)
)

func (o *OrSource) Resolved() bool                     { return o.Source.Resolved() }
func (o *OrSource) Schema(ctx *sql.Context) sql.Schema { return o.Source.Schema(ctx) }
func (o *OrSource) Children() []sql.Node               { return []sql.Node{o.Source} }
func (o *OrSource) IsReadOnly() bool                   { return o.Source.IsReadOnly() }

func (o *OrSource) WithChildren(ctx *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(o, len(children), 1)
	}
	no := *o
	no.Source = children[0]
	return &no, nil
}

func (o *OrSource) String() string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("OrSource: %s", o.Note())
	_ = p.WriteChildren(o.Source.String())
	return p.String()
}

func (o *OrSource) DescribeQuery(ctx *sql.Context, f sql.DescribeOptions) string {
	p := sql.NewTreePrinter()
	_ = p.WriteNode("OrSource: %s", o.Note())
	_ = p.WriteChildren(sql.Describe(ctx, o.Source, f))
	return p.String()
}

// Note says how the join reads its right side, for EXPLAIN.
func (o *OrSource) Note() string {
	s := fmt.Sprintf("read once per statement into a hash table per branch of the OR with an equality of the two sides (%d)", len(o.shapes))
	if o.rightOnly {
		s += ", and a list of the rows its branches on the right side alone accept"
	}
	if o.leftOnly {
		s += "; a left row a branch on the left side alone holds for gets every row"
	}
	return s + "; each left row gets the rows of its keys, each once, and the join checks its whole condition on them"
}

// OncePerStatement implements vecexec.ReadOnce, for EXPLAIN.
func (o *OrSource) OncePerStatement(*sql.Context) string {
	return "its rows fill the hash tables of the OR's branches"
}

// BuildRowIter reads the source: HashJoinBuilder builds the lookup above,
// so only something else that builds this node alone gets here.
func (o *OrSource) BuildRowIter(ctx *sql.Context, b sql.NodeExecBuilder, row sql.Row) (sql.RowIter, error) {
	return b.Build(ctx, o.Source, row)
}

// orKey is a key of an OrSource lookup's table: branch is the keyed
// branch's index, orRightOnly or orEveryRow.
type orKey struct {
	branch int
	key    any
}

const (
	orRightOnly = -1 // the rows a right-only branch accepts
	orEveryRow  = -2 // every row, for a left row a left-only branch holds for
)

// orBranch is one keyed branch of an OrSource lookup, with a hash lookup
// of its own keys that hashes them as a hash join on them would, and its
// filters on each side (nil when none).
type orBranch struct {
	hl                      *plan.HashLookup
	ints                    bool // hashesInts
	rightFilter, leftFilter sql.Expression
}

// branches splits hl's key tuples into the keyed branches of src, and the
// right-only and left-only branches' expressions (nil when absent).
func (src *OrSource) branches(ctx *sql.Context, hl *plan.HashLookup) (out []orBranch, rightOnly, leftOnly sql.Expression, err error) {
	rights, okr := hl.RightEntryKey.(expression.Tuple)
	lefts, okl := hl.LeftProbeKey.(expression.Tuple)
	if !okr || !okl || len(rights) != len(lefts) {
		return nil, nil, nil, fmt.Errorf("OR lookup: keys %s and %s are not tuples of one length", hl.RightEntryKey, hl.LeftProbeKey)
	}
	at := 0
	for _, shape := range src.shapes {
		w := shape.width
		b := plan.NewHashLookup(ctx, src.Source, expression.Tuple(rights[at:at+w]), expression.Tuple(lefts[at:at+w]), plan.JoinTypeInner)
		br := orBranch{hl: b, ints: hashesInts(ctx, b)}
		at += w
		if shape.rightFilter {
			br.rightFilter = rights[at]
			at++
		}
		if shape.leftFilter {
			br.leftFilter = lefts[at]
			at++
		}
		out = append(out, br)
	}
	if src.rightOnly {
		rightOnly = rights[at]
		at++
	}
	if src.leftOnly {
		leftOnly = lefts[at]
	}
	return out, rightOnly, leftOnly, nil
}

// holds says the filter f (an IS TRUE, or nil for none) holds for row.
func holds(ctx *sql.Context, f sql.Expression, row sql.Row) (bool, error) {
	if f == nil {
		return true, nil
	}
	v, err := f.Eval(ctx, row)
	return v == true, err
}

// buildOrTable reads src into hl's table: each row under its key in every
// keyed branch whose right filter it passes, under orRightOnly when a
// right-only branch holds for it, and under orEveryRow when there are
// left-only branches.
func (b HashJoinBuilder) buildOrTable(ctx *sql.Context, hl *plan.HashLookup, src *OrSource, row sql.Row) (table map[any][]sql.Row, err error) {
	branches, rightOnly, _, err := src.branches(ctx, hl)
	if err != nil {
		return nil, err
	}
	iter, err := b.Base.Build(ctx, src.Source, row)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := iter.Close(ctx); err == nil {
			err = cerr
		}
	}()
	table = map[any][]sql.Row{}
	for {
		r, err := iter.Next(ctx)
		if errors.Is(err, io.EOF) {
			return table, nil
		}
		if err != nil {
			return nil, err
		}
		for i, br := range branches {
			if ok, err := holds(ctx, br.rightFilter, r); err != nil || !ok {
				if err != nil {
					return nil, err
				}
				continue
			}
			key, err := hashKey(ctx, br.hl, br.hl.RightEntryKey, r, br.ints)
			if err != nil {
				return nil, err
			}
			k := orKey{i, key}
			table[k] = append(table[k], r)
		}
		if ok, err := holds(ctx, rightOnly, r); err != nil {
			return nil, err
		} else if ok && rightOnly != nil {
			table[orKey{orRightOnly, nil}] = append(table[orKey{orRightOnly, nil}], r)
		}
		if src.leftOnly {
			table[orKey{orEveryRow, nil}] = append(table[orKey{orEveryRow, nil}], r)
		}
	}
}

// probeOr returns the rows of table for the left row (row): every row
// when a left-only branch holds, else the rows under its key in each
// keyed branch whose left filter holds, and those a right-only branch
// accepts, each once: a row a branch gives is left out of the later
// ones, by the earlier branches' own test (its left filter, the row's
// right filter, equal keys).
func probeOr(ctx *sql.Context, hl *plan.HashLookup, src *OrSource, table map[any][]sql.Row, row sql.Row) ([]sql.Row, error) {
	branches, _, leftOnly, err := src.branches(ctx, hl)
	if err != nil {
		return nil, err
	}
	if leftOnly != nil {
		if ok, err := holds(ctx, leftOnly, row); err != nil || ok {
			return table[orKey{orEveryRow, nil}], err
		}
	}
	keys := make([]any, len(branches))
	active := make([]bool, len(branches))
	// gave says branch j gave r to this left row.
	gave := func(j int, r sql.Row) (bool, error) {
		if !active[j] {
			return false, nil
		}
		if ok, err := holds(ctx, branches[j].rightFilter, r); err != nil || !ok {
			return false, err
		}
		k, err := hashKey(ctx, branches[j].hl, branches[j].hl.RightEntryKey, r, branches[j].ints)
		return k == keys[j], err
	}
	var out []sql.Row
	add := func(rows []sql.Row, before int) error {
	rows:
		for _, r := range rows {
			for j := range before {
				if dup, err := gave(j, r); err != nil || dup {
					if err != nil {
						return err
					}
					continue rows
				}
			}
			out = append(out, r)
		}
		return nil
	}
	for i, br := range branches {
		if active[i], err = holds(ctx, br.leftFilter, row); err != nil {
			return nil, err
		}
		if !active[i] {
			continue
		}
		if keys[i], err = hashKey(ctx, br.hl, br.hl.LeftProbeKey, row, br.ints); err != nil {
			return nil, err
		}
		if err := add(table[orKey{i, keys[i]}], i); err != nil {
			return nil, err
		}
	}
	if src.rightOnly {
		if err := add(table[orKey{orRightOnly, nil}], len(branches)); err != nil {
			return nil, err
		}
	}
	return out, nil
}
