package engine

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// A table's primary key is its Iceberg identifier fields, which nothing
// enforces: another engine, or REPLACE on a key held twice, can leave
// several rows with one key. Schema browsers (DESCRIBE, SHOW INDEX,
// information_schema, SQLAlchemy, Connector/J's DatabaseMetaData) should
// still see the key the table was created with.
//
// go-mysql-server's planner must not see it: from a primary key it plans
// lookup joins through an index icesql cannot run, and derives that the
// key's rows are unique, so DISTINCT, GROUP BY and semi joins over a key
// held three times would give wrong rows. So only a statement that shows
// metadata and reads no table's rows sees the key (keysShown): SHOW and
// DESCRIBE, and a SELECT that reads only information_schema and mysql
// tables. Every other statement sees a table without a key, as before.

// keysShown reports whether the statement ctx runs shows tables' primary
// keys. It is decided once per statement.
func keysShown(ctx *sql.Context) bool {
	if ctx == nil {
		return false
	}
	s, ok := ctx.Session.(*Session)
	if !ok {
		return false
	}
	return s.keys.shownTo(ctx)
}

// keysDecision is the session's keysShown answer for its last statement.
// It has its own lock: tables answer Schema while the session's is held.
type keysDecision struct {
	mu    sync.Mutex
	pid   uint64
	query string
	shown bool
}

func (k *keysDecision) shownTo(ctx *sql.Context) bool {
	query, pid := ctx.Query(), ctx.Pid()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.pid != pid || k.query != query {
		k.pid, k.query = pid, query
		k.shown = showsMetadataOnly(query, ctx.GetCurrentDatabase())
	}
	return k.shown
}

// showsMetadataOnly reports whether query, run with db as the current
// database, is SHOW, DESCRIBE, or a SELECT that reads only tables of
// information_schema and mysql.
func showsMetadataOnly(query, db string) bool {
	q := strings.ToLower(ast.StripLeadingComments(query))
	first, _, _ := strings.Cut(strings.TrimSpace(q), " ")
	system := func(name string) bool { return name == "information_schema" || name == "mysql" }
	switch first {
	case "show", "describe", "desc", "explain":
	default:
		// Most statements never name a system schema: no need to parse them.
		if !strings.Contains(q, "information_schema") && !strings.Contains(q, "mysql") && !system(strings.ToLower(db)) {
			return false
		}
	}
	stmt, err := ast.Parse(query)
	if err != nil {
		return false
	}
	switch stmt := stmt.(type) {
	case *ast.Show:
		// SHOW ... WHERE may hold a subquery, which reads rows.
		return !hasNode(stmt, func(n ast.SQLNode) bool { _, ok := n.(*ast.Subquery); return ok })
	case ast.SelectStatement:
		tables := 0
		userTable := hasNode(stmt, func(n ast.SQLNode) bool {
			at, ok := n.(*ast.AliasedTableExpr)
			if !ok {
				return false
			}
			name, ok := at.Expr.(ast.TableName)
			if !ok {
				return false // a subquery: its tables are walked too
			}
			tables++
			schema := name.DbQualifier.String()
			if schema == "" {
				schema = db
			}
			return !system(strings.ToLower(schema))
		})
		return tables > 0 && !userTable
	}
	return false
}

// hasNode reports whether some node of the tree under root satisfies f.
func hasNode(root ast.SQLNode, f func(ast.SQLNode) bool) bool {
	found := false
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if found || f(n) {
			found = true
			return false, nil
		}
		return true, nil
	}, root)
	return found
}

// keyOrdinals are the positions in t.schema of t's primary key columns,
// in key order.
func (t *Table) keyOrdinals() []int {
	sc := t.tbl.Schema()
	if len(sc.IdentifierFieldIDs) == 0 {
		return nil
	}
	fields := sc.Fields()
	var out []int
	for _, id := range sc.IdentifierFieldIDs {
		if i := slices.IndexFunc(fields, func(f iceberg.NestedField) bool { return f.ID == id }); i >= 0 && i < len(t.schema) {
			out = append(out, i)
		}
	}
	return out
}

// withKey is schema with t's primary key columns marked, for a statement
// that shows keys.
func (t *Table) withKey(ctx *sql.Context, schema sql.Schema) sql.Schema {
	keys := t.keyOrdinals()
	if len(keys) == 0 || !keysShown(ctx) {
		return schema
	}
	out := make(sql.Schema, len(schema))
	copy(out, schema)
	for i, col := range out {
		for _, k := range keys {
			if col == t.schema[k] {
				c := *col
				c.PrimaryKey = true
				out[i] = &c
			}
		}
	}
	return out
}

// primaryIndex is the primary key as SHOW INDEX and information_schema see it.
type primaryIndex struct {
	declaredIndex
}

func (p *primaryIndex) IsUnique() bool    { return true }
func (p *primaryIndex) IndexType() string { return "BTREE" }
func (p *primaryIndex) Comment() string   { return "Iceberg identifier fields; uniqueness not enforced" }

// primaryIndex is t's primary key as an index, or nil when it has none.
func (t *Table) primaryIndex() *primaryIndex {
	keys := t.keyOrdinals()
	if len(keys) == 0 {
		return nil
	}
	ix := recordedIndex{Name: "PRIMARY", Unique: true}
	for _, k := range keys {
		ix.Columns = append(ix.Columns, t.schema[k].Name)
	}
	return &primaryIndex{declaredIndex{t: t, ix: ix}}
}

// information_schema.TABLE_CONSTRAINTS says ENFORCED = YES for every
// PRIMARY KEY and UNIQUE constraint (go-mysql-server writes the word). An
// Iceberg table's keys are recorded, not enforced (keys.go, indexes.go):
// Iceberg has no constraints, and other engines write the same tables. So
// icesql answers NO for them, YES for a temporary table's PRIMARY KEY,
// which it enforces (temptables.go).

// tableConstraintsEnforcement makes the engine's TABLE_CONSTRAINTS say
// which constraints icesql enforces.
func tableConstraintsEnforcement(ctx *sql.Context, infoSchema sql.Database) error {
	t, ok, err := infoSchema.GetTableInsensitive(ctx, information_schema.TableConstraintsTableName)
	if err != nil || !ok {
		return fmt.Errorf("information_schema.%s: %w", information_schema.TableConstraintsTableName, err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return fmt.Errorf("information_schema.%s is a %T", information_schema.TableConstraintsTableName, t)
	}
	read := ist.Reader
	ist.Reader = func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
		iter, err := read(ctx, c)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, iter)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			// constraint_catalog, constraint_schema, constraint_name,
			// table_schema, table_name, constraint_type, enforced
			if len(r) != 7 || !unenforced(ctx, c, r[3], r[4]) {
				continue
			}
			r[6] = "NO"
		}
		return sql.RowsToRowIter(rows...), nil
	}
	return nil
}

// unenforced says the constraints of table schema.name are recorded only:
// it is an Iceberg table.
func unenforced(ctx *sql.Context, c sql.Catalog, schema, name any) bool {
	s, ok1 := schema.(string)
	n, ok2 := name.(string)
	if !ok1 || !ok2 {
		return false
	}
	db, err := c.Database(ctx, s)
	if err != nil {
		return false
	}
	t, _, err := c.DatabaseTable(ctx, db, n)
	if err != nil {
		return false
	}
	_, iceberg := t.(*Table)
	return iceberg
}
