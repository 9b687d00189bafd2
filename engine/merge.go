package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// MERGE INTO runs as one query through the engine's own analyzer, on the
// statement's session and pinned snapshots: the source joined to the
// target's row-identity variant (rowidentity.go) on the ON condition, LEFT
// JOIN, or FULL OUTER JOIN when a WHEN NOT MATCHED BY SOURCE clause needs
// target rows without a source row. The query computes, per joined row, the
// first WHEN clause that holds (a CASE) and each clause's new column
// values, so SQL evaluates every condition and expression with its own
// NULL semantics: a NULL key never matches. The node then checks that no
// target row matched several source rows, and stages the deletes and new
// rows like UPDATE does (rowdelta.go).

// sourceMarker is a column added to the source so that a joined row tells
// whether a source row took part (it is NULL for a target row no source
// row matched).
const sourceMarker = "__icesql_source_row"

// interceptMerge gives a parsed MERGE the node that runs it.
func (p parser) interceptMerge(stmt ast.Statement) (ast.Statement, bool) {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return stmt, false
	}
	m, ok := inj.Statement.(*planner.Merge)
	if !ok {
		return stmt, false
	}
	inj.Statement = &mergeNode{e: p.e, m: m}
	return inj, true
}

type mergeNode struct {
	e *Engine
	m *planner.Merge
}

var (
	_ sql.ExecSourceRel = (*mergeNode)(nil)
	_ ast.Injectable    = (*mergeNode)(nil)
)

func (n *mergeNode) WithResolvedChildren(context.Context, []any) (any, error) { return n, nil }
func (n *mergeNode) Resolved() bool                                           { return true }
func (n *mergeNode) IsReadOnly() bool                                         { return false }
func (n *mergeNode) String() string                                           { return n.m.String() }
func (n *mergeNode) Children() []sql.Node                                     { return nil }
func (n *mergeNode) Schema(*sql.Context) sql.Schema                           { return types.OkResultSchema }
func (n *mergeNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// RowIter implements sql.ExecSourceRel: it runs the MERGE.
func (n *mergeNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	m := n.m
	dbName := m.TargetDB
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, sql.ErrNoDatabaseSelected.New()
	}
	t, err := n.e.mergeTarget(ctx, dbName, m.Target)
	if err != nil {
		return nil, err
	}
	q, err := n.e.merge(ctx, m, dbName, t)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(q.affected))), nil
}

// mergeTarget resolves the table a MERGE (or REPLACE) changes.
func (e *Engine) mergeTarget(ctx *sql.Context, dbName, name string) (*Table, error) {
	db, err := e.provider.Database(ctx, dbName)
	if err != nil {
		return nil, err
	}
	d, ok := db.(*Database)
	if !ok {
		return nil, mysqlerr.NotSupported("%s.%s: only Iceberg tables can be changed row by row", dbName, name)
	}
	tt, _, err := d.rowIdentityTable(ctx, name)
	if err != nil {
		return nil, err
	}
	return tt.(*Table), nil
}

// merge runs m against t and stages its changes; the query it returns
// counts what changed.
func (e *Engine) merge(ctx *sql.Context, m *planner.Merge, dbName string, t *Table) (*mergeQuery, error) {
	q, err := newMergeQuery(m, dbName, t)
	if err != nil {
		return nil, err
	}
	rows, err := e.runQuery(ctx, q.text)
	if err != nil {
		return nil, err
	}
	if err := q.apply(ctx, t, rows); err != nil {
		return nil, err
	}
	return q, nil
}

// runQuery runs a query within a MERGE or REPLACE statement: on its
// session, without committing the transaction at its end.
func (e *Engine) runQuery(ctx *sql.Context, query string) ([]sql.Row, error) {
	prev := ctx.Session.GetIgnoreAutoCommit()
	ctx.Session.SetIgnoreAutoCommit(true)
	defer ctx.Session.SetIgnoreAutoCommit(prev)
	// The query gets its own context with the statement's pid (so it reads
	// the pinned snapshots) but no process list: ending a query there
	// cancels the context of the pid, which is the MERGE's own.
	qctx := sql.NewContext(ctx, sql.WithSession(ctx.Session), sql.WithPid(ctx.Pid()), sql.WithMemoryManager(e.sqle.MemoryManager))
	_, iter, _, err := e.sqle.QueryWithBindings(qctx, query, nil, nil, nil)
	if err != nil {
		return nil, err
	}
	return sql.RowIterToRows(qctx, iter)
}

