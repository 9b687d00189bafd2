package regexlimit

import (
	"errors"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		pattern, text string
		want          error
	}{
		{"(a+)+b", strings.Repeat("a", 32), ErrTimeout},
		{"(a+)+b", strings.Repeat("a", 32) + "b", nil},
		{"^[a-z]+$", "hello", nil},
		{"a", "bbb", nil},
		{"(", "x", nil}, // invalid: the caller's compilation says so
		{"x", "", nil},
	} {
		if got := Check(c.pattern, c.text, 0, 32, 8000000); !errors.Is(got, c.want) {
			t.Errorf("Check(%q, %q) = %v, want %v", c.pattern, c.text, got, c.want)
		}
	}
	// Without a time limit the same search would run for hours; a stack
	// limit alone does not stop it, but a deep backtrack overflows it.
	if got := Check("(a|b)*c", strings.Repeat("ab", 100000), 0, 0, 1000); !errors.Is(got, ErrStackOverflow) {
		t.Errorf("deep backtrack under a 1000-byte stack: %v, want %v", got, ErrStackOverflow)
	}
}
