package engine

import (
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// UPDATE, DELETE and MERGE on a branch: the target is db.t.branch_b (the
// planner's t$branch_b), or a plain name in a session whose WAP branch
// (spark.wap.branch) applies to the table. The row-identity scan reads the
// branch's head with the transaction's changes staged for the branch, the
// changes are staged under the branch's write target (refs.go) like an
// INSERT's, and the commit builds on the branch's head and moves only the
// branch, validated against what was committed to the branch since the
// statement read it (storage.RowDelta.Branch).

// rowLevelTable resolves the table an UPDATE, DELETE or MERGE names: a
// table (as the session reads it: main or its WAP branch), a branch or a
// tag (refused later by writeTarget, as for INSERT). A metadata table is
// refused here.
func (d *Database) rowLevelTable(ctx *sql.Context, name string) (*Table, bool, error) {
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if ok {
		t, ok, err := d.GetTableInsensitive(ctx, real)
		if err != nil || !ok {
			return nil, ok, err
		}
		it, ok := t.(*Table)
		if !ok {
			return nil, false, sql.ErrTableNotFound.New(name)
		}
		return it, true, nil
	}
	if t, ok, err := d.refTable(ctx, name); err != nil || ok {
		if err != nil {
			return nil, false, err
		}
		it := t.(*Table)
		if err := d.checkBranchExists(ctx, it); err != nil {
			return nil, false, err
		}
		return it, true, nil
	}
	if _, meta, _ := d.metadataTable(ctx, name); meta {
		return nil, false, mysqlerr.NotSupported("%s is a metadata table: metadata tables are read-only", name)
	}
	// Coded here: go-mysql-server replaces an ErrTableNotFound with its
	// own, which would name the variant.
	return nil, false, mysqlerr.New(mysql.ERNoSuchTable, "table not found: %s", name)
}

// checkBranchExists fails when t names a branch that neither the table nor
// the open transaction has: there are no rows to change. (An INSERT creates
// the branch from main; a WAP session's first UPDATE, DELETE or MERGE does
// too, since its plain table name reads main until then.)
func (d *Database) checkBranchExists(ctx *sql.Context, t *Table) error {
	if t.branch == "" || t.branch == table.MainBranch {
		return nil
	}
	if _, ok := storage.RefNamed(t.tbl.Metadata(), t.branch); ok {
		return nil
	}
	if sessionOf(ctx).hasStage(d.ident(t.name), writeTarget{branch: t.branch}) {
		return nil
	}
	return mysqlerr.New(mysql.ERNoSuchTable,
		"table %s.%s has no branch %s: UPDATE, DELETE and MERGE change the rows of an existing branch", d.name, t.name, t.branch)
}

// hasStage reports whether the open transaction changed ident for target w.
func (s *Session) hasStage(ident table.Identifier, w writeTarget) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	st, ok := s.staged[w.stageKey(ident)]
	return ok && (len(st.files) > 0 || st.any())
}

// rowLevelBase is the snapshot a row-level statement on t read: its
// branch's head, or main's current snapshot, from which a branch that does
// not exist yet starts (a WAP branch's first write).
func (t *Table) rowLevelBase() *table.Snapshot {
	if snap := t.Snapshot(); snap != nil {
		return snap
	}
	return t.tbl.CurrentSnapshot()
}

// targetAlias is the alias UPDATE and DELETE give a target written without
// one: its name, except that a branch or tag (t$branch_b) is aliased by
// its table's name when no other table of the statement is named or
// aliased so. go-mysql-server qualifies the columns of a branch written
// without an alias by the resolved table's name, t, so t.col keeps naming
// them; and only a target aliased by its table's name gets its WHERE
// clause pushed to the scan in go-mysql-server's single-table plans
// (owns in vecexec/scanid.go), which also makes serializable validation check
// concurrent commits against that filter rather than against any row.
func targetAlias(name string, inUse map[string]bool) string {
	if base, _, _, ok := splitRefName(name); ok && !inUse[strings.ToLower(base)] {
		return base
	}
	return name
}

// tableNamesInUse are the names (lower case) by which stmt refers to its
// tables, subqueries included: an alias, else the table's name.
func tableNamesInUse(stmt ast.SQLNode) map[string]bool {
	names := map[string]bool{}
	_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
		if at, ok := n.(*ast.AliasedTableExpr); ok {
			if !at.As.IsEmpty() {
				names[strings.ToLower(at.As.String())] = true
			} else if tn, ok := at.Expr.(ast.TableName); ok {
				names[strings.ToLower(tn.Name.String())] = true
			}
		}
		return true, nil
	}, stmt)
	return names
}
