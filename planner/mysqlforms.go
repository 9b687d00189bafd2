package planner

import (
	"context"
	"errors"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Statements of MySQL that the vitess grammar lacks.

// Do is MySQL's DO expr [, expr] ...: it evaluates the expressions, for
// their effect (SLEEP, GET_LOCK, a user variable's assignment), and returns
// no result. The vitess grammar lacks it; the engine runs Query, the
// SELECT of the same expressions, and discards its row.
type Do struct{ Query string }

// WithResolvedChildren implements ast.Injectable; the engine replaces Do
// with its own node before the statement is bound.
func (Do) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, errors.New("DO is run by the engine")
}

func (Do) String() string { return "DO" }

// doStatement reads DO's expressions.
func (r rewriter) doStatement(s statement) ([]edit, error) {
	if !s.word(0, "do") || len(s.toks) < 2 {
		return nil, nil
	}
	query := "SELECT " + s.text[s.toks[1].start:]
	sel, err := ast.ParseWithOptions(context.Background(), query, r.opts)
	if err != nil {
		return nil, err
	}
	var exprs ast.Exprs
	if sel, ok := sel.(*ast.Select); ok && sel.From == nil && sel.Where == nil && sel.Limit == nil {
		for _, e := range sel.SelectExprs {
			if ae, ok := e.(*ast.AliasedExpr); ok && ae.As.IsEmpty() {
				exprs = append(exprs, ae.Expr)
			}
		}
		if len(exprs) != len(sel.SelectExprs) {
			exprs = nil
		}
	}
	if exprs == nil {
		return nil, s.syntaxError(1, "DO takes a list of expressions")
	}
	return nil, injected{ast.InjectedStatement{
		Statement: Do{Query: query},
		Auth:      ast.AuthInformation{AuthType: ast.AuthType_IGNORE},
	}}
}

// explainJSON lets EXPLAIN FORMAT=JSON parse: the vitess grammar takes the
// format as an identifier, and JSON is a keyword, so it is quoted. The
// engine answers the format (explainjson.go).
func explainJSON(s statement) ([]edit, error) {
	i := 1
	if !s.word(0, "explain") && !s.word(0, "describe") && !s.word(0, "desc") {
		return nil, nil
	}
	if s.word(i, "extended") {
		i++
	}
	if !s.word(i, "format") || !s.punct(i+1, '=') || !s.word(i+2, "json") {
		return nil, nil
	}
	t := s.toks[i+2]
	return []edit{{start: t.start, end: t.end, text: "`json`"}}, nil
}

// ChecksumTable is MySQL's CHECKSUM TABLE t [, t] ... [QUICK | EXTENDED]:
// one row per table with a checksum of its rows. The engine computes it
// (QUICK and EXTENDED read the rows alike: icesql keeps no live checksum).
type ChecksumTable struct{ Tables []ast.TableName }

// WithResolvedChildren implements ast.Injectable; the engine replaces
// ChecksumTable with its own node before the statement is bound.
func (*ChecksumTable) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, errors.New("CHECKSUM TABLE is run by the engine")
}

func (*ChecksumTable) String() string { return "CHECKSUM TABLE" }

// checksumTable reads CHECKSUM TABLE's table names.
func checksumTable(s statement) ([]edit, error) {
	if !s.word(0, "checksum") || !s.word(1, "table") {
		return nil, nil
	}
	ct := &ChecksumTable{}
	auth := ast.AuthInformation{AuthType: ast.AuthType_SELECT, TargetType: ast.AuthTargetType_MultipleTableIdentifiers}
	i := 2
	for {
		end := s.skipName(i)
		if end == i || end-i > 3 {
			return nil, s.syntaxError(i, "CHECKSUM TABLE expects a table name")
		}
		var name ast.TableName
		name.Name = ast.NewTableIdent(s.toks[end-1].val)
		if end-i == 3 {
			name.DbQualifier = ast.NewTableIdent(s.toks[i].val)
		}
		ct.Tables = append(ct.Tables, name)
		auth.TargetNames = append(auth.TargetNames, name.DbQualifier.String(), name.Name.String())
		i = end
		if !s.punct(i, ',') {
			break
		}
		i++
	}
	if s.word(i, "quick") || s.word(i, "extended") {
		i++
	}
	if i != len(s.toks) {
		return nil, s.syntaxError(i, "unexpected text after CHECKSUM TABLE's tables")
	}
	return nil, injected{ast.InjectedStatement{Statement: ct, Auth: auth}}
}

// showOpenTables rewrites SHOW OPEN TABLES [FROM db] [LIKE 'p' | WHERE e]
// to a query of information_schema. MySQL lists the tables in its table
// cache with the locks on them; icesql keeps no table cache and takes no
// table locks (locking reads are checked at COMMIT), so every table of the
// database is open and none is in use or name-locked.
func showOpenTables(s statement) ([]edit, error) {
	if !s.word(0, "show") || !s.word(1, "open") || !s.word(2, "tables") {
		return nil, nil
	}
	db, i := "DATABASE()", 3
	if s.word(i, "from") || s.word(i, "in") {
		if !s.name(i + 1) {
			return nil, s.syntaxError(i+1, "expected a database name")
		}
		db, i = sqlString(s.toks[i+1].val), i+2
	}
	query := "SELECT TABLE_SCHEMA AS `Database`, TABLE_NAME AS `Table`, 0 AS `In_use`, 0 AS `Name_locked` " +
		"FROM information_schema.TABLES WHERE TABLE_SCHEMA = " + db + " AND TABLE_TYPE = 'BASE TABLE'"
	switch {
	case i == len(s.toks):
	case s.word(i, "like") && i+2 == len(s.toks) && s.toks[i+1].typ == ast.STRING:
		query += " AND TABLE_NAME LIKE " + sqlString(s.toks[i+1].val)
	case s.word(i, "where") && i+1 < len(s.toks):
		query = "SELECT * FROM (" + query + ") AS open_tables WHERE " + s.text[s.toks[i+1].start:]
	default:
		return nil, s.syntaxError(i, "SHOW OPEN TABLES takes FROM db, then LIKE 'pattern' or WHERE")
	}
	return []edit{{start: 0, end: len(s.text), text: query + " ORDER BY `Database`, `Table`"}}, nil
}