// mergeQuery is the query a MERGE runs and how to read its rows: _file,
// _pos, whether a source row took part, the number of the clause that
// applies (0: none), then each clause's values of the target's columns.
type mergeQuery struct {
	m       *planner.Merge
	text    string
	offsets []int // where each clause's values start in a row

	affected int // rows a clause applied to (apply sets it)
	matched  int // target rows a clause other than NOT MATCHED removed or replaced
}

func newMergeQuery(m *planner.Merge, db string, t *Table) (*mergeQuery, error) {
	ta, sa := sqlval.QuoteIdent(m.TargetAlias), sqlval.QuoteIdent(m.SourceAlias)
	matched := fmt.Sprintf("(%s.`_file` IS NOT NULL AND %s.%s IS NOT NULL)", ta, sa, sourceMarker)
	kinds := map[int]string{
		planner.WhenMatched:            matched,
		planner.WhenNotMatched:         fmt.Sprintf("(%s.`_file` IS NULL)", ta),
		planner.WhenNotMatchedBySource: fmt.Sprintf("(%s.%s IS NULL)", sa, sourceMarker),
	}
	q := &mergeQuery{m: m}
	var sel, cases []string
	sel = append(sel, ta+".`_file`", ta+".`_pos`", matched)
	join := "LEFT JOIN"
	at := 4
	for i, c := range m.Clauses {
		when := kinds[c.When]
		if c.When == planner.WhenNotMatchedBySource {
			join = "FULL OUTER JOIN"
		}
		if c.Cond != "" {
			when += " AND (" + c.Cond + ")"
		}
		cases = append(cases, fmt.Sprintf("WHEN %s THEN %d", when, i+1))
		values, err := clauseValues(c, t, ta, sa)
		if err != nil {
			return nil, err
		}
		q.offsets = append(q.offsets, at)
		at += len(values)
		sel = append(sel, values...)
	}
	sel = append(sel[:3], append([]string{"CASE " + strings.Join(cases, " ") + " ELSE 0 END"}, sel[3:]...)...)
	src := m.Source
	if strings.HasPrefix(src, "(") {
		src += " AS `__icesql_merge_source`"
	}
	// The target as the statement names it: t.name loses a branch (t$branch_b).
	q.text = fmt.Sprintf("SELECT %s FROM (SELECT *, 1 AS %s FROM %s) AS %s %s %s.%s AS %s ON (%s)",
		strings.Join(sel, ", "), sourceMarker, src, sa, join,
		sqlval.QuoteIdent(db), sqlval.QuoteIdent(rowIdentityPrefix+m.Target), ta, m.On)
	return q, nil
}

// clauseValues are the expressions of the target's columns after the
// clause's UPDATE or INSERT.
func clauseValues(c planner.MergeClause, t *Table, ta, sa string) ([]string, error) {
	if c.Action == planner.MergeDelete {
		return nil, nil
	}
	given := map[int]string{}
	for k, name := range c.Columns {
		i := t.schema.IndexOfColName(name)
		if i < 0 {
			return nil, mysqlerr.New(mysql.ERBadFieldError, "column %q of MERGE's %s is not a column of %s", name, actionName(c.Action), t.name)
		}
		if _, dup := given[i]; dup {
			return nil, mysqlerr.New(mysql.ERFieldSpecifiedTwice, "column %q is assigned twice in MERGE's %s", name, actionName(c.Action))
		}
		given[i] = "(" + c.Values[k] + ")"
	}
	out := make([]string, len(t.schema))
	for i, col := range t.schema {
		switch c.Action {
		case planner.MergeUpdateStar, planner.MergeInsertStar:
			out[i] = sa + "." + sqlval.QuoteIdent(col.Name)
		case planner.MergeUpdate:
			out[i] = ta + "." + sqlval.QuoteIdent(col.Name)
			if v, ok := given[i]; ok {
				out[i] = v
			}
		case planner.MergeInsert:
			out[i] = "NULL"
			if v, ok := given[i]; ok {
				out[i] = v
			}
		}
	}
	return out, nil
}

func actionName(a int) string {
	switch a {
	case planner.MergeInsert, planner.MergeInsertStar:
		return "INSERT"
	case planner.MergeDelete:
		return "DELETE"
	}
	return "UPDATE"
}

