package engine

import (
	"context"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// interceptCreateNamespace runs the planner's CREATE NAMESPACE with a
// COMMENT, LOCATION or properties as a createNamespaceNode.
func (p parser) interceptCreateNamespace(stmt ast.Statement) (ast.Statement, bool) {
	inj, ok := stmt.(ast.InjectedStatement)
	if !ok {
		return stmt, false
	}
	c, ok := inj.Statement.(*planner.CreateNamespace)
	if !ok {
		return stmt, false
	}
	inj.Statement = &createNamespaceNode{e: p.e, c: c}
	return inj, true
}

// createNamespaceNode creates a namespace with properties: the comment and
// the location are the properties "comment" and "location", as Spark keeps
// them, and other catalogs (REST, Glue) are given them so. The embedded
// catalog places a namespace in the warehouse itself and refuses a
// location (1235); the Hadoop catalog keeps no properties and refuses
// them all (1235).
type createNamespaceNode struct {
	e *Engine
	c *planner.CreateNamespace
}

var (
	_ sql.ExecSourceRel = (*createNamespaceNode)(nil)
	_ ast.Injectable    = (*createNamespaceNode)(nil)
)

func (n *createNamespaceNode) WithResolvedChildren(context.Context, []any) (any, error) {
	return n, nil
}
func (n *createNamespaceNode) Resolved() bool                 { return true }
func (n *createNamespaceNode) IsReadOnly() bool               { return false }
func (n *createNamespaceNode) String() string                 { return n.c.String() }
func (n *createNamespaceNode) Children() []sql.Node           { return nil }
func (n *createNamespaceNode) Schema(*sql.Context) sql.Schema { return types.OkResultSchema }
func (n *createNamespaceNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *createNamespaceNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	if _, ok := n.c.Properties["location"]; ok {
		if _, embedded := n.e.catalog.(*storage.Warehouse); embedded {
			return nil, mysqlerr.NotSupported("CREATE NAMESPACE %s: the embedded catalog places namespaces in the warehouse itself; LOCATION is not supported", n.c.Name)
		}
	}
	if len(n.c.Properties) > 0 && n.e.catalog.CatalogType() == catalog.Hadoop {
		return nil, mysqlerr.NotSupported("CREATE NAMESPACE %s: the hadoop catalog keeps no namespace properties (a namespace is a folder of the warehouse); COMMENT, LOCATION and WITH PROPERTIES are not supported", n.c.Name)
	}
	p := &provider{e: n.e}
	err := p.createDatabase(ctx, n.c.Name, iceberg.Properties(n.c.Properties))
	if err != nil && n.c.IfNotExists && sql.ErrDatabaseExists.Is(err) {
		return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
	}
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(1))), nil
}
