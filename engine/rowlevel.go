package engine

import (
	"context"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/planrules"
)

// rowLevel prepares UPDATE and DELETE for Iceberg tables: each target table
// is renamed to its row-identity variant (rowidentity.go), aliased to the
// name the statement uses, so that go-mysql-server's own UPDATE and DELETE
// nodes hand the editors rows that say where they live. TRUNCATE goes to
// Table.Truncate (filechange.go). The grant tables of the mysql database keep
// go-mysql-server's handling.
func rowLevel(stmt ast.Statement) (ast.Statement, bool) {
	switch s := stmt.(type) {
	case *ast.Update:
		for _, a := range s.Exprs {
			if a.Name != nil && isHiddenColumn(a.Name.Name.String()) {
				return refused(hiddenColumnError()), true
			}
		}
		targets := map[string]bool{}
		all := false
		for _, a := range s.Exprs {
			if a.Name == nil || a.Name.Qualifier.Name.IsEmpty() {
				all = true
				continue
			}
			targets[strings.ToLower(a.Name.Qualifier.Name.String())] = true
		}
		return s, markTargets(s.TableExprs, targets, all || singleTable(s.TableExprs), tableNamesInUse(s))
	case *ast.Delete:
		if len(s.Targets) > 0 {
			planrules.UsingAsOn(s.TableExprs, s.Where, s.OrderBy) // planrules/joinusing.go
		}
		targets := map[string]bool{}
		for _, t := range s.Targets {
			targets[strings.ToLower(t.Name.String())] = true
		}
		return s, markTargets(s.TableExprs, targets, len(s.Targets) == 0 && singleTable(s.TableExprs), tableNamesInUse(s))
	}
	return nil, false
}

func isHiddenColumn(name string) bool {
	return strings.EqualFold(name, fileColumn) || strings.EqualFold(name, posColumn)
}

// singleTable reports whether exprs is one plain table.
func singleTable(exprs ast.TableExprs) bool {
	if len(exprs) != 1 {
		return false
	}
	at, ok := exprs[0].(*ast.AliasedTableExpr)
	if !ok {
		return false
	}
	_, ok = at.Expr.(ast.TableName)
	return ok
}

// markTargets renames the tables of exprs named (by alias, else by name) in
// targets, or all of them when all is set, to their row-identity
// variants. It reports whether it renamed any. inUse are the names by
// which the statement refers to its tables (targetAlias).
func markTargets(exprs ast.TableExprs, targets map[string]bool, all bool, inUse map[string]bool) bool {
	renamed := false
	var walk func(te ast.TableExpr)
	walk = func(te ast.TableExpr) {
		switch t := te.(type) {
		case *ast.JoinTableExpr:
			walk(t.LeftExpr)
			walk(t.RightExpr)
		case *ast.ParenTableExpr:
			for _, e := range t.Exprs {
				walk(e)
			}
		case *ast.AliasedTableExpr:
			tn, ok := t.Expr.(ast.TableName)
			if !ok {
				return
			}
			switch strings.ToLower(tn.DbQualifier.String()) {
			case "mysql", "information_schema":
				return
			}
			name := tn.Name.String()
			ref := targetAlias(name, inUse)
			if !t.As.IsEmpty() {
				ref = t.As.String()
			}
			if !all && !targets[strings.ToLower(ref)] {
				return
			}
			if t.As.IsEmpty() {
				t.As = ast.NewTableIdent(ref)
			}
			tn.Name = ast.NewTableIdent(rowIdentityPrefix + name)
			t.Expr = tn
			renamed = true
		}
	}
	for _, te := range exprs {
		walk(te)
	}
	return renamed
}

func refused(err error) ast.Statement {
	return ast.InjectedStatement{
		Statement: refusal{err: err},
		Auth:      ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
	}
}

// refusal is an injected statement that fails with err when bound.
type refusal struct{ err error }

func (r refusal) WithResolvedChildren(context.Context, []any) (any, error) { return nil, r.err }
func (r refusal) String() string                                           { return r.err.Error() }
