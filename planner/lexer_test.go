package planner

import (
	"slices"
	"testing"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// TestLexerSpans checks that each token's span is exactly its text, also
// where the vitess Tokenizer reads ahead (FOR, NOT, adjacent strings, line
// comments) and for executable comments.
func TestLexerSpans(t *testing.T) {
	tests := []struct {
		text string
		opts ast.ParserOptions
		want []string
	}{
		{
			text: "SELECT a FROM t FOR UPDATE",
			want: []string{"SELECT", "a", "FROM", "t", "FOR", "UPDATE"},
		},
		{
			text: "x NOT  IN (1) AND y IS NOT NULL",
			want: []string{"x", "NOT", "IN", "(", "1", ")", "AND", "y", "IS", "NOT", "NULL"},
		},
		{
			text: "SELECT 'a' 'b' , \"c\"\t-- line\n/* block */ `ice``sql`.t;",
			want: []string{"SELECT", "'a' 'b'", ",", `"c"`, "-- line", "/* block */", "`ice``sql`", ".", "t", ";"},
		},
		{
			text: "CREATE TABLE t (a INT) /*!50100 PARTITION BY HASH(a) */ x",
			want: []string{"CREATE", "TABLE", "t", "(", "a", "INT", ")", "/*!50100 PARTITION BY HASH(a) */", "x"},
		},
		{
			text: `SELECT "a" FROM "t"`,
			opts: ast.ParserOptions{AnsiQuotes: true},
			want: []string{"SELECT", `"a"`, "FROM", `"t"`},
		},
	}
	for _, tt := range tests {
		l := newLexer(tt.text, tt.opts)
		var got []string
		for tok := l.next(); tok.typ != 0; tok = l.next() {
			got = append(got, tt.text[tok.start:tok.end])
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("tokens of %q:\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}

func TestLexerQuotedIdentifiers(t *testing.T) {
	s := lexStatement("CREATE `namespace` x", ast.ParserOptions{})
	if s.word(1, "namespace") {
		t.Error("a quoted identifier matched a keyword")
	}
	if !s.name(1) || s.toks[1].val != "namespace" {
		t.Errorf("quoted identifier: got %+v", s.toks[1])
	}
}
