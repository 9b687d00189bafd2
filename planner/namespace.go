package planner

import (
	"context"
	"maps"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// CreateNamespace is Spark's
//
//	CREATE NAMESPACE|DATABASE|SCHEMA [IF NOT EXISTS] name
//	  [COMMENT 'text'] [LOCATION 'path'] [WITH DBPROPERTIES|PROPERTIES ('key' = 'value', ...)]
//
// when it has one of the clauses, for which MySQL's grammar has no place.
// The comment and the location are namespace properties, "comment" and
// "location", as Spark stores them.
type CreateNamespace struct {
	Name        string
	IfNotExists bool
	Properties  map[string]string
}

var _ ast.Injectable = (*CreateNamespace)(nil)

// String names the statement in logs.
func (c *CreateNamespace) String() string { return "CREATE NAMESPACE " + c.Name }

// WithResolvedChildren implements ast.Injectable. The engine replaces
// CreateNamespace before go-mysql-server binds it; reaching here means it
// did not.
func (c *CreateNamespace) WithResolvedChildren(context.Context, []any) (any, error) {
	return nil, notSupported("CREATE NAMESPACE %s with properties is not available here", c.Name)
}

// parseCreateNamespace recognises CREATE NAMESPACE|DATABASE|SCHEMA with a
// COMMENT, LOCATION or WITH ... PROPERTIES clause; ok is false for any other
// statement (a plain CREATE DATABASE goes to go-mysql-server).
func (p *Parser) parseCreateNamespace(s statement) (ast.Statement, bool, error) {
	if !s.word(0, "create") || !(s.word(1, "namespace") || s.word(1, "database") || s.word(1, "schema")) {
		return nil, false, nil
	}
	c := &CreateNamespace{Properties: map[string]string{}}
	i := 2
	if s.word(i, "if") && s.word(i+1, "not") && s.word(i+2, "exists") {
		c.IfNotExists, i = true, i+3
	}
	if !s.name(i) {
		return nil, false, nil
	}
	c.Name = s.toks[i].val
	if s.punct(i+1, '.') && s.name(i+2) && strings.EqualFold(c.Name, p.catalog) {
		c.Name, i = s.toks[i+2].val, i+2
	}
	i++
	if !(s.word(i, "comment") || s.word(i, "location") || s.word(i, "with")) {
		return nil, false, nil
	}
	str := func(i int, clause string) (string, error) {
		if i >= len(s.toks) || s.toks[i].typ != ast.STRING {
			return "", s.syntaxError(i, "%s expects a quoted string", clause)
		}
		return s.toks[i].val, nil
	}
	seen := map[string]bool{}
	for i < len(s.toks) {
		clause := strings.ToUpper(s.toks[i].val)
		if seen[clause] {
			return nil, true, s.syntaxError(i, "%s is given twice", clause)
		}
		seen[clause] = true
		switch {
		case s.word(i, "comment") || s.word(i, "location"):
			v, err := str(i+1, clause)
			if err != nil {
				return nil, true, err
			}
			c.Properties[strings.ToLower(clause)] = v
			i += 2
		case s.word(i, "with") && (s.word(i+1, "dbproperties") || s.word(i+1, "properties")):
			props, close, err := s.propertyList(i+2, "WITH "+strings.ToUpper(s.toks[i+1].val))
			if err != nil {
				return nil, true, err
			}
			maps.Copy(c.Properties, props)
			i = close + 1
		default:
			return nil, true, s.syntaxError(i, "CREATE NAMESPACE takes COMMENT 'text', LOCATION 'path' and WITH DBPROPERTIES ('key' = 'value', ...)")
		}
	}
	return ast.InjectedStatement{
		Statement: c,
		Auth:      ast.AuthInformation{AuthType: ast.AuthType_CREATE, TargetType: ast.AuthTargetType_DatabaseIdentifiers, TargetNames: []string{c.Name}},
	}, true, nil
}
