package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/planrules"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/engine/internal/wire"
	"github.com/icesql/icesql/planner"
)

// parser is the planner's dialect parser plus the statements the engine
// answers itself, which need the catalog and so cannot live in planner.
type parser struct {
	*planner.Parser
	e *Engine
}

func (p parser) ParseSimple(query string) (ast.Statement, error) {
	stmt, err := p.Parser.ParseSimple(query)
	return p.intercept(stmt), err
}

func (p parser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	stmt, parsed, rest, err := p.Parser.Parse(ctx, query, multi)
	p.preparedDecimals(ctx, stmt) // decimalparams.go
	return p.intercept(stmt), parsed, rest, err
}

func (p parser) ParseWithOptions(ctx context.Context, query string, delim rune, multi bool, opts ast.ParserOptions) (ast.Statement, string, string, error) {
	stmt, parsed, rest, err := p.Parser.ParseWithOptions(ctx, query, delim, multi, opts)
	p.preparedDecimals(ctx, stmt)
	return p.intercept(stmt), parsed, rest, err
}

func (p parser) ParseOneWithOptions(ctx context.Context, query string, opts ast.ParserOptions) (ast.Statement, int, error) {
	stmt, next, err := p.Parser.ParseOneWithOptions(ctx, query, opts)
	p.preparedDecimals(ctx, stmt)
	return p.intercept(stmt), next, err
}

// intercept replaces SHOW CREATE TABLE of an Iceberg table with icesql's
// own, which shows the Iceberg DDL instead of MySQL's ENGINE=InnoDB, and
// the ALTER TABLE statements icesql runs itself (see alterStatement).
func (p parser) intercept(stmt ast.Statement) ast.Statement {
	explainAsTree(stmt)
	planrules.BalanceSetOps(stmt)                        // planrules/planlimits.go
	sqlfunc.RegexpOperators(stmt)                        // sqlfunc/regexguard.go
	planrules.GroupedWindows(stmt)                       // planrules/groupedwindows.go
	planrules.HavingAliases(stmt)                        // planrules/havingalias.go
	sqlfunc.DecimalLiterals(stmt)                        // sqlfunc/decimalcompare.go
	qualifyCreateView(stmt)                              // views.go
	if err := planrules.CheckNesting(stmt); err != nil { // planrules/planlimits.go
		return refused(err)
	}
	p.e.accountStatement(stmt) // auth.go
	if err := ddl.RecordForeignKeys(stmt); err != nil {
		return refused(err)
	}
	if replace, ok := p.interceptReplace(stmt); ok {
		return replace
	}
	if upsert, ok := p.interceptUpsert(stmt); ok { // upsert.go
		return upsert
	}
	if prepared, ok := rowLevel(stmt); ok {
		return prepared
	}
	if drop, ok := p.interceptDropTemporary(stmt); ok { // temptables.go
		return drop
	}
	if rename, ok := p.interceptRename(stmt); ok { // rename.go
		return rename
	}
	if alter, ok := p.alterStatement(stmt); ok {
		return alter
	}
	if call, ok := p.interceptCall(stmt); ok {
		return call
	}
	if merge, ok := p.interceptMerge(stmt); ok {
		return merge
	}
	if diag, ok := wire.InterceptDiagnostics(stmt); ok { // wire/diagnostics.go
		return diag
	}
	if do, ok := p.interceptDo(stmt); ok { // call.go
		return do
	}
	if ns, ok := p.interceptCreateNamespace(stmt); ok { // createnamespace.go
		return ns
	}
	if sum, ok := p.interceptChecksum(stmt); ok { // checksum.go
		return sum
	}
	show, ok := stmt.(*ast.Show)
	// The parser keeps SHOW CREATE VIEW's words as written.
	isView := ok && strings.EqualFold(show.Type, ast.CreateViewStr)
	if !ok || (show.Type != ast.CreateTableStr && !isView) || !show.HasTable() || (show.ShowTablesOpt != nil && show.ShowTablesOpt.AsOf != nil) {
		return stmt
	}
	switch strings.ToLower(show.Table.DbQualifier.String()) {
	case "information_schema", "mysql":
		return stmt
	}
	return ast.InjectedStatement{
		Statement: &showCreateTable{e: p.e, db: show.Table.DbQualifier.String(), table: show.Table.Name.String(), view: isView},
		Auth:      show.Auth,
	}
}

// showCreateTable is SHOW CREATE TABLE for an Iceberg table, and SHOW
// CREATE VIEW (view set) for a view; SHOW CREATE TABLE of a view shows the
// view, as in MySQL.
type showCreateTable struct {
	e         *Engine
	db, table string
	view      bool
}

var (
	_ sql.ExecSourceRel = (*showCreateTable)(nil)
	_ ast.Injectable    = (*showCreateTable)(nil)
)

func (s *showCreateTable) WithResolvedChildren(context.Context, []any) (any, error) { return s, nil }
func (s *showCreateTable) Resolved() bool                                           { return true }
func (s *showCreateTable) IsReadOnly() bool                                         { return true }
func (s *showCreateTable) String() string                                           { return "SHOW CREATE TABLE " + s.table }
func (s *showCreateTable) Children() []sql.Node                                     { return nil }
func (s *showCreateTable) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(s, len(children), 0)
	}
	return s, nil
}

