package planner

import (
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// timeTravel rewrites the time-travel clauses of Spark, Trino and Impala to
// MySQL's AS OF, which go-mysql-server hands to the database
// (engine/asof.go resolves the value):
//
//	t VERSION AS OF 123 | 'tag'        → t AS OF 123 | 'tag'
//	t FOR VERSION AS OF …              → unchanged: the MySQL grammar of vitess takes it (Trino)
//	t FOR SYSTEM_VERSION AS OF …       → t AS OF …          (Impala)
//	t TIMESTAMP AS OF '2024-01-01 …'   → t AS OF TIMESTAMP('2024-01-01 …')
//	t TIMESTAMP AS OF 1700000000       → t AS OF FROM_UNIXTIME(1700000000)
//	t FOR TIMESTAMP AS OF …            → the same                 (Trino)
//
// A timestamp becomes a datetime expression so that it can never be taken
// for a snapshot id or a tag name; Spark reads an integer there as Unix
// seconds. MySQL's own AS OF and FOR SYSTEM_TIME AS OF pass unchanged.
func timeTravel(s statement) ([]edit, error) {
	var edits []edit
	for i := 1; i+3 < len(s.toks); i++ {
		if !s.word(i+1, "as") || !s.word(i+2, "of") {
			continue
		}
		isVersion := s.word(i, "version") || s.word(i, "system_version")
		isTimestamp := s.word(i, "timestamp")
		if !isVersion && !isTimestamp {
			continue
		}
		first := i
		if s.word(i-1, "for") {
			first = i - 1
		} else if s.word(i, "system_version") {
			continue // only Impala's FOR SYSTEM_VERSION
		}
		// Drop the dialect's words before AS OF.
		edits = append(edits, edit{start: s.toks[first].start, end: s.toks[i+1].start})
		if isTimestamp {
			v := s.toks[i+3]
			switch v.typ {
			case ast.STRING:
				edits = append(edits, edit{start: v.start, end: v.end, text: "TIMESTAMP(" + s.text[v.start:v.end] + ")"})
			case ast.INTEGRAL:
				edits = append(edits, edit{start: v.start, end: v.end, text: "FROM_UNIXTIME(" + s.text[v.start:v.end] + ")"})
			}
		}
		i += 3
	}
	return edits, nil
}

// errAsOfParameter refuses AS OF ? in a server-side prepared statement:
// go-mysql-server panics binding a parameter there (planbuilder's
// buildAsOfLit), which drops the client's connection.
var errAsOfParameter = notSupported("AS OF ?: a parameter cannot name the snapshot or time of a server-side " +
	"prepared statement; write the value in the statement text (client-side interpolation, such as " +
	"go-sql-driver's interpolateParams=true or JDBC's default, does this)")

// rejectAsOfParameter finds AS OF clauses whose value is a bind parameter.
func rejectAsOfParameter(stmt ast.Statement) error {
	var found bool
	_ = ast.Walk(func(node ast.SQLNode) (bool, error) {
		asOf, ok := node.(*ast.AsOf)
		if !ok || asOf == nil {
			return true, nil
		}
		for _, e := range []ast.Expr{asOf.Time, asOf.Start, asOf.End} {
			if e == nil {
				continue
			}
			_ = ast.Walk(func(n ast.SQLNode) (bool, error) {
				if v, ok := n.(*ast.SQLVal); ok && v.Type == ast.ValArg {
					found = true
				}
				return !found, nil
			}, e)
		}
		return !found, nil
	}, stmt)
	if found {
		return errAsOfParameter
	}
	return nil
}
