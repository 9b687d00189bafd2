package importer

import (
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
)

// HeaderMode says whether a CSV file's first line names its columns.
type HeaderMode int

const (
	HeaderAuto HeaderMode = iota // decided from the sample (hasHeader)
	HeaderYes
	HeaderNo
)

// DefaultNulls are the texts read as NULL unless Options.Nulls says others.
var DefaultNulls = []string{"", `\N`, "NULL", "null"}

// Options say how to read the files.
type Options struct {
	Format    Format     // "" to tell from the file names
	Delimiter rune       // CSV field delimiter; 0 to sniff
	Header    HeaderMode // CSV
	Nulls     []string   // texts read as NULL; nil for DefaultNulls
	// SampleRows is how many rows of text inference reads (0: 10,000).
	SampleRows int
}

// Source is the files to import and what inference found in them.
type Source struct {
	fsys    FS
	files   []FileInfo
	format  Format
	opts    Options
	columns []Column
	delim   rune
	header  bool
	nulls   map[string]bool
	// pq is the Arrow schema of Parquet files.
	pq *arrow.Schema
}

// Open lists the files at location and infers their columns.
func Open(ctx context.Context, fsys FS, location string, opts Options) (*Source, error) {
	files, format, err := listFiles(ctx, fsys, location, opts.Format)
	if err != nil {
		return nil, err
	}
	if opts.SampleRows <= 0 {
		opts.SampleRows = 10_000
	}
	if opts.Nulls == nil {
		opts.Nulls = DefaultNulls
	}
	s := &Source{fsys: fsys, files: files, format: format, opts: opts, nulls: map[string]bool{}}
	for _, n := range opts.Nulls {
		s.nulls[n] = true
	}
	switch format {
	case CSV:
		err = s.inferCSV(ctx)
	case JSONL:
		err = s.inferJSON(ctx)
	case Parquet:
		err = s.inferParquet(ctx)
	default:
		err = fmt.Errorf("unknown format %q: csv, parquet or jsonl", format)
	}
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Columns are the columns of the files, with the types inference chose.
func (s *Source) Columns() []Column { return s.columns }

// Format is the files' format.
func (s *Source) Format() Format { return s.format }

// Files is how many files there are.
func (s *Source) Files() int { return len(s.files) }

// Bytes is the files' size.
func (s *Source) Bytes() int64 {
	var n int64
	for _, f := range s.files {
		n += f.Size
	}
	return n
}

// Delimiter is the CSV field delimiter used.
func (s *Source) Delimiter() rune { return s.delim }

// Header says whether CSV files start with a header.
func (s *Source) Header() bool { return s.header }

func (s *Source) isNull(v string) bool { return s.nulls[v] }

// open opens a file for reading text, counting the bytes read from
// storage into counted, and decompressing .gz files.
func (s *Source) open(ctx context.Context, fi FileInfo, counted func(int)) (io.Reader, io.Closer, error) {
	f, err := s.fsys.Open(ctx, fi.Location)
	if err != nil {
		return nil, nil, fmt.Errorf("open %s: %w", fi.Location, err)
	}
	var rd io.Reader = f
	if counted != nil {
		rd = &countingReader{r: f, counted: counted}
	}
	if strings.HasSuffix(strings.ToLower(fi.Location), ".gz") {
		gz, err := gzip.NewReader(rd)
		if err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("%s: %w", fi.Location, err)
		}
		return gz, f, nil
	}
	return rd, f, nil
}

type countingReader struct {
	r       io.Reader
	counted func(int)
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.counted(n)
	return n, err
}

