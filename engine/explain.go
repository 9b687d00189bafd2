package engine

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/planrules"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// EXPLAIN prints go-mysql-server's plan tree followed by one section per
// Iceberg scan: the filter pushed to Iceberg, the residual SQL evaluates,
// and what planning kept and skipped. EXPLAIN ANALYZE runs the query first
// and adds what reading cost.

// explainAsTree makes a plain EXPLAIN print the plan tree: this
// go-mysql-server answers MySQL's tabular EXPLAIN with a placeholder row.
// EXPLAIN FORMAT=JSON is planned as a tree too, and printed as JSON
// (planrules/explainjson.go).
func explainAsTree(stmt ast.Statement) {
	if ex, ok := stmt.(*ast.Explain); ok && !ex.Analyze && (ex.ExplainFormat == "" || strings.EqualFold(ex.ExplainFormat, "json")) {
		ex.ExplainFormat = ast.TreeStr
	}
}

// explainBuilder is the exec builder's priority builder: it builds
// DescribeQuery nodes and passes every other node on to next.
type explainBuilder struct {
	next sql.NodeExecBuilder // the NULL-first comparisons' builder
	base sql.NodeExecBuilder
}

func (b explainBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	dq, ok := n.(*plan.DescribeQuery)
	if !ok || !dq.Format.Plan {
		return b.next.Build(ctx, n, row)
	}
	if dq.Format.Analyze {
		if err := b.drain(ctx, dq.Child, row); err != nil {
			return nil, err
		}
	}
	// The plans of go-mysql-server's short rule sets show what the exec
	// builder runs (sqlfunc/overflow.go, sqlfunc/decimalcompare.go).
	shown, _, err := sqlfunc.CheckNodeArithmetic(ctx, dq.Child)
	if err != nil {
		return nil, err
	}
	text := sql.Describe(ctx, shown, dq.Format)
	if joins := describeJoins(ctx, dq.Child); joins != "" {
		text += "\n" + joins
	}
	for _, t := range icebergScans(ctx, dq.Child) {
		section, err := t.describeScan(ctx, dq.Format.Analyze)
		if err != nil {
			return nil, err
		}
		text += "\n" + section
	}
	var lines []string
	for _, l := range strings.Split(strings.ReplaceAll(text, "\r", ""), "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if planrules.ExplainsAsJSON(ctx) { // planrules/explainjson.go
		doc, err := planrules.ExplainJSON(lines)
		return sql.RowsToRowIter(sql.NewRow(doc)), err
	}
	rows := make([]sql.Row, len(lines))
	for i, l := range lines {
		rows[i] = sql.NewRow(l)
	}
	return sql.RowsToRowIter(rows...), nil
}

// drain runs the query of EXPLAIN ANALYZE to its end.
func (b explainBuilder) drain(ctx *sql.Context, n sql.Node, row sql.Row) error {
	iter, err := b.base.Build(ctx, n, row)
	if err != nil {
		return err
	}
	for {
		if _, err := iter.Next(ctx); err != nil {
			cerr := iter.Close(ctx)
			if errors.Is(err, io.EOF) {
				return cerr
			}
			return err
		}
	}
}

// icebergScans lists the Iceberg tables n scans, subqueries included, in
// plan order.
func icebergScans(ctx *sql.Context, n sql.Node) []*Table {
	var out []*Table
	for _, s := range vecexec.ScanTables(ctx, n) {
		if t, ok := s.(*Table); ok {
			out = append(out, t)
		}
	}
	return out
}

// unwrapTable finds the Iceberg table under go-mysql-server's wrappers
// (the process list's progress tracking wraps every scanned table).
func unwrapTable(t sql.Table) (*Table, bool) {
	s, ok := vecexec.AsScanTable(t)
	if !ok {
		return nil, false
	}
	tbl, ok := s.(*Table)
	return tbl, ok
}