// cardinalityChecked reports whether a target row may match only one source
// row, as Spark requires unless the only MATCHED clause is an unconditional
// DELETE (deleting a row twice is deleting it once).
func (q *mergeQuery) cardinalityChecked() bool {
	var matched []planner.MergeClause
	for _, c := range q.m.Clauses {
		if c.When == planner.WhenMatched {
			matched = append(matched, c)
		}
	}
	if len(matched) == 0 {
		return false
	}
	return !(len(matched) == 1 && matched[0].Action == planner.MergeDelete && matched[0].Cond == "")
}

// apply turns the query's rows into staged deletes and new rows and
// returns how many target rows the MERGE changed, deleted or inserted.
func (q *mergeQuery) apply(ctx *sql.Context, t *Table, rows []sql.Row) error {
	type rowID struct {
		file string
		pos  int64
	}
	check := q.cardinalityChecked()
	seen := map[rowID]bool{}
	deleted := map[rowID]bool{}
	dels := map[string][]int64{}
	ins := &inserter{t: t}
	defer ins.stop(ctx)
	var moved *movedWriter // updated rows of a v3 table keep their ids (rowupdate_v3.go)
	defer func() { moved.stop() }()
	for _, r := range rows {
		var id rowID
		hasTarget := r[0] != nil
		if hasTarget {
			id = rowID{file: r[0].(string), pos: r[1].(int64)}
		}
		if check && hasTarget && isTrue(r[2]) {
			if seen[id] {
				return mysqlerr.New(mysqlerr.ErSubqueryNo1Row, "MERGE INTO %s: a target row matched multiple source rows; each target row may match at most one source row (deduplicate the source or narrow the ON condition); nothing was changed", t.name)
			}
			seen[id] = true
		}
		n, _, err := types.Int64.Convert(ctx, r[3])
		if err != nil {
			return err
		}
		clause := int(n.(int64))
		if clause == 0 {
			continue
		}
		c := q.m.Clauses[clause-1]
		if hasTarget && c.When != planner.WhenNotMatched {
			if !deleted[id] {
				deleted[id] = true
				dels[id.file] = append(dels[id.file], id.pos)
				q.matched++
			}
		}
		q.affected++
		if c.Action == planner.MergeDelete {
			continue
		}
		at := q.offsets[clause-1]
		row, err := convertRow(ctx, t, r[at:at+len(t.schema)])
		if err != nil {
			return err
		}
		if hasTarget && c.When != planner.WhenNotMatched && t.formatV3() {
			if moved == nil {
				moved = newMovedWriter(t)
			}
			if err := moved.add(ctx, id.file, id.pos, row); err != nil {
				return err
			}
			continue
		}
		if err := ins.Insert(ctx, row); err != nil {
			return err
		}
	}
	var files []iceberg.DataFile
	if ins.err != nil {
		return ins.err
	}
	ins.flush(ctx)
	if ins.err != nil {
		return ins.err
	}
	if ins.writer != nil {
		var err error
		files, err = ins.writer.finish()
		ins.writer = nil
		if err != nil {
			return fmt.Errorf("write data files of %s: %w", t, err)
		}
	}
	movedFiles, err := moved.finish(ctx)
	if err != nil {
		return err
	}
	files = append(files, movedFiles...)
	if err := sessionOf(ctx).stageRowChanges(ctx, t, "merge", dels, files); err != nil {
		return err
	}
	return nil
}

func isTrue(v any) bool {
	switch b := v.(type) {
	case bool:
		return b
	case int8:
		return b != 0
	case int64:
		return b != 0
	}
	return false
}

// convertRow converts values to the target's column types, as INSERT does.
func convertRow(ctx *sql.Context, t *Table, values sql.Row) (sql.Row, error) {
	out := make(sql.Row, len(values))
	for i, col := range t.schema {
		v := values[i]
		if v == nil {
			if !col.Nullable {
				return nil, mysqlerr.New(mysql.ERBadNullError, "Column '%s' cannot be null", col.Name)
			}
			continue
		}
		var cv any
		var inRange sql.ConvertInRange
		var err error
		if typ, ok := col.Type.(sql.RoundingNumberType); ok {
			cv, inRange, err = typ.ConvertRound(ctx, v)
		} else {
			cv, inRange, err = col.Type.Convert(ctx, v)
		}
		if err != nil {
			return nil, sql.ErrInvalidValue.New(fmt.Sprint(v), col.Type.String()+" (column "+col.Name+": "+err.Error()+")")
		}
		if inRange != sql.InRange {
			// Convert clamps to the type's range: storing that would
			// change the value (INSERT refuses it with 1264 too).
			return nil, sql.ErrValueOutOfRange.New(v, col.Type)
		}
		out[i] = cv
	}
	return out, nil
}
