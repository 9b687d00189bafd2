package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/hash"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// Temporary tables (CREATE TEMPORARY TABLE) are kept in the memory of the
// session that made them, as BI tools (Tableau, Metabase) expect: no other
// session sees them, and they end with the session. As in MySQL, one hides
// a table of the same name for its session, SHOW TABLES and
// information_schema do not list it, its PRIMARY KEY is enforced, a failed
// statement changes nothing, and ROLLBACK (to a savepoint) restores its
// rows. It is no Iceberg table, so statements that need one (ALTER TABLE,
// MERGE, time travel, branches, metadata tables) refuse it with 1235.

// tempTable is one temporary table. rows is replaced whole by each
// statement that changes it and never changed in place, so a reader, a
// savepoint or ROLLBACK may keep the slice it got.
type tempTable struct {
	db        string
	schema    sql.PrimaryKeySchema
	collation sql.CollationID

	mu   sync.Mutex
	name string
	rows []sql.Row
}

var (
	_ sql.Table             = (*tempTable)(nil)
	_ sql.TemporaryTable    = (*tempTable)(nil)
	_ sql.PrimaryKeyTable   = (*tempTable)(nil)
	_ sql.InsertableTable   = (*tempTable)(nil)
	_ sql.UpdatableTable    = (*tempTable)(nil)
	_ sql.DeletableTable    = (*tempTable)(nil)
	_ sql.ReplaceableTable  = (*tempTable)(nil)
	_ sql.TruncateableTable = (*tempTable)(nil)
)

func tempKey(db, name string) string { return strings.ToLower(db) + "\x00" + strings.ToLower(name) }

func (t *tempTable) Name() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.name
}

func (t *tempTable) String() string                                     { return t.Name() }
func (t *tempTable) Schema(*sql.Context) sql.Schema                     { return t.schema.Schema }
func (t *tempTable) PrimaryKeySchema(*sql.Context) sql.PrimaryKeySchema { return t.schema }
func (t *tempTable) Collation() sql.CollationID                         { return t.collation }
func (t *tempTable) IsTemporary() bool                                  { return true }

func (t *tempTable) current() []sql.Row {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rows
}

// Partitions implements sql.Table: one partition holding every row.
func (t *tempTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(tempPartition{}), nil
}

// PartitionRows implements sql.Table. The rows are copies: the stored ones
// are shared with savepoints.
func (t *tempTable) PartitionRows(*sql.Context, sql.Partition) (sql.RowIter, error) {
	rows := t.current()
	out := make([]sql.Row, len(rows))
	for i, r := range rows {
		out[i] = r.Copy()
	}
	return sql.RowsToRowIter(out...), nil
}

type tempPartition struct{}

func (tempPartition) Key() []byte { return []byte("temporary") }

func (t *tempTable) Inserter(ctx *sql.Context) sql.RowInserter { return t.editor(ctx) }
func (t *tempTable) Updater(ctx *sql.Context) sql.RowUpdater   { return t.editor(ctx) }
func (t *tempTable) Deleter(ctx *sql.Context) sql.RowDeleter   { return t.editor(ctx) }
func (t *tempTable) Replacer(ctx *sql.Context) sql.RowReplacer { return t.editor(ctx) }
func (t *tempTable) editor(ctx *sql.Context) *tempEditor       { return &tempEditor{t: t, s: sessionOf(ctx)} }

// Truncate implements sql.TruncateableTable.
func (t *tempTable) Truncate(ctx *sql.Context) (int, error) {
	n := len(t.current())
	sessionOf(ctx).setTempRows(t, nil)
	return n, nil
}

// keyColumns are the ordinals that identify a row: the primary key's, or
// every column of a table without one.
func (t *tempTable) keyColumns() []int {
	if len(t.schema.PkOrdinals) > 0 {
		return t.schema.PkOrdinals
	}
	all := make([]int, len(t.schema.Schema))
	for i := range all {
		all[i] = i
	}
	return all
}

// tempEditor applies one statement's changes to a copy of the rows, which
// replaces the table's rows when the statement completes and is dropped
// when it fails, so a failed statement changes nothing. index finds rows
// by their key columns' hash.
type tempEditor struct {
	t     *tempTable
	s     *Session
	rows  []sql.Row // nil entries are deleted rows
	index map[uint64][]int
	cols  []int
	sch   sql.Schema // the key columns' schema
}

var _ sql.TableEditor = (*tempEditor)(nil)

