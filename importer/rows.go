package importer

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// record is one row of a text file: its fields in the source's column
// order, and where it starts.
type record struct {
	fields []string
	// null marks fields that are null whatever their text (a JSON null, a
	// column the file lacks); nil when the NULL markers decide.
	null []bool
	// exact says the text is the value, never a NULL marker (JSON strings).
	exact bool
	file  string
	line  int64
}

// textRows reads the records of one text file. next returns io.EOF at the
// end, a *RowError for a record that cannot be read (which the import may
// skip), and any other error for a file that cannot be read on.
type textRows interface {
	next() (record, error)
}

// RowError is a row that cannot be imported: where it is and why.
type RowError struct {
	File   string
	Line   int64  // from 1
	Column string // the column whose value did not convert; "" for the row
	Value  string
	Err    error
}

func (e *RowError) Error() string {
	at := fmt.Sprintf("%s line %d", e.File, e.Line)
	if e.Column == "" {
		return fmt.Sprintf("%s: %v", at, e.Err)
	}
	return fmt.Sprintf("%s, column %q: %v", at, e.Column, e.Err)
}

func (e *RowError) Unwrap() error { return e.Err }

// csvRows reads a CSV file with the standard library's reader: RFC 4180
// quoting (a quoted field may hold the delimiter, quotes doubled, line
// breaks), any single-character delimiter, CRLF or LF line ends.
type csvRows struct {
	r    *csv.Reader
	file string
	// mapping[j] is the file's field for source column j, -1 for none;
	// nil when they are the same.
	mapping []int
	width   int // fields per record
}

// newCSVRows starts reading a CSV file. With header, its first record
// names the columns, which are matched to names (the source's columns) by
// name; without, fields are the columns in order.
func newCSVRows(rd io.Reader, file string, delim rune, header bool, names []string) (*csvRows, error) {
	r := csv.NewReader(skipBOM(rd))
	r.Comma = delim
	r.FieldsPerRecord = -1 // a record of another width is a bad row, with its line
	c := &csvRows{r: r, file: file, width: len(names)}
	if !header {
		return c, nil
	}
	first, err := r.Read()
	if err == io.EOF {
		return c, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: read the header: %w", file, err)
	}
	first = columnNames(first)
	c.width = len(first)
	same := len(first) == len(names)
	for j := range names {
		same = same && strings.EqualFold(first[j], names[j])
	}
	if same {
		return c, nil
	}
	c.mapping = make([]int, len(names))
	for j, n := range names {
		c.mapping[j] = -1
		for k, h := range first {
			if strings.EqualFold(h, n) {
				c.mapping[j] = k
			}
		}
	}
	for _, h := range first {
		if !containsFold(names, h) {
			return nil, fmt.Errorf("%s: its header has column %q, which the first file has not", file, h)
		}
	}
	return c, nil
}

func (c *csvRows) next() (record, error) {
	fields, err := c.r.Read()
	if err != nil {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return record{}, &RowError{File: c.file, Line: int64(pe.StartLine), Err: pe.Err}
		}
		return record{}, err
	}
	line, _ := c.r.FieldPos(0)
	if len(fields) != c.width {
		if len(fields) == 1 && fields[0] == "" {
			return c.next() // an empty line
		}
		return record{}, &RowError{File: c.file, Line: int64(line), Err: fmt.Errorf("%d fields, expected %d", len(fields), c.width)}
	}
	rec := record{fields: fields, file: c.file, line: int64(line)}
	if c.mapping != nil {
		rec.fields = make([]string, len(c.mapping))
		rec.null = make([]bool, len(c.mapping))
		for j, k := range c.mapping {
			if k < 0 {
				rec.null[j] = true
			} else {
				rec.fields[j] = fields[k]
			}
		}
	}
	return rec, nil
}

// jsonRows reads JSON lines: one object per line, its keys the columns.
type jsonRows struct {
	sc    *bufio.Scanner
	file  string
	names []string
	line  int64
}

func newJSONRows(rd io.Reader, file string, names []string) *jsonRows {
	sc := bufio.NewScanner(skipBOM(rd))
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20)
	return &jsonRows{sc: sc, file: file, names: names}
}

func (j *jsonRows) next() (record, error) {
	for j.sc.Scan() {
		j.line++
		line := bytes.TrimSpace(j.sc.Bytes())
		if len(line) == 0 {
			continue
		}
		keys, vals, err := jsonObject(line)
		if err != nil {
			return record{}, &RowError{File: j.file, Line: j.line, Err: err}
		}
		rec := record{fields: make([]string, len(j.names)), null: make([]bool, len(j.names)), exact: true, file: j.file, line: j.line}
		for i := range rec.null {
			rec.null[i] = true
		}
		for k, key := range keys {
			at := indexFold(j.names, key)
			if at < 0 {
				return record{}, &RowError{File: j.file, Line: j.line, Err: fmt.Errorf("key %q is not a column of the import (the columns come from the first lines)", key)}
			}
			if vals[k].null {
				continue
			}
			rec.fields[at], rec.null[at] = vals[k].text, false
		}
		return rec, nil
	}
	if err := j.sc.Err(); err != nil {
		return record{}, fmt.Errorf("%s line %d: %w", j.file, j.line+1, err)
	}
	return record{}, io.EOF
}

// jsonValue is a value of a JSON object as text: a string's contents, a
// number's or a boolean's literal, an array's or object's JSON.
type jsonValue struct {
	text string
	null bool
	str  bool // a JSON string
}

// jsonObject splits a JSON object into its keys, in order, and values.
func jsonObject(line []byte) ([]string, []jsonValue, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, nil, errors.New("not a JSON object")
	}
	var keys []string
	var vals []jsonValue
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, fmt.Errorf("not JSON: %w", err)
		}
		key, _ := tok.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("not JSON: %w", err)
		}
		v := jsonValue{text: string(raw)}
		switch {
		case string(raw) == "null":
			v.null = true
		case raw[0] == '"':
			if err := json.Unmarshal(raw, &v.text); err != nil {
				return nil, nil, fmt.Errorf("not JSON: %w", err)
			}
			v.str = true
		}
		keys = append(keys, key)
		vals = append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if dec.More() {
		return nil, nil, errors.New("more than one JSON value on the line")
	}
	return keys, vals, nil
}

// skipBOM drops a UTF-8 byte order mark at the start of rd.
func skipBOM(rd io.Reader) io.Reader {
	br := bufio.NewReaderSize(rd, 1<<20)
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte{0xEF, 0xBB, 0xBF}) {
		br.Discard(3)
	}
	return br
}

func indexFold(names []string, s string) int {
	for i, n := range names {
		if strings.EqualFold(n, s) {
			return i
		}
	}
	return -1
}

func containsFold(names []string, s string) bool { return indexFold(names, s) >= 0 }