// sampleText reads the first rows of the text files through newRows until
// SampleRows rows were read.
func (s *Source) sampleText(ctx context.Context, newRows func(io.Reader, FileInfo) (textRows, error)) ([]record, error) {
	var out []record
	for _, fi := range s.files {
		if len(out) >= s.opts.SampleRows {
			break
		}
		rd, c, err := s.open(ctx, fi, nil)
		if err != nil {
			return nil, err
		}
		rows, err := newRows(rd, fi)
		for err == nil && len(out) < s.opts.SampleRows {
			var rec record
			rec, err = rows.next()
			var rowErr *RowError
			switch {
			case err == nil:
				rec.fields = append([]string(nil), rec.fields...)
				out = append(out, rec)
			case errors.As(err, &rowErr):
				err = nil // the import reports it where it is
			}
		}
		c.Close()
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	return out, nil
}

// inferCSV finds the delimiter, the header and the column types.
func (s *Source) inferCSV(ctx context.Context) error {
	first := s.files[0]
	rd, c, err := s.open(ctx, first, nil)
	if err != nil {
		return err
	}
	head := make([]byte, 256<<10)
	n, err := io.ReadFull(skipBOM(rd), head)
	c.Close()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("read %s: %w", first.Location, err)
	}
	head = head[:n]
	if strings.TrimSpace(string(head)) == "" {
		return fmt.Errorf("%s is empty: there are no columns to import", first.Location)
	}
	s.delim = s.opts.Delimiter
	if s.delim == 0 {
		if strings.HasSuffix(strings.ToLower(strings.TrimSuffix(first.Location, ".gz")), ".tsv") {
			s.delim = '\t'
		} else {
			s.delim = sniffDelimiter(head)
		}
	}
	// Sample without a header, then decide whether the first record is one.
	sample, err := s.sampleText(ctx, func(rd io.Reader, fi FileInfo) (textRows, error) {
		r, err := newCSVRows(rd, fi.Location, s.delim, false, nil)
		if err != nil {
			return nil, err
		}
		r.width = -1 // any width: the sample finds it
		return widthless{r}, nil
	})
	if err != nil {
		return err
	}
	if len(sample) == 0 {
		return fmt.Errorf("%s has no rows: there are no columns to import", first.Location)
	}
	// The header is decided on the first file's records; with a header,
	// every file's first record is its header, not data.
	var firstFile [][]string
	for _, r := range sample {
		if r.file != first.Location {
			break
		}
		firstFile = append(firstFile, r.fields)
	}
	switch s.opts.Header {
	case HeaderYes:
		s.header = true
	case HeaderAuto:
		s.header = hasHeader(firstFile, s.isNull)
	}
	var names []string
	var rows [][]string
	for i, r := range sample {
		if s.header && (i == 0 || r.file != sample[i-1].file) {
			continue
		}
		rows = append(rows, r.fields)
	}
	if s.header {
		names = columnNames(sample[0].fields)
	} else {
		names = columnNames(make([]string, len(sample[0].fields)))
	}
	guesses := newGuesses(len(names))
	for _, r := range rows {
		if len(r) != len(names) {
			continue // a bad row: reported when it is imported
		}
		for i, v := range r {
			if !s.isNull(v) {
				guesses[i].see(v, false)
			}
		}
	}
	for i, n := range names {
		s.columns = append(s.columns, Column{Name: n, SQLType: guesses[i].kind().SQLType()})
	}
	return nil
}

// widthless reads a CSV file's records whatever their width, for sampling.
type widthless struct{ c *csvRows }

func (w widthless) next() (record, error) {
	fields, err := w.c.r.Read()
	if err != nil {
		return record{}, err
	}
	if len(fields) == 1 && fields[0] == "" {
		return w.next()
	}
	return record{fields: fields, file: w.c.file}, nil
}

// inferJSON finds the columns (keys in order of first appearance) and
// their types.
func (s *Source) inferJSON(ctx context.Context) error {
	var names []string
	var guesses []columnGuess
	read := 0
	for _, fi := range s.files {
		if read >= s.opts.SampleRows {
			break
		}
		rd, c, err := s.open(ctx, fi, nil)
		if err != nil {
			return err
		}
		rows := newJSONRows(rd, fi.Location, nil)
		for ; read < s.opts.SampleRows && rows.sc.Scan(); read++ {
			line := strings.TrimSpace(rows.sc.Text())
			if line == "" {
				continue
			}
			keys, vals, err := jsonObject([]byte(line))
			if err != nil {
				continue // a bad row: reported when it is imported
			}
			for k, key := range keys {
				at := indexFold(names, key)
				if at < 0 {
					names = append(names, key)
					guesses = append(guesses, newGuesses(1)...)
					at = len(names) - 1
				}
				if v := vals[k]; !v.null {
					guesses[at].see(v.text, v.str)
				}
			}
		}
		err = rows.sc.Err()
		c.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", fi.Location, err)
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("%s has no JSON objects: there are no columns to import", s.files[0].Location)
	}
	for i, n := range names {
		s.columns = append(s.columns, Column{Name: n, SQLType: guesses[i].kind().SQLType()})
	}
	return nil
}

// names are the source's column names.
func (s *Source) names() []string {
	out := make([]string, len(s.columns))
	for i, c := range s.columns {
		out[i] = c.Name
	}
	return out
}

// textRows opens a text file's records.
func (s *Source) textRows(rd io.Reader, fi FileInfo) (textRows, error) {
	if s.format == JSONL {
		return newJSONRows(rd, fi.Location, s.names()), nil
	}
	return newCSVRows(rd, fi.Location, s.delim, s.header, s.names())
}
