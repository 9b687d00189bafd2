package engine

import (
	"context"
	"fmt"
	"hash/crc32"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// interceptChecksum runs the planner's CHECKSUM TABLE as a checksumNode.
func (p parser) interceptChecksum(stmt ast.Statement) (ast.Statement, bool) {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return stmt, false
	}
	ct, ok := inj.Statement.(*planner.ChecksumTable)
	if !ok {
		return stmt, false
	}
	inj.Statement = &checksumNode{e: p.e, tables: ct.Tables}
	return inj, true
}

// checksumNode is CHECKSUM TABLE: for each table, its qualified name and
// a checksum of its rows, the 32-bit sum of each row's CRC-32, so that the
// same rows give the same checksum in any order and any file layout. A
// missing table gives NULL and a warning, as in MySQL. The value is
// icesql's own: MySQL's depends on its row format.
type checksumNode struct {
	e      *Engine
	tables []ast.TableName
}

var (
	_ sql.ExecSourceRel = (*checksumNode)(nil)
	_ ast.Injectable    = (*checksumNode)(nil)
)

func (n *checksumNode) WithResolvedChildren(context.Context, []any) (any, error) { return n, nil }
func (n *checksumNode) Resolved() bool                                           { return true }
func (n *checksumNode) IsReadOnly() bool                                         { return true }
func (n *checksumNode) String() string                                           { return "CHECKSUM TABLE" }
func (n *checksumNode) Children() []sql.Node                                     { return nil }
func (n *checksumNode) Schema(*sql.Context) sql.Schema {
	return sql.Schema{
		{Name: "Table", Type: types.LongText},
		{Name: "Checksum", Type: types.Int64, Nullable: true},
	}
}
func (n *checksumNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *checksumNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	var out []sql.Row
	for _, t := range n.tables {
		db := t.DbQualifier.String()
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if db == "" {
			return nil, sql.ErrNoDatabaseSelected.New()
		}
		name := db + "." + t.Name.String()
		rows, err := n.e.runQuery(ctx, "SELECT * FROM "+sqlval.QuoteIdent(db)+"."+sqlval.QuoteIdent(t.Name.String())) // merge.go
		if sql.ErrTableNotFound.Is(err) {
			ctx.Warn(mysql.ERNoSuchTable, "Table '%s' doesn't exist", name)
			out = append(out, sql.Row{name, nil})
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, sql.Row{name, rowsChecksum(rows)})
	}
	return sql.RowsToRowIter(out...), nil
}

// rowsChecksum is the 32-bit sum of the rows' CRC-32s.
func rowsChecksum(rows []sql.Row) int64 {
	var sum uint32
	var buf []byte
	for _, r := range rows {
		buf = buf[:0]
		for _, v := range r {
			if v == nil {
				buf = append(buf, 0xff) // NULL differs from every value's text
				continue
			}
			buf = fmt.Appendf(buf, "%v", v)
			buf = append(buf, 0)
		}
		sum += crc32.ChecksumIEEE(buf)
	}
	return int64(sum)
}
