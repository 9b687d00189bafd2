package planner

import (
	"context"
	"errors"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Parser is the sql.Parser icesql installs in go-mysql-server:
//
//	analyzer.NewBuilder(pro).AddOverrides(sql.EngineOverrides{
//		Builder: sql.BuilderOverrides{Parser: planner.NewParser(catalog)}})
//
// It rewrites each statement's Spark/Iceberg syntax into MySQL text and
// parses that with the vitess MySQL grammar, as sql.MysqlParser does. A
// statement without Spark syntax reaches the grammar unchanged. Syntax errors
// come back as errors. Statements icesql refuses on purpose (MySQL
// partitioning, USING a format other than iceberg) come back as a statement
// that fails with its MySQL error code when go-mysql-server binds it, since
// that is the only way the code reaches the client (see rejected).
type Parser struct {
	catalog string
}

var _ sql.Parser = (*Parser)(nil)

// NewParser returns a Parser for the catalog named catalogName: names
// qualified with it (catalogName.db.table) lose the qualifier.
func NewParser(catalogName string) *Parser {
	return &Parser{catalog: catalogName}
}

// ParseSimple implements sql.Parser.
func (p *Parser) ParseSimple(query string) (ast.Statement, error) {
	stmt, _, _, err := p.ParseWithOptions(context.Background(), query, ';', false, ast.ParserOptions{})
	return stmt, err
}

// Parse implements sql.Parser.
func (p *Parser) Parse(ctx *sql.Context, query string, multi bool) (ast.Statement, string, string, error) {
	return p.ParseWithOptions(ctx, query, ';', multi, sql.LoadSqlMode(ctx).ParserOptions())
}

// ParseWithOptions implements sql.Parser. With multi set it parses the first
// statement of query and returns its rewritten text as parsed (the AST's
// positions, which go-mysql-server uses to cut out view and trigger bodies,
// refer to that text) and the original text after it as remainder, which
// the next call rewrites in turn.
func (p *Parser) ParseWithOptions(ctx context.Context, query string, delimiter rune, multi bool, opts ast.ParserOptions) (ast.Statement, string, string, error) {
	s := sql.RemoveSpaceAndDelimiter(query, delimiter)
	if !multi {
		return p.parseAll(ctx, s, opts)
	}
	stmt, parsed, next, err := p.parseFirst(ctx, s, opts)
	if next == 0 || next >= len(s) {
		return stmt, parsed, "", err
	}
	return stmt, sql.RemoveSpaceAndDelimiter(parsed, delimiter), s[next:], err
}

// ParseOneWithOptions implements sql.Parser: it parses the first statement
// and returns the offset in query where the next one starts.
func (p *Parser) ParseOneWithOptions(ctx context.Context, query string, opts ast.ParserOptions) (ast.Statement, int, error) {
	stmt, _, next, err := p.parseFirst(ctx, query, opts)
	return stmt, next, err
}

// parseAll parses s as exactly one statement, which may be a compound
// statement (a procedure with a BEGIN … END body) whose ';'-separated parts
// are each rewritten.
func (p *Parser) parseAll(ctx context.Context, s string, opts ast.ParserOptions) (ast.Statement, string, string, error) {
	if stmt, ok, err := p.parseCall(ctx, s, opts); ok {
		return stmt, s, "", err
	}
	if stmt, ok, err := p.parseMerge(s, opts); ok {
		return stmt, s, "", err
	}
	text, _, ctasComment, err := p.rewriteAll(s, opts)
	if coded := rejectedBy(err); coded != nil {
		return coded, s, "", nil
	}
	if err != nil {
		return nil, s, "", err
	}
	stmt, err := ast.ParseWithOptions(ctx, text, opts)
	if err != nil {
		return nil, text, "", err
	}
	return finish(stmt, ctasComment), text, "", nil
}

// parseFirst parses the first statement of s. It returns the statement, its
// rewritten text and the offset in s where the next statement starts.
//
// Only the text up to the first ';' is rewritten, so each call costs the
// length of one statement, not of the rest of a long script. The vitess
// grammar decides where a statement ends, though: a procedure or trigger body
// holds several ';'. When the first parse does not end at the first ';' (or
// fails), every ';'-separated part is rewritten and the text parsed again.
func (p *Parser) parseFirst(ctx context.Context, s string, opts ast.ParserOptions) (ast.Statement, string, int, error) {
	r := rewriter{catalog: p.catalog, opts: opts}
	end := statementEnd(s, opts)
	if stmt, ok, err := p.parseCall(ctx, s[:end], opts); ok {
		next := end
		if end < len(s) {
			next++ // past the ';'
		}
		return stmt, s[:end], next, err
	}
	if stmt, ok, err := p.parseMerge(s[:end], opts); ok {
		next := end
		if end < len(s) {
			next++ // past the ';'
		}
		return stmt, s[:end], next, err
	}
	first, ctasComment, err := r.rewrite(s[:end])
	if err != nil {
		coded := rejectedBy(err)
		if coded == nil {
			return nil, s, 0, err
		}
		next := end
		if end < len(s) {
			next++ // past the ';'
		}
		return coded, s[:end], next, nil
	}
	text := first + s[end:]
	shift := end - len(first) // offsets after the first statement: text + shift = s
	stmt, ri, err := ast.ParseOneWithOptions(ctx, text, opts)
	switch {
	case errors.Is(err, ast.ErrEmpty):
		return nil, s[:min(ri, len(s))], ri, err // nothing was rewritten
	case err == nil && ri <= len(first)+1: // just past the first ';', or the end
		return finish(stmt, ctasComment), text[:ri], ri + shift, nil
	case end == len(s): // one statement, and a syntax error in it
		return nil, s, 0, err
	}

	whole, ends, _, ferr := p.rewriteAll(s, opts)
	if ferr == nil {
		var stmt ast.Statement
		stmt, ri, ferr = ast.ParseOneWithOptions(ctx, whole, opts)
		if ferr == nil {
			return finish(stmt, ""), whole[:ri], ends.original(ri), nil
		}
	}
	if err != nil {
		return nil, s, 0, err // the first statement's own syntax error
	}
	return nil, s, 0, ferr
}

// pieceEnds records, for each ';' of a rewritten text, the offset just past
// it in the rewritten text and in the original.
type pieceEnds []struct{ text, orig int }

// original maps an offset in the rewritten text that lies at or after a ';'
// (and before the next edit) to the original text.
func (e pieceEnds) original(at int) int {
	shift := 0
	for _, p := range e {
		if p.text > at {
			break
		}
		shift = p.orig - p.text
	}
	return at + shift
}

// rewriteAll rewrites each ';'-separated part of s and returns the result,
// where its ';' are, and the ctasComment of the first part.
func (p *Parser) rewriteAll(s string, opts ast.ParserOptions) (string, pieceEnds, string, error) {
	r := rewriter{catalog: p.catalog, opts: opts}
	l := newLexer(s, opts)
	var b strings.Builder
	var ends pieceEnds
	var ctasComment string
	start := 0
	for {
		t := l.next()
		if t.typ != 0 && t.typ != ';' {
			continue
		}
		piece, comment, err := r.rewrite(s[start:t.start])
		if err != nil {
			return "", nil, "", err
		}
		if start == 0 {
			ctasComment = comment
		}
		b.WriteString(piece)
		if t.typ == 0 {
			return b.String(), ends, ctasComment, nil
		}
		b.WriteString(s[t.start:t.end])
		ends = append(ends, struct{ text, orig int }{b.Len(), t.end})
		start = t.end
	}
}

// finish applies what can only be seen or said on the parsed statement: it
// refuses MySQL partitioning and misplaced aggregates, gives an aggregating subquery's tables their
// own names, and gives a CREATE TABLE … AS SELECT without a column list the
// table COMMENT its text had no place for.
func finish(stmt ast.Statement, ctasComment string) ast.Statement {
	if err := rejectMySQLPartitioning(stmt); err != nil {
		return rejected(err)
	}
	if err := misplacedGroupFunc(stmt); err != nil { // groupfuncs.go
		return rejected(err)
	}
	if agg := outerGroupFunc(stmt); agg != "" {
		return rejected(notSupported("%s in a subquery aggregates only an outer query's columns, which MySQL computes in the outer query; icesql does not yet: compute it in the outer query (a derived table or a join)", agg))
	}
	if rejectAsOfParameter(stmt) != nil {
		return rejected(errAsOfParameter)
	}
	distinguishSubqueryTables(stmt) // subqueryaggs.go
	if ddl, ok := stmt.(*ast.DDL); ok && ctasComment != "" && ddl.TableSpec == nil && ddl.OptSelect != nil {
		ddl.TableSpec = &ast.TableSpec{}
		ddl.TableSpec.AddTableOption(&ast.TableOption{Name: "COMMENT", Value: ctasComment})
	}
	return stmt
}

// rejectedBy returns a rejected statement if err, from a rewrite, is a coded
// MySQL error, and nil for any other error.
func rejectedBy(err error) ast.Statement {
	if stmt, ok := injectedBy(err); ok {
		return stmt
	}
	var coded *mysql.SQLError
	if errors.As(err, &coded) {
		return rejected(coded)
	}
	return nil
}
