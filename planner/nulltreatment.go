package planner

// nullTreatment handles MySQL 8's null treatment and FROM FIRST/FROM LAST
// of the window functions, which the vitess grammar lacks:
// NTH_VALUE(x, 2) FROM FIRST RESPECT NULLS OVER (...). MySQL accepts only
// the defaults, FROM FIRST and RESPECT NULLS (of NTH_VALUE; RESPECT NULLS
// also of FIRST_VALUE, LAST_VALUE, LEAD and LAG), which say what the
// function does anyway and are dropped; it refuses FROM LAST and IGNORE
// NULLS with ER_NOT_SUPPORTED_YET (1235), and so does icesql.
func nullTreatment(s statement) ([]edit, error) {
	var edits []edit
	for i := 0; i+1 < len(s.toks); i++ {
		nth := s.word(i, "nth_value")
		if !nth && !s.word(i, "first_value") && !s.word(i, "last_value") && !s.word(i, "lead") && !s.word(i, "lag") || !s.punct(i+1, '(') {
			continue
		}
		j := s.closing(i + 1)
		if j < 0 {
			return nil, nil
		}
		// The clauses are the function's only when OVER follows them: a
		// table may be named first (NTH_VALUE(x, 2) FROM first).
		next, fromFirst, respect := j+1, -1, -1
		fromLast, ignore := false, false
		if nth && s.word(next, "from") && (s.word(next+1, "first") || s.word(next+1, "last")) {
			fromFirst, fromLast = next, s.word(next+1, "last")
			next += 2
		}
		if (s.word(next, "respect") || s.word(next, "ignore")) && s.word(next+1, "nulls") {
			respect, ignore = next, s.word(next, "ignore")
			next += 2
		}
		if !s.word(next, "over") {
			continue
		}
		switch {
		case fromLast:
			return nil, notSupported("This version of MySQL doesn't yet support 'FROM LAST'")
		case ignore:
			return nil, notSupported("This version of MySQL doesn't yet support 'IGNORE NULLS'")
		}
		if fromFirst >= 0 {
			edits = append(edits, s.removal(fromFirst, fromFirst+1))
		}
		if respect >= 0 {
			edits = append(edits, s.removal(respect, respect+1))
		}
		i = j
	}
	return edits, nil
}