// describeScan plans the scan (once per statement, as reading it would)
// and prints what it pushes down and prunes.
func (t *Table) describeScan(ctx *sql.Context, analyzed bool) (string, error) {
	planned := t.Planned()
	scan, err := t.NewScan(ctx, planned, t.ScanOptions(planned)...)
	if err != nil {
		return "", err
	}
	if _, err := planned.Tasks(ctx, scan); err != nil {
		return "", err
	}
	pushed, residual := "none", "none"
	if t.filter != nil {
		pushed = t.filter.text
		if len(t.filter.residual) > 0 {
			residual = strings.Join(t.filter.residual, " AND ")
		}
	}
	pr := sql.NewTreePrinter()
	_ = pr.WriteNode("IcebergScan(%s)", t.String())
	p := planned.Pruning(t.totalDataFiles())
	lines := []string{
		"pushed filter: " + pushed,
		"residual: " + residual,
		fmt.Sprintf("manifests: %d scanned, %d skipped of %d", p.ManifestsScanned, p.ManifestsSkipped, p.ManifestsTotal),
		fmt.Sprintf("data files: %d planned, %d skipped of %d", p.FilesPlanned, p.FilesTotal-p.FilesPlanned, p.FilesTotal),
		fmt.Sprintf("bytes planned: %d", p.BytesPlanned),
	}
	if t.scan.VectorNote != "" {
		lines = append(lines, "vectorized: "+t.scan.VectorNote)
	}
	if note := t.scan.DescribeFilter(); note != "" {
		lines = append(lines, note)
	}
	if analyzed {
		r, err := planned.Reads()
		if err != nil {
			return "", err
		}
		lines = append(lines,
			fmt.Sprintf("data files read: %d", r.Files),
			fmt.Sprintf("row groups: %d read, %d skipped of %d", r.RowGroupsRead, r.RowGroupsTotal-r.RowGroupsRead, r.RowGroupsTotal),
			fmt.Sprintf("bytes read: %d", r.Bytes),
		)
		if line := vecexec.NativeLine(planned.NativeStats()); line != "" {
			lines = append(lines, line)
		}
	}
	_ = pr.WriteChildren(lines...)
	return pr.String(), nil
}

// totalDataFiles is the number of data files the scanned snapshot holds.
func (t *Table) totalDataFiles() int64 {
	var n int64
	if snap := t.Snapshot(); snap != nil && snap.Summary != nil {
		if v, err := strconv.ParseInt(snap.Summary.Properties["total-data-files"], 10, 64); err == nil {
			n = v
		}
	}
	return n + int64(len(t.staged))
}

// describeJoins prints, for each join of n in plan order, how it runs:
// the plan tree names go-mysql-server's operators, not whether the inner
// side is hashed once, read again for every outer row, or whether the join
// runs on the vector path instead. "" when n joins nothing.
func describeJoins(ctx *sql.Context, n sql.Node) string {
	var lines []string
	vecexec.WalkPlan(ctx, n, func(n sql.Node) {
		if j, ok := n.(*plan.JoinNode); ok {
			lines = append(lines, fmt.Sprintf("%s(%s; %s): %s", j.Op, joinSide(j.Left()), joinSide(j.Right()), joinPath(ctx, j)))
		}
		lines = append(lines, groupedSubqueryJoins(ctx, n)...) // groupedsubquery.go
	})
	if len(lines) == 0 {
		return ""
	}
	pr := sql.NewTreePrinter()
	_ = pr.WriteNode("Joins")
	_ = pr.WriteChildren(lines...)
	return pr.String()
}

// joinSide names the tables a join side reads, by their aliases.
func joinSide(n sql.Node) string {
	var names []string
	var walk func(n sql.Node)
	walk = func(n sql.Node) {
		switch n := n.(type) {
		case *plan.TableAlias:
			names = append(names, n.Name())
		case *plan.SubqueryAlias:
			names = append(names, n.Name())
		case *plan.ResolvedTable:
			names = append(names, n.Name())
		default:
			for _, c := range n.Children() {
				walk(c)
			}
		}
	}
	walk(n)
	if len(names) == 0 {
		return "no table"
	}
	return strings.Join(names, ", ")
}

// joinPath says how the exec builders run j (vecexec/vecfilter.go, planrules/hashlookup.go).
func joinPath(ctx *sql.Context, j *plan.JoinNode) string {
	if vecexec.VectorizeOn(ctx) {
		if vj, _ := vecexec.NewVectorJoin(ctx, j, nil); vj != nil {
			if vj.Outer {
				return "vectorized hash join: both sides are read once as Arrow batches; a left row that joins nothing is kept, padded with NULLs"
			}
			return "vectorized hash join: both sides are read once as Arrow batches"
		}
	}
	_, hashed := j.Right().(*plan.HashLookup)
	if hl, ok := j.Right().(*plan.HashLookup); ok {
		if src, ok := hl.Child.(*planrules.OrSource); ok { // planrules/orjoin.go
			return "hash join per branch of the OR: the right side is " + src.Note()
		}
	}
	switch {
	case j.Op.IsHash():
		return "hash join: the right side is read once per statement into a hash table the left side's rows probe"
	case hashed: // planrules/semijoins.go
		return "hash join: the right side is read once per statement into a hash table the left side's rows probe; the whole condition is checked on the rows of the probed key"
	case j.Op.IsMerge():
		return "merge join: both sides are read once, sorted on the join key"
	case j.Op.IsLookup():
		return "lookup join: the right side is looked up for every left row"
	case j.Op.IsLateral():
		return "lateral join: the right side runs again for every left row"
	}
	return "nested loop: the right side is read again for every left row (from memory when it holds at most " +
		strconv.Itoa(rowCacheMaxRows) + " rows)"
}
