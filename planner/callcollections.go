package planner

import "strings"

// sparkCollections returns the text of tokens [first, end) of s with
// Spark's collection literals made MySQL: map('k', 'v', ...) becomes
// JSON_OBJECT('k', 'v', ...) and array(1, 2) JSON_ARRAY(1, 2), which the
// engine turns back into a map and a list for the procedure (a map is how
// expire_snapshots, rewrite_data_files and add_files take options).
func sparkCollections(s statement, first, end int) string {
	var b strings.Builder
	from := s.toks[first].start
	for i := first; i < end; i++ {
		t := s.toks[i]
		var with string
		switch {
		case t.is("map") && s.punct(i+1, '('):
			with = "JSON_OBJECT"
		case t.is("array") && s.punct(i+1, '('):
			with = "JSON_ARRAY"
		default:
			continue
		}
		b.WriteString(s.text[from:t.start])
		b.WriteString(with)
		from = t.end
	}
	b.WriteString(s.text[from:s.toks[end-1].end])
	return b.String()
}
