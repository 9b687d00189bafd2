package engine

import (
	"context"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// interceptRename takes RENAME TABLE and ALTER TABLE ... RENAME TO from
// go-mysql-server, which drops the database of the names and renames in
// the current database: with USE a, RENAME TABLE b.z TO b.w renamed a.z.
// renameTables binds the statement to the database its names give.
func (p parser) interceptRename(stmt ast.Statement) (ast.Statement, bool) {
	var ddl *ast.DDL
	alter := false
	switch s := stmt.(type) {
	case *ast.DDL:
		if s.Action != ast.RenameStr {
			return stmt, false
		}
		ddl = s
	case *ast.AlterTable:
		for _, d := range s.Statements {
			if d.Action == ast.RenameStr {
				ddl = d
			}
		}
		if ddl == nil {
			return stmt, false
		}
		if len(s.Statements) > 1 || len(s.PartitionSpecs) > 0 {
			return refused(mysqlerr.NotSupported("ALTER TABLE %s renames the table and changes it in one statement; run RENAME TO and the other changes as separate statements", s.Table.Name)), true
		}
		alter = true
	default:
		return stmt, false
	}
	r := &renameTables{e: p.e, alter: alter}
	for i, from := range ddl.FromTables {
		if i >= len(ddl.ToTables) {
			break
		}
		to := ddl.ToTables[i]
		r.pairs = append(r.pairs, renamePair{
			fromDB: from.DbQualifier.String(), from: from.Name.String(),
			toDB: to.DbQualifier.String(), to: to.Name.String(),
		})
	}
	return ast.InjectedStatement{Statement: r, Auth: ddl.Auth}, true
}

// renamePair is one "from TO to" of a RENAME TABLE; an empty database is
// the current one.
type renamePair struct {
	fromDB, from, toDB, to string
}

// renameTables is RENAME TABLE (alter unset) or ALTER TABLE ... RENAME TO,
// bound to the one database its names give. A table's files stay in its
// namespace's folder, so a rename cannot move a table to another database,
// and one statement renames in one database (MySQL's statement is atomic,
// and a catalog commits renames one table at a time, within a namespace).
type renameTables struct {
	e     *Engine
	alter bool
	pairs []renamePair
}

var (
	_ sql.ExecSourceRel = (*renameTables)(nil)
	_ ast.Injectable    = (*renameTables)(nil)
)

func (r *renameTables) WithResolvedChildren(context.Context, []any) (any, error) { return r, nil }
func (r *renameTables) Resolved() bool                                           { return true }
func (r *renameTables) IsReadOnly() bool                                         { return false }
func (r *renameTables) String() string                                           { return "RENAME TABLE" }
func (r *renameTables) Children() []sql.Node                                     { return nil }
func (r *renameTables) Schema(*sql.Context) sql.Schema                           { return types.OkResultSchema }
func (r *renameTables) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(r, len(children), 0)
	}
	return r, nil
}

// database is the one database every name of the statement is in.
func (r *renameTables) database(ctx *sql.Context) (string, error) {
	current := ctx.GetCurrentDatabase()
	in := func(db string) (string, error) {
		if db != "" {
			return db, nil
		}
		if current == "" {
			return "", sql.ErrNoDatabaseSelected.New()
		}
		return current, nil
	}
	var db string
	for _, p := range r.pairs {
		from, err := in(p.fromDB)
		if err != nil {
			return "", err
		}
		to, err := in(p.toDB)
		if err != nil {
			return "", err
		}
		if !strings.EqualFold(from, to) {
			return "", mysqlerr.NotSupported("RENAME TABLE cannot move %s.%s to database %s: a table's files stay in its database's folder; name the new table in %s (%s.%s)", from, p.from, to, from, from, p.to)
		}
		if db != "" && !strings.EqualFold(db, from) {
			return "", mysqlerr.NotSupported("RENAME TABLE renames tables of one database per statement; rename the tables of %s and of %s in separate statements", db, from)
		}
		db = from
	}
	return db, nil
}

// RowIter renames through go-mysql-server's RENAME TABLE, bound to the
// statement's database; that keeps its handling of views and of tables
// renamed in a chain (a TO b, b TO a). As in MySQL, the statement first
// commits the open transaction.
func (r *renameTables) RowIter(ctx *sql.Context, row sql.Row) (sql.RowIter, error) {
	name, err := r.database(ctx)
	if err != nil {
		return nil, err
	}
	db, err := r.e.provider.Database(ctx, name)
	if err != nil {
		return nil, err
	}
	olds := make([]string, len(r.pairs))
	news := make([]string, len(r.pairs))
	for i, p := range r.pairs {
		if err := analyzer.ValidateIdentifier(p.to); err != nil {
			return nil, err
		}
		olds[i], news[i] = p.from, p.to
	}
	if err := r.checkNames(ctx, db); err != nil {
		return nil, err
	}
	sess := sessionOf(ctx)
	if err := sess.CommitTransaction(ctx, nil); err != nil {
		return nil, err
	}
	for i := range olds {
		// Database.CreateView renames a view when asked to create one
		// that a rename left pending (views.go).
		sess.rememberView(ctx, news[i], pendingView{renameFrom: olds[i]})
	}
	return r.e.sqle.Analyzer.ExecBuilder.Build(ctx, plan.NewRenameTable(db, olds, news, r.alter), row)
}

// checkNames fails the statement before anything is renamed, as MySQL's
// atomic RENAME TABLE does, where go-mysql-server would rename the pairs
// before a failing one: each old name must name a table or view and each
// new name none, in the order the pairs apply.
func (r *renameTables) checkNames(ctx *sql.Context, db sql.Database) error {
	renamed := map[string]bool{} // by lower-case name: true made by an earlier pair, false renamed away
	exists := func(name string) (bool, error) {
		if made, ok := renamed[strings.ToLower(name)]; ok {
			return made, nil
		}
		if _, ok, err := db.GetTableInsensitive(ctx, name); err != nil || ok {
			return ok, err
		}
		return isView(ctx, db, name)
	}
	for _, p := range r.pairs {
		if ok, err := exists(p.from); err != nil {
			return err
		} else if !ok {
			return sql.ErrTableNotFound.New(p.from)
		}
		if r.alter {
			if view, err := isView(ctx, db, p.from); err != nil {
				return err
			} else if view {
				return mysqlerr.New(mysqlerr.ErWrongObject, "'%s.%s' is not BASE TABLE: RENAME TABLE renames a view", db.Name(), p.from)
			}
		}
		if ok, err := exists(p.to); err != nil {
			return err
		} else if ok && !strings.EqualFold(p.from, p.to) {
			return sql.ErrTableAlreadyExists.New(p.to)
		}
		renamed[strings.ToLower(p.from)] = false
		renamed[strings.ToLower(p.to)] = true
	}
	return nil
}

// isView reports whether db holds a view of that name.
func isView(ctx *sql.Context, db sql.Database, name string) (bool, error) {
	vdb, ok := db.(sql.ViewDatabase)
	if !ok {
		return false, nil
	}
	_, ok, err := vdb.GetViewDefinition(ctx, name)
	return ok, err
}