func (e *tempEditor) begin(ctx *sql.Context) error {
	if e.index != nil {
		return nil
	}
	e.cols = e.t.keyColumns()
	e.sch = make(sql.Schema, len(e.cols))
	for i, c := range e.cols {
		e.sch[i] = e.t.schema.Schema[c]
	}
	e.rows = append([]sql.Row(nil), e.t.current()...)
	e.index = make(map[uint64][]int, len(e.rows))
	for i, r := range e.rows {
		h, err := e.hash(ctx, r)
		if err != nil {
			return err
		}
		e.index[h] = append(e.index[h], i)
	}
	return nil
}

func (e *tempEditor) keyOf(r sql.Row) sql.Row {
	k := make(sql.Row, len(e.cols))
	for i, c := range e.cols {
		k[i] = r[c]
	}
	return k
}

func (e *tempEditor) hash(ctx *sql.Context, r sql.Row) (uint64, error) {
	return hash.HashOf(ctx, e.sch, e.keyOf(r))
}

// find is the position of a row whose key columns equal r's (as SQL
// compares them: a case-insensitive collation makes 'a' equal 'A'), or -1.
func (e *tempEditor) find(ctx *sql.Context, h uint64, r sql.Row) (int, error) {
	want := e.keyOf(r)
	for _, i := range e.index[h] {
		if e.rows[i] == nil {
			continue
		}
		same := true
		for j, c := range e.cols {
			a, b := e.rows[i][c], want[j]
			if a == nil || b == nil {
				if len(e.t.schema.PkOrdinals) > 0 || a != nil || b != nil {
					same = false
					break
				}
				continue // keyless: NULL matches NULL in the row being deleted
			}
			cmp, err := e.sch[j].Type.Compare(ctx, a, b)
			if err != nil {
				return -1, err
			}
			if cmp != 0 {
				same = false
				break
			}
		}
		if same {
			return i, nil
		}
	}
	return -1, nil
}

func (e *tempEditor) StatementBegin(ctx *sql.Context) {
	// Errors show at the first change: StatementBegin cannot return one.
	_ = e.begin(ctx)
}

func (e *tempEditor) DiscardChanges(*sql.Context, error) error {
	e.rows, e.index = nil, nil
	return nil
}

func (e *tempEditor) StatementComplete(ctx *sql.Context) error {
	if e.index == nil {
		return nil
	}
	rows := make([]sql.Row, 0, len(e.rows))
	for _, r := range e.rows {
		if r != nil {
			rows = append(rows, r)
		}
	}
	e.s.setTempRows(e.t, rows)
	e.rows, e.index = nil, nil
	return nil
}

func (e *tempEditor) Close(*sql.Context) error { return nil }

// add puts row in, refusing a second row with the same primary key
// (1062), as a unique index does in MySQL.
func (e *tempEditor) add(ctx *sql.Context, row sql.Row) error {
	h, err := e.hash(ctx, row)
	if err != nil {
		return err
	}
	if len(e.t.schema.PkOrdinals) > 0 {
		if i, err := e.find(ctx, h, row); err != nil {
			return err
		} else if i >= 0 {
			return sql.NewUniqueKeyErr(fmt.Sprint(e.keyOf(row)), true, e.rows[i])
		}
	}
	e.rows = append(e.rows, row.Copy())
	e.index[h] = append(e.index[h], len(e.rows)-1)
	return nil
}

// remove takes out one row equal to row on the key columns.
func (e *tempEditor) remove(ctx *sql.Context, row sql.Row) error {
	h, err := e.hash(ctx, row)
	if err != nil {
		return err
	}
	i, err := e.find(ctx, h, row)
	if err != nil {
		return err
	}
	if i < 0 {
		return fmt.Errorf("temporary table %s: the row to change is gone", e.t.Name())
	}
	e.rows[i] = nil
	return nil
}

func (e *tempEditor) Insert(ctx *sql.Context, row sql.Row) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	return e.add(ctx, row)
}

func (e *tempEditor) Delete(ctx *sql.Context, row sql.Row) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	return e.remove(ctx, row)
}

func (e *tempEditor) Update(ctx *sql.Context, old, new sql.Row) error {
	if err := e.begin(ctx); err != nil {
		return err
	}
	if err := e.remove(ctx, old); err != nil {
		return err
	}
	return e.add(ctx, new)
}

// setTempRows replaces t's rows, first keeping the rows the open
// transaction started from, for ROLLBACK.
func (s *Session) setTempRows(t *tempTable, rows []sql.Row) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := s.tempBefore[t]; !ok {
		if s.tempBefore == nil {
			s.tempBefore = map[*tempTable][]sql.Row{}
		}
		s.tempBefore[t] = t.rows
	}
	t.rows = rows
}

// tempTableNamed is the session's temporary table db.name.
func (s *Session) tempTableNamed(db, name string) (*tempTable, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.temps[tempKey(db, name)]
	return t, ok
}

