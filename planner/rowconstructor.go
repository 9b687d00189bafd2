package planner

// rowConstructors drops the keyword of MySQL's row constructor in
// expressions, ROW(a, b) = ROW(1, 2) and (a, b) IN (ROW(1, 2), ROW(3, 4)),
// which means the same as the parenthesized list and which the vitess
// grammar reads only after VALUES (MySQL's table value constructor,
// VALUES ROW(1, 2), ROW(3, 4), which go-mysql-server runs as it is and
// which is left alone).
func rowConstructors(s statement) ([]edit, error) {
	var edits []edit
	for i := 0; i+1 < len(s.toks); i++ {
		if s.word(i, "values") {
			// Skip the rows of a table value constructor.
			for s.word(i+1, "row") && s.punct(i+2, '(') {
				j := s.closing(i + 2)
				if j < 0 {
					return nil, nil
				}
				i = j
				if !s.punct(i+1, ',') {
					break
				}
				i++
			}
			continue
		}
		if s.word(i, "row") && s.punct(i+1, '(') {
			edits = append(edits, edit{start: s.toks[i].start, end: s.toks[i].end})
		}
	}
	return edits, nil
}