func (s *showCreateTable) Schema(*sql.Context) sql.Schema {
	if s.view {
		return sql.Schema{
			{Name: "View", Type: types.LongText},
			{Name: "Create View", Type: types.LongText},
			{Name: "character_set_client", Type: types.LongText},
			{Name: "collation_connection", Type: types.LongText},
		}
	}
	return sql.Schema{
		{Name: "Table", Type: types.LongText},
		{Name: "Create Table", Type: types.LongText},
	}
}

func (s *showCreateTable) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	dbName := s.db
	if dbName == "" {
		dbName = ctx.GetCurrentDatabase()
	}
	if dbName == "" {
		return nil, sql.ErrNoDatabaseSelected.New()
	}
	db, err := s.e.provider.Database(ctx, dbName)
	if err != nil {
		return nil, err
	}
	if def, ok, err := db.(sql.ViewDatabase).GetViewDefinition(ctx, s.table); err != nil || ok {
		if err != nil {
			return nil, err
		}
		if s.view {
			return sql.RowsToRowIter(sql.Row{def.Name, def.CreateViewStatement, "utf8mb4", sql.Collation_Default.String()}), nil
		}
		return sql.RowsToRowIter(sql.Row{def.Name, def.CreateViewStatement}), nil
	}
	t, ok, err := db.GetTableInsensitive(ctx, s.table)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sql.ErrTableNotFound.New(s.table)
	}
	if s.view {
		return nil, mysqlerr.New(mysqlerr.ErWrongObject, "'%s.%s' is not VIEW", dbName, s.table)
	}
	if tt, ok := t.(*tempTable); ok {
		return sql.RowsToRowIter(sql.Row{tt.Name(), showCreateTemporary(tt)}), nil
	}
	it, ok := t.(*Table)
	if !ok { // a metadata table
		return nil, mysqlerr.NotSupported("SHOW CREATE TABLE %s: metadata tables are read-only views of table metadata and have no DDL; DESCRIBE shows their columns", s.table)
	}
	return sql.RowsToRowIter(sql.Row{it.name, icebergDDL(it)}), nil
}

// icebergDDL is the CREATE TABLE statement that makes the same table in
// icesql: the columns as DESCRIBE shows them, the primary key, the
// recorded indexes and foreign keys as MySQL prints keys and constraints
// (which CREATE TABLE records again), then on one line, where MySQL
// prints ENGINE=, USING iceberg, the layout, the table comment and the
// table properties (without the ones icesql keeps for itself, which the
// column types and keys already say). Reflectors that read MySQL's form
// line by line (SQLAlchemy) take that line as table options.
func icebergDDL(t *Table) string {
	lines := columnLines(t.schema)
	if pk := t.primaryIndex(); pk != nil {
		lines = append(lines, "  PRIMARY KEY "+keyColumns(pk.ix.Columns))
	}
	props := maps.Clone(t.tbl.Properties())
	recorded := recordedIndexes(props)
	for _, name := range slices.Sorted(maps.Keys(recorded)) {
		ix := recorded[name]
		kind := "KEY"
		if ix.Unique {
			kind = "UNIQUE KEY"
		}
		lines = append(lines, fmt.Sprintf("  %s %s %s", kind, sqlval.QuoteIdent(ix.Name), keyColumns(ix.Columns)))
		delete(props, indexProperty(name))
	}
	for _, k := range slices.Sorted(maps.Keys(props)) {
		if name, ok := strings.CutPrefix(k, ddl.ForeignKeyProperty); ok {
			lines = append(lines, fmt.Sprintf("  CONSTRAINT %s %s", sqlval.QuoteIdent(name), props[k]))
			delete(props, k)
		}
	}
	options := []string{"USING iceberg"}
	if p := ddl.PartitionClause(t.tbl); p != "" {
		options = append(options, p)
	}
	if o := ddl.SortClause(t.tbl); o != "" {
		options = append(options, o)
	}
	if c, ok := props["comment"]; ok {
		options = append(options, "COMMENT "+sqlval.QuoteString(c))
		delete(props, "comment")
	}
	for k := range props {
		if strings.HasPrefix(k, "icesql.column.") {
			delete(props, k)
		}
	}
	props["format-version"] = fmt.Sprint(t.tbl.Metadata().Version())
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(props)) {
		kv = append(kv, sqlval.QuoteString(k)+" = "+sqlval.QuoteString(props[k]))
	}
	options = append(options, "TBLPROPERTIES ("+strings.Join(kv, ", ")+")")
	return fmt.Sprintf("CREATE TABLE %s (\n%s\n) %s", sqlval.QuoteIdent(t.name), strings.Join(lines, ",\n"), strings.Join(options, " "))
}

// keyColumns is a key's column list as MySQL prints it: (`a`,`b`).
func keyColumns(cols []string) string {
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = sqlval.QuoteIdent(c)
	}
	return "(" + strings.Join(quoted, ",") + ")"
}

// columnLines are the column lines of a CREATE TABLE, as DESCRIBE shows
// the columns.
func columnLines(schema sql.Schema) []string {
	lines := make([]string, len(schema))
	for i, col := range schema {
		line := fmt.Sprintf("  %s %s", sqlval.QuoteIdent(col.Name), col.Type.String())
		if !col.Nullable {
			line += " NOT NULL"
		}
		if col.Comment != "" {
			line += " COMMENT " + sqlval.QuoteString(col.Comment)
		}
		lines[i] = line
	}
	return lines
}
