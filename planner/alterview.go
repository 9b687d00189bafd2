package planner

// AlterViewMarker follows CREATE OR REPLACE in the text the parser makes of
// MySQL's ALTER VIEW, which go-mysql-server cannot parse. ALTER VIEW is
// CREATE OR REPLACE VIEW of a view that must exist; the engine sees the
// marker in the statement's text and checks that it does.
const AlterViewMarker = "/*icesql:alter-view*/"

// alterView rewrites ALTER [ALGORITHM = a] [DEFINER = d] [SQL SECURITY s]
// VIEW to CREATE OR REPLACE with the same clauses.
func alterView(s statement) ([]edit, error) {
	if !s.word(0, "alter") {
		return nil, nil
	}
	for i := 1; i < len(s.toks); i++ {
		switch {
		case s.word(i, "view"):
			return []edit{{start: s.toks[0].start, end: s.toks[0].end, text: "CREATE OR REPLACE " + AlterViewMarker}}, nil
		case s.word(i, "as"), s.punct(i, '('), s.word(i, "table"), s.word(i, "database"), s.word(i, "schema"):
			return nil, nil
		}
	}
	return nil, nil
}
