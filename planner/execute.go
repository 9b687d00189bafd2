package planner

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// ALTER TABLE t EXECUTE name(args) is how Trino and Doris users call a
// table procedure. It becomes CALL system.name(table => 't', args), with
// Trino's names for Spark's procedures (optimize is rewrite_data_files,
// optimize_manifests rewrite_manifests) and its retention_threshold
// ('7d') as older_than. Doris writes its arguments "name" = "value".

// trinoNames maps Trino's table procedures to Spark's.
var trinoNames = map[string]string{
	"optimize":           "rewrite_data_files",
	"optimize_manifests": "rewrite_manifests",
}

// parseExecute recognises ALTER TABLE name EXECUTE proc[(args)]; ok is
// false for any other ALTER.
func (p *Parser) parseExecute(ctx context.Context, s statement, opts ast.ParserOptions) (ast.Statement, bool, error) {
	end := s.alterTableEnd()
	if end < 0 || !s.word(end, "execute") || !s.name(end+1) {
		return nil, false, nil
	}
	start := 2
	if s.word(1, "ignore") {
		start = 3
	}
	var parts []string
	for i := start; i < end; i += 2 {
		parts = append(parts, "`"+strings.ReplaceAll(s.toks[i].val, "`", "``")+"`")
	}
	name := strings.ToLower(s.toks[end+1].val)
	if spark, ok := trinoNames[name]; ok {
		name = spark
	}
	call := &Call{Name: name, ArgNames: []string{"table"}}
	exprs := ast.Exprs{ast.NewStrVal([]byte(strings.Join(parts, ".")))}
	open := end + 2
	if open == len(s.toks) {
		return callStatement(call, exprs), true, nil
	}
	close := s.closing(open)
	if !s.punct(open, '(') || close != len(s.toks)-1 {
		return nil, true, fmt.Errorf("syntax error in ALTER TABLE ... EXECUTE %s: want EXECUTE %s(name => value, ...)", name, name)
	}
	args, err := callArgs(ctx, s, call, open, close, opts, true)
	if err != nil {
		return nil, true, err
	}
	for i, a := range call.ArgNames[1:] {
		if a == "" {
			return nil, true, fmt.Errorf("syntax error in ALTER TABLE ... EXECUTE %s: argument %d has no name; write name => value", name, i+1)
		}
		if strings.EqualFold(a, "retention_threshold") {
			older, err := trinoRetention(args[i])
			if err != nil {
				return nil, true, fmt.Errorf("ALTER TABLE ... EXECUTE %s: retention_threshold: %w", name, err)
			}
			call.ArgNames[i+1], args[i] = "older_than", older
		}
	}
	return callStatement(call, append(exprs, args...)), true, nil
}

// trinoRetention turns Trino's duration ('7d', '12h', '30m', '10s') into
// the time that long ago, NOW() - INTERVAL n unit.
func trinoRetention(e ast.Expr) (ast.Expr, error) {
	v, ok := e.(*ast.SQLVal)
	if !ok || v.Type != ast.StrVal {
		return nil, fmt.Errorf("want a duration such as '7d'")
	}
	text := strings.TrimSpace(string(v.Val))
	units := []struct{ suffix, unit string }{{"ms", "MICROSECOND"}, {"d", "DAY"}, {"h", "HOUR"}, {"m", "MINUTE"}, {"s", "SECOND"}}
	for _, u := range units {
		num, ok := strings.CutSuffix(text, u.suffix)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
		if err != nil || f < 0 {
			break
		}
		n := int64(f)
		if u.suffix == "ms" {
			n = int64(f * 1000)
		}
		return &ast.BinaryExpr{
			Operator: ast.MinusStr,
			Left:     &ast.FuncExpr{Name: ast.NewColIdent("NOW")},
			Right:    &ast.IntervalExpr{Expr: ast.NewIntVal([]byte(strconv.FormatInt(n, 10))), Unit: u.unit},
		}, nil
	}
	return nil, fmt.Errorf("'%s' is not a duration such as '7d', '12h', '30m' or '10s'", text)
}

// callArgs parses the arguments between the parentheses at open and close:
// value, name => value, or with quotedNames (Doris) "name" = value. Spark's map(...) and
// array(...) literals become JSON_OBJECT and JSON_ARRAY.
func callArgs(ctx context.Context, s statement, call *Call, open, close int, opts ast.ParserOptions, quotedNames bool) (ast.Exprs, error) {
	var exprs ast.Exprs
	if open+1 >= close {
		return nil, nil
	}
	for _, e := range s.elements(open+1, close) {
		first, end := e[0], e[1]
		if first >= end {
			return nil, fmt.Errorf("syntax error in CALL system.%s: empty argument", call.Name)
		}
		name := ""
		switch {
		case s.name(first) && s.punct(first+1, '=') && s.punct(first+2, '>') && s.toks[first+1].end == s.toks[first+2].start:
			name = s.toks[first].val
			first += 3
		case quotedNames && s.toks[first].typ == ast.STRING && s.punct(first+1, '=') && !s.punct(first+2, '>'):
			name = s.toks[first].val
			first += 2
		}
		if name != "" && first >= end {
			return nil, fmt.Errorf("syntax error in CALL system.%s: argument '%s' has no value", call.Name, name)
		}
		expr, err := parseExpr(ctx, sparkCollections(s, first, end), opts)
		if err != nil {
			return nil, fmt.Errorf("CALL system.%s: argument %d: %w", call.Name, len(exprs)+1, err)
		}
		call.ArgNames = append(call.ArgNames, name)
		exprs = append(exprs, expr)
	}
	return exprs, nil
}
