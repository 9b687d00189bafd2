package planner

import (
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// sessionSettings are Spark session settings icesql honours, by the names
// Spark and icesql give them, with the MySQL session variable each is.
var sessionSettings = map[string]string{
	"spark.wap.branch":  "icesql_wap_branch",
	"icesql.wap.branch": "icesql_wap_branch",
	"spark.wap.id":      "icesql_wap_id",
	"icesql.wap.id":     "icesql_wap_id",
}

// sparkSet rewrites Spark's SET of a session setting, whose dotted name and
// unquoted value the MySQL grammar cannot read, to MySQL's SET of the
// session variable behind it:
//
//	SET spark.wap.branch = audit-branch   → SET @@SESSION.icesql_wap_branch = 'audit-branch'
//	SET spark.wap.branch = 'audit'        → SET @@SESSION.icesql_wap_branch = 'audit'
//	SET spark.wap.branch =                → SET @@SESSION.icesql_wap_branch = ''
//	RESET spark.wap.branch                → SET @@SESSION.icesql_wap_branch = ''
//	SET spark.wap.branch                  → SELECT 'spark.wap.branch' AS `key`, @@SESSION.icesql_wap_branch AS `value`
//
// As in Spark, the value is the rest of the statement, one quoted string
// standing for its contents. Only the settings of sessionSettings are
// rewritten; other dotted names keep MySQL's meaning (a column).
func sparkSet(s statement) ([]edit, error) {
	if !s.word(0, "set") && !s.word(0, "reset") {
		return nil, nil
	}
	end := s.skipName(1)
	name := strings.ToLower(s.dotted(1, end))
	variable, ok := sessionSettings[name]
	if !ok {
		return nil, nil
	}
	whole := edit{start: 0, end: len(s.text)}
	switch {
	case s.word(0, "reset") && end == len(s.toks):
		whole.text = "SET @@SESSION." + variable + " = ''"
	case s.word(0, "set") && end == len(s.toks):
		whole.text = "SELECT " + sqlString(name) + " AS `key`, @@SESSION." + variable + " AS `value`"
	case s.word(0, "set") && s.punct(end, '='):
		value := ""
		if end+1 < len(s.toks) {
			value = strings.TrimSpace(s.text[s.toks[end+1].start:s.toks[len(s.toks)-1].end])
		}
		if end+2 == len(s.toks) && s.toks[end+1].typ == ast.STRING {
			value = s.toks[end+1].val
		}
		whole.text = "SET @@SESSION." + variable + " = " + sqlString(value)
	default:
		return nil, nil
	}
	return []edit{whole}, nil
}