// tempRowsLocked is the rows of every temporary table, for a savepoint.
func (s *Session) tempRowsLocked() map[*tempTable][]sql.Row {
	rows := make(map[*tempTable][]sql.Row, len(s.temps))
	for _, t := range s.temps {
		rows[t] = t.current()
	}
	return rows
}

// restoreTempsLocked puts back the rows of the temporary tables the
// transaction changed: those of at (a savepoint's), else those it started
// from.
func (s *Session) restoreTempsLocked(at map[*tempTable][]sql.Row) {
	for t, before := range s.tempBefore {
		rows, ok := at[t]
		if !ok {
			rows = before
		}
		t.mu.Lock()
		t.rows = rows
		t.mu.Unlock()
	}
}

// CreateTemporaryTable implements sql.TemporaryTableCreator.
func (d *Database) CreateTemporaryTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, collation sql.CollationID) error {
	for _, col := range schema.Schema {
		if col.AutoIncrement {
			return mysqlerr.NotSupported("temporary table %s: AUTO_INCREMENT is not supported; give the column its values", name)
		}
	}
	s := sessionOf(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tempKey(d.name, name)
	if _, ok := s.temps[k]; ok {
		return sql.ErrTableAlreadyExists.New(name)
	}
	if s.temps == nil {
		s.temps = map[string]*tempTable{}
	}
	sch := make(sql.Schema, len(schema.Schema))
	for i, c := range schema.Schema {
		col := *c
		col.Source, col.DatabaseSource = name, d.name
		sch[i] = &col
	}
	s.temps[k] = &tempTable{db: d.name, name: name, schema: sql.NewPrimaryKeySchema(sch, schema.PkOrdinals...), collation: collation}
	return nil
}

// dropTempTable drops the session's temporary table db.name, if any.
func (s *Session) dropTempTable(db, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := tempKey(db, name)
	t, ok := s.temps[k]
	if ok {
		delete(s.temps, k)
		delete(s.tempBefore, t)
	}
	return ok
}

// renameTempTable renames the session's temporary table db.from, if any.
func (s *Session) renameTempTable(db, from, to string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.temps[tempKey(db, from)]
	if !ok {
		return false, nil
	}
	if _, taken := s.temps[tempKey(db, to)]; taken && !strings.EqualFold(from, to) {
		return true, sql.ErrTableAlreadyExists.New(to)
	}
	delete(s.temps, tempKey(db, from))
	s.temps[tempKey(db, to)] = t
	t.mu.Lock()
	t.name = to
	for _, c := range t.schema.Schema {
		c.Source = to
	}
	t.mu.Unlock()
	return true, nil
}

// errTemporaryTable refuses a statement that needs an Iceberg table.
func errTemporaryTable(db, name string) error {
	return mysqlerr.NotSupported("%s.%s is a temporary table, kept in this session's memory, not in Iceberg: ALTER TABLE, MERGE INTO, INSERT OVERWRITE, REPLACE, time travel, branches, tags and metadata tables work on Iceberg tables only", db, name)
}

// refuseTemporary fails with errTemporaryTable when name is one of the
// session's temporary tables in d.
func (d *Database) refuseTemporary(ctx *sql.Context, name string) error {
	if _, ok := sessionOf(ctx).tempTableNamed(d.name, name); ok {
		return errTemporaryTable(d.name, name)
	}
	return nil
}

// temporaryOptions refuses the Iceberg clauses of CREATE TEMPORARY TABLE
// (PARTITIONED BY, TBLPROPERTIES, LOCATION, WRITE ORDERED BY), which a
// table in memory cannot honour.
func temporaryOptions(ct *plan.CreateTable) error {
	comment, _ := ct.TableOpts["comment"].(string)
	opts, err := planner.DecodeTableOptions(comment)
	if err != nil {
		return err
	}
	if len(opts.PartitionBy) > 0 || len(opts.Properties) > 0 || opts.Location != "" || len(opts.WriteOrderedBy) > 0 || opts.Replace != "" {
		return mysqlerr.NotSupported("temporary table %s: PARTITIONED BY, TBLPROPERTIES, LOCATION, WRITE ORDERED BY and REPLACE are Iceberg table clauses; a temporary table is kept in memory", ct.Name())
	}
	return nil
}

// showCreateTemporary is SHOW CREATE TABLE of a temporary table.
func showCreateTemporary(t *tempTable) string {
	lines := columnLines(t.schema.Schema)
	if len(t.schema.PkOrdinals) > 0 {
		names := make([]string, len(t.schema.PkOrdinals))
		for i, o := range t.schema.PkOrdinals {
			names[i] = t.schema.Schema[o].Name
		}
		lines = append(lines, "  PRIMARY KEY "+keyColumns(names))
	}
	return fmt.Sprintf("CREATE TEMPORARY TABLE %s (\n%s\n)", sqlval.QuoteIdent(t.Name()), strings.Join(lines, ",\n"))
}

// interceptDropTemporary takes DROP TEMPORARY TABLE, which drops only
// temporary tables: go-mysql-server resolves the names to any table, and
// fails IF EXISTS for a table that is not temporary, where MySQL notes
// 1051 and goes on.
func (p parser) interceptDropTemporary(stmt ast.Statement) (ast.Statement, bool) {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.Action != ast.DropStr || !ddl.Temporary || len(ddl.FromTables) == 0 {
		return stmt, false
	}
	n := &dropTemporary{ifExists: ddl.IfExists}
	for _, t := range ddl.FromTables {
		n.names = append(n.names, [2]string{t.DbQualifier.String(), t.Name.String()})
	}
	return ast.InjectedStatement{Statement: n, Auth: ast.AuthInformation{AuthType: ast.AuthType_IGNORE}}, true
}

// dropTemporary is DROP TEMPORARY TABLE [IF EXISTS] names. Every name is
// checked before any table is dropped.
type dropTemporary struct {
	ifExists bool
	names    [][2]string // database (empty: the current one), table
}

var (
	_ sql.ExecSourceRel = (*dropTemporary)(nil)
	_ ast.Injectable    = (*dropTemporary)(nil)
)

func (n *dropTemporary) WithResolvedChildren(context.Context, []any) (any, error) { return n, nil }
func (n *dropTemporary) Resolved() bool                                           { return true }
func (n *dropTemporary) IsReadOnly() bool                                         { return false }
func (n *dropTemporary) String() string                                           { return "DROP TEMPORARY TABLE" }
func (n *dropTemporary) Children() []sql.Node                                     { return nil }
func (n *dropTemporary) Schema(*sql.Context) sql.Schema                           { return types.OkResultSchema }
func (n *dropTemporary) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

func (n *dropTemporary) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	s := sessionOf(ctx)
	var drop, unknown [][2]string
	for _, name := range n.names {
		db := name[0]
		if db == "" {
			db = ctx.GetCurrentDatabase()
		}
		if db == "" {
			return nil, sql.ErrNoDatabaseSelected.New()
		}
		if _, ok := s.tempTableNamed(db, name[1]); ok {
			drop = append(drop, [2]string{db, name[1]})
		} else {
			unknown = append(unknown, [2]string{db, name[1]})
		}
	}
	if len(unknown) > 0 {
		names := make([]string, len(unknown))
		for i, u := range unknown {
			names[i] = u[0] + "." + u[1]
		}
		if !n.ifExists {
			return nil, mysqlerr.New(mysql.ERBadTable, "Unknown table '%s': DROP TEMPORARY TABLE drops temporary tables only", strings.Join(names, ","))
		}
		for _, name := range names {
			ctx.Warn(mysql.ERBadTable, "Unknown table '%s'", name)
		}
	}
	for _, d := range drop {
		s.dropTempTable(d[0], d[1])
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(0))), nil
}

