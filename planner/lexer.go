package planner

import (
	"slices"
	"strings"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// token is one token of the vitess lexer together with the bytes it spans in
// the text, so that a rewrite can replace exactly those bytes.
type token struct {
	typ    int    // vitess token id: ast.ID, ast.STRING, a keyword id, or a character such as '('
	val    string // as the lexer decodes it: identifiers unquoted, strings unescaped
	start  int    // byte offsets in the statement text; text[start:end] is the token as written
	end    int
	quoted bool // an identifier written in quotes, which is never a keyword
}

// is reports whether t is the unquoted word w (a keyword or an identifier),
// in any letter case.
func (t token) is(w string) bool {
	return !t.quoted && t.isName() && strings.EqualFold(t.val, w)
}

// isName reports whether t can be a name: an identifier or a keyword, since
// vitess lexes many valid names (status, data, location, …) as keywords.
func (t token) isName() bool {
	return t.typ == ast.ID || ast.KeywordString(t.typ) != ""
}

// lexer turns text into tokens with their offsets. The vitess Tokenizer
// reports only where it stopped reading, so the start of a token is found by
// skipping the blanks after the previous token, exactly as Scan does.
type lexer struct {
	tkn  *ast.Tokenizer
	text string
	end  int // end of the previous token
}

func newLexer(text string, opts ast.ParserOptions) *lexer {
	tkn := ast.NewStringTokenizer(text)
	if opts.AnsiQuotes {
		tkn = ast.NewStringTokenizerForAnsiQuotes(text)
	}
	tkn.PipesAsConcat = opts.PipesAsConcat
	// An executable comment (/*! … */) stays one opaque COMMENT token: its
	// inner tokens carry positions relative to the comment, and nothing
	// inside a comment is ever rewritten.
	tkn.SkipSpecialComments = true
	return &lexer{tkn: tkn, text: text}
}

// next returns the next token, or a token with typ 0 at the end of the text.
func (l *lexer) next() token {
	typ, val := l.tkn.Scan()
	if typ == 0 {
		return token{start: len(l.text), end: len(l.text)}
	}
	start := l.end
	for start < len(l.text) && isBlank(l.text[start]) {
		start++
	}
	// Position is one past the lexer's look-ahead character.
	end := l.tkn.Position - 1
	if typ == ast.FOR || typ == ast.NOT {
		// These two keywords make Scan read the following token ahead (to
		// find FOR SYSTEM_TIME or NOT ENFORCED), so Position is already past
		// it. A lone keyword is as long as its value.
		end = start + len(val)
	}
	// Strings read ahead over blanks looking for an adjacent string to
	// concatenate, and line comments keep their newline.
	for end > start && isBlank(l.text[end-1]) {
		end--
	}
	l.end = end
	quoted := typ == ast.ID && start < end && (l.text[start] == '`' || l.text[start] == '"')
	return token{typ: typ, val: string(val), start: start, end: end, quoted: quoted}
}

// isBlank matches the characters the vitess Tokenizer skips between tokens.
func isBlank(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// statementEnd returns the offset of the first top-level ';' in text, or
// len(text) if there is none.
func statementEnd(text string, opts ast.ParserOptions) int {
	l := newLexer(text, opts)
	for {
		t := l.next()
		if t.typ == 0 || t.typ == ';' {
			return t.start
		}
	}
}

// statement is one statement's text and its tokens. Comments are left out of
// toks: they may stand between any two tokens and never change the meaning,
// and since edits address byte spans they stay in the text untouched.
type statement struct {
	text     string
	toks     []token
	comments []token
}

func lexStatement(text string, opts ast.ParserOptions) statement {
	l := newLexer(text, opts)
	s := statement{text: text}
	for {
		t := l.next()
		if t.typ == 0 {
			return s
		}
		if t.typ == ast.COMMENT {
			s.comments = append(s.comments, t)
		} else {
			s.toks = append(s.toks, t)
		}
	}
}

// word reports whether token i exists and is the unquoted word w.
func (s statement) word(i int, w string) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].is(w)
}

// punct reports whether token i exists and is the character c.
func (s statement) punct(i int, c byte) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].typ == int(c)
}

// name reports whether token i exists and can be a name.
func (s statement) name(i int) bool {
	return i >= 0 && i < len(s.toks) && s.toks[i].isName()
}

// skipName returns the index after the dotted name starting at i, or i if no
// name starts there.
func (s statement) skipName(i int) int {
	if !s.name(i) {
		return i
	}
	for s.punct(i+1, '.') && s.name(i+2) {
		i += 2
	}
	return i + 1
}

// closing returns the index of the ')' that closes the '(' at i, or -1.
func (s statement) closing(i int) int {
	depth := 0
	for j := i; j < len(s.toks); j++ {
		switch s.toks[j].typ {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

// createTableName returns the index of the table name in
// CREATE [TEMPORARY] TABLE [IF NOT EXISTS] name, or -1 for other statements.
func (s statement) createTableName() int {
	i := 1
	if !s.word(0, "create") {
		return -1
	}
	if s.word(i, "temporary") {
		i++
	}
	if !s.word(i, "table") {
		return -1
	}
	i++
	if s.word(i, "if") && s.word(i+1, "not") && s.word(i+2, "exists") {
		i += 3
	}
	return i
}

// alterTableEnd returns the index after the table name in
// ALTER [IGNORE] TABLE name, or -1 for other statements.
func (s statement) alterTableEnd() int {
	i := 1
	if !s.word(0, "alter") {
		return -1
	}
	if s.word(i, "ignore") {
		i++
	}
	if !s.word(i, "table") {
		return -1
	}
	return s.skipName(i + 1)
}

// edit replaces text[start:end] with text; start == end inserts.
type edit struct {
	start, end int
	text       string
}

// applyEdits applies edits, which must not overlap. An insertion sorts before
// a replacement that starts at the same offset.
func applyEdits(text string, edits []edit) string {
	slices.SortFunc(edits, func(a, b edit) int {
		if a.start != b.start {
			return a.start - b.start
		}
		return a.end - b.end
	})
	var b strings.Builder
	at := 0
	for _, e := range edits {
		b.WriteString(text[at:e.start])
		b.WriteString(e.text)
		at = e.end
	}
	b.WriteString(text[at:])
	return b.String()
}

// removal deletes the tokens first..last together with the blanks before them,
// so that removing a clause leaves no blank lines or double spaces behind,
// except for the newline that ends a line comment.
func (s statement) removal(first, last int) edit {
	start := s.toks[first].start
	for start > 0 && isBlank(s.text[start-1]) {
		start--
	}
	for _, c := range s.comments {
		if c.end == start && !strings.HasPrefix(s.text[c.start:], "/*") {
			start += strings.IndexByte(s.text[start:], '\n') + 1
		}
	}
	return edit{start: start, end: s.toks[last].end}
}
