package planner

import ast "github.com/dolthub/vitess/go/vt/sqlparser"

// forShare rewrites MySQL 8's SELECT ... FOR SHARE, which the vitess
// grammar lacks, to its older spelling LOCK IN SHARE MODE. icesql takes no
// locks (a locking read is validated when its transaction commits), so
// NOWAIT and SKIP LOCKED, which only say what to do about other sessions'
// locks, change nothing and are dropped with it.
func forShare(s statement) ([]edit, error) {
	var edits []edit
	for i := 0; i+1 < len(s.toks); i++ {
		if s.toks[i].typ != ast.FOR || !s.word(i+1, "share") {
			continue
		}
		end := i + 1
		switch {
		case s.word(end+1, "nowait"):
			end++
		case s.word(end+1, "skip") && s.word(end+2, "locked"):
			end += 2
		}
		edits = append(edits, edit{start: s.toks[i].start, end: s.toks[end].end, text: "LOCK IN SHARE MODE"})
		i = end
	}
	return edits, nil
}
