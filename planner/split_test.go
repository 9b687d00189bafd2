package planner

import (
	"slices"
	"strings"
	"testing"
)

func TestSplitStatements(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"", nil},
		{" ; ;; -- only a comment\n", nil},
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1;SELECT 2;", []string{"SELECT 1", "SELECT 2"}},
		{
			"CREATE NAMESPACE a;\n-- next\nUSE icesql.a;\n\nSELECT 'x;y', `a;b`, \"c;d\" /* ; */ FROM t; # done\n",
			[]string{"CREATE NAMESPACE a", "-- next\nUSE icesql.a", "SELECT 'x;y', `a;b`, \"c;d\" /* ; */ FROM t"},
		},
		{"SELECT 'it''s; ok'; SELECT '\\'; still'", []string{"SELECT 'it''s; ok'", "SELECT '\\'; still'"}},
		{"SELECT 1 /*!40101 ; */; SELECT 2", []string{"SELECT 1 /*!40101 ; */", "SELECT 2"}},
	}
	for _, tt := range tests {
		got, err := SplitStatements(tt.text)
		if err != nil {
			t.Errorf("SplitStatements(%q): %v", tt.text, err)
			continue
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("SplitStatements(%q):\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}

func TestSplitStatementsUnterminated(t *testing.T) {
	tests := []struct{ text, want string }{
		{"SELECT 1;\nSELECT 'abc; SELECT 2", "unterminated string starting on line 2"},
		{"SELECT `abc; SELECT 2", "unterminated quoted identifier starting on line 1"},
		{"SELECT 1;\n\nSELECT 2 /* no end; SELECT 3", "unterminated comment starting on line 3"},
	}
	for _, tt := range tests {
		_, err := SplitStatements(tt.text)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("SplitStatements(%q) error = %v, want %q", tt.text, err, tt.want)
		}
	}
}