// Temporary tables keep no indexes: they live in memory and every query
// scans them. A plain index (CREATE INDEX, ADD INDEX, KEY in CREATE
// TEMPORARY TABLE) is accepted with a warning that it is not kept, as
// indexes only make queries faster; a UNIQUE one, which would be a
// constraint, is refused with 1235; DROP and RENAME find no index (1091).
// go-mysql-server answered all of them with 1105 "the table is not
// indexable".
var _ sql.IndexAlterableTable = (*tempTable)(nil)

func (t *tempTable) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	if def.IsUnique() || def.IsFullText() || def.IsSpatial() || def.Constraint == sql.IndexConstraint_Vector {
		return mysqlerr.NotSupported("index %s on temporary table %s: icesql's temporary tables keep no indexes, and only a plain one can be left out (the PRIMARY KEY is enforced)", def.Name, t.Name())
	}
	ctx.Warn(mysql.ERNotSupportedYet, "index %s on temporary table %s is not kept: icesql's temporary tables keep no indexes, every query scans them", def.Name, t.Name())
	return nil
}

func (t *tempTable) DropIndex(_ *sql.Context, name string) error {
	return sql.ErrCantDropFieldOrKey.New(name)
}

func (t *tempTable) RenameIndex(_ *sql.Context, from, _ string) error {
	return sql.ErrCantDropFieldOrKey.New(from)
}

// GetIndexes implements sql.IndexAddressable, which go-mysql-server asks
// of a table it adds an index to: a temporary table has none.
func (t *tempTable) GetIndexes(*sql.Context) ([]sql.Index, error) { return nil, nil }

func (t *tempTable) IndexedAccess(*sql.Context, sql.IndexLookup) sql.IndexedTable { return nil }

func (t *tempTable) PreciseMatch() bool { return false }
