package sqltests

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// This file turns a script's text into records; nothing here touches the
// database.

type kind int

const (
	kindStatement kind = iota
	kindQuery
	kindHashThreshold
	kindHalt
	kindLet // logictest_let.go
)

type sortMode int

const (
	noSort sortMode = iota
	rowSort
	valueSort
)

type condition struct {
	only   bool // onlyif; otherwise skipif
	engine string
}

// errorPattern is what a "statement error" or "query error" expects.
type errorPattern struct {
	number int            // 0: any
	re     *regexp.Regexp // nil: any
}

type record struct {
	kind  kind
	line  int // line of the statement/query/... directive
	conds []condition
	sql   string

	wantErr   bool
	errPat    errorPattern
	wantCount int64
	hasCount  bool

	types    string
	sort     sortMode
	label    string
	expected []string // lines after ----

	threshold int
}

// isThisEngine reports whether skipif/onlyif name this runner: icesql
// answers as itself and as MySQL.
func isThisEngine(name string) bool { return name == "icesql" || name == "mysql" }

func (rec *record) runsHere() bool {
	for _, c := range rec.conds {
		if isThisEngine(c.engine) != c.only {
			return false
		}
	}
	return true
}

type parseError struct {
	line int
	msg  string
}

func isBlank(s string) bool { return strings.TrimSpace(s) == "" }

func isComment(s string) bool { return strings.HasPrefix(strings.TrimSpace(s), "#") }

// parse splits a script into records. A malformed record is reported and
// skipped; the rest of the script still runs.
func parse(script string) ([]*record, []parseError) {
	lines := strings.Split(strings.ReplaceAll(script, "\r\n", "\n"), "\n")
	var (
		records []*record
		errs    []parseError
	)
	i := 0
	// skipRecord moves i past the rest of the current record.
	skipRecord := func() {
		for i < len(lines) && !isBlank(lines[i]) {
			i++
		}
	}
	for i < len(lines) {
		if isBlank(lines[i]) || isComment(lines[i]) {
			i++
			continue
		}
		rec := &record{}
		for i < len(lines) && !isBlank(lines[i]) {
			if isComment(lines[i]) {
				i++
				continue
			}
			// SQLite's files may end a condition with "# reason".
			cond, _, _ := strings.Cut(lines[i], "#")
			f := strings.Fields(cond)
			if len(f) == 0 || (f[0] != "skipif" && f[0] != "onlyif") {
				break
			}
			if len(f) != 2 {
				errs = append(errs, parseError{i + 1, fmt.Sprintf("%s needs one engine name: %q", f[0], lines[i])})
			} else {
				rec.conds = append(rec.conds, condition{only: f[0] == "onlyif", engine: strings.ToLower(f[1])})
			}
			i++
		}
		if i >= len(lines) || isBlank(lines[i]) {
			if len(rec.conds) > 0 {
				errs = append(errs, parseError{i, "skipif/onlyif not followed by a record"})
			}
			continue
		}
		rec.line = i + 1
		header := strings.TrimSpace(lines[i])
		f := strings.Fields(header)
		i++
		var err error
		switch f[0] {
		case "statement":
			rec.kind = kindStatement
			err = rec.parseStatementHeader(header, f)
			rec.sql = readSQL(lines, &i, false)
			skipRecord()
		case "query":
			rec.kind = kindQuery
			err = rec.parseQueryHeader(header, f)
			rec.sql = readSQL(lines, &i, true)
			if i < len(lines) && strings.TrimSpace(lines[i]) == "----" {
				i++
				for i < len(lines) && !isBlank(lines[i]) {
					rec.expected = append(rec.expected, lines[i])
					i++
				}
			}
		case "hash-threshold":
			rec.kind = kindHashThreshold
			if len(f) != 2 {
				err = fmt.Errorf("hash-threshold needs one number: %q", header)
			} else if rec.threshold, err = strconv.Atoi(f[1]); err != nil || rec.threshold < 0 {
				err = fmt.Errorf("hash-threshold needs a number ≥ 0: %q", header)
			}
			skipRecord()
		case "let":
			rec.kind = kindLet
			err = rec.parseLetHeader(header, f)
			rec.sql = readSQL(lines, &i, false)
			skipRecord()
		case "halt":
			rec.kind = kindHalt
			skipRecord()
		default:
			err = fmt.Errorf("unknown record type %q", f[0])
			skipRecord()
		}
		if err == nil && (rec.kind == kindStatement || rec.kind == kindQuery || rec.kind == kindLet) && rec.sql == "" {
			err = errors.New("record has no SQL")
		}
		if err != nil {
			errs = append(errs, parseError{rec.line, err.Error()})
			continue
		}
		records = append(records, rec)
	}
	return records, errs
}

// readSQL collects SQL lines up to a blank line (or "----" for queries),
// dropping comment lines and one trailing semicolon.
func readSQL(lines []string, i *int, query bool) string {
	var sqlLines []string
	for *i < len(lines) && !isBlank(lines[*i]) {
		l := lines[*i]
		if query && strings.TrimSpace(l) == "----" {
			break
		}
		*i++
		if isComment(l) {
			continue
		}
		sqlLines = append(sqlLines, l)
	}
	s := strings.TrimSpace(strings.Join(sqlLines, "\n"))
	return strings.TrimSpace(strings.TrimSuffix(s, ";"))
}

func (rec *record) parseStatementHeader(header string, f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("statement needs ok, error or count: %q", header)
	}
	switch f[1] {
	case "ok":
		if len(f) > 2 {
			return fmt.Errorf("unexpected words after statement ok: %q", header)
		}
	case "error":
		rec.wantErr = true
		p, err := parseErrorPattern(afterWords(header, 2))
		if err != nil {
			return err
		}
		rec.errPat = p
	case "count":
		if len(f) != 3 {
			return fmt.Errorf("statement count needs one number: %q", header)
		}
		n, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return fmt.Errorf("statement count needs a number: %q", header)
		}
		rec.wantCount, rec.hasCount = n, true
	default:
		return fmt.Errorf("statement needs ok, error or count: %q", header)
	}
	return nil
}

func (rec *record) parseQueryHeader(header string, f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("query needs column types or error: %q", header)
	}
	if f[1] == "error" {
		rec.wantErr = true
		p, err := parseErrorPattern(afterWords(header, 2))
		if err != nil {
			return err
		}
		rec.errPat = p
		return nil
	}
	rec.types = f[1]
	for _, opt := range f[2:] {
		switch opt {
		case "nosort":
			rec.sort = noSort
		case "rowsort":
			rec.sort = rowSort
		case "valuesort":
			rec.sort = valueSort
		default:
			if rec.label != "" {
				return fmt.Errorf("query has two labels (%s, %s): %q", rec.label, opt, header)
			}
			rec.label = opt
		}
	}
	return nil
}

// afterWords returns s without its first n whitespace-separated words.
func afterWords(s string, n int) string {
	s = strings.TrimSpace(s)
	for range n {
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return ""
		}
		s = strings.TrimSpace(s[j:])
	}
	return s
}

func parseErrorPattern(s string) (errorPattern, error) {
	var p errorPattern
	if s == "" {
		return p, nil
	}
	word, rest, _ := strings.Cut(s, " ")
	if n, err := strconv.Atoi(word); err == nil && n > 0 {
		p.number = n
		s = strings.TrimSpace(rest)
	}
	if s != "" {
		re, err := regexp.Compile("(?i)" + s)
		if err != nil {
			return p, fmt.Errorf("bad error pattern %q: %v", s, err)
		}
		p.re = re
	}
	return p, nil
}
