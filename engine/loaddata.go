package engine

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/engine/internal/vecexec"
)

// LOAD DATA into an Iceberg table, in bulk. go-mysql-server runs LOAD DATA
// row by row: a text literal per field, an INSERT's conversion and checks
// per row, and for LOCAL (which implies IGNORE) a checkpoint per row;
// about 40k rows a second. loadBuilder runs the same statement straight
// into the Arrow builders of the table's Parquet writer (bulkLoads, an
// analyzer rule, puts it in place of the INSERT). It keeps go-mysql-
// server's semantics by construction: the options are the ones its plan
// parsed, fields are split as its loadDataIter splits them, and a value
// the fast conversions below do not take in canonical form goes through
// the column type's own Convert, with the INSERT's IGNORE rules. What it
// does not handle (SET, user variables, REPLACE, CHECK constraints,
// defaults that are expressions, tables that are not Iceberg tables) stays
// on go-mysql-server's path, as does everything when icesql_vectorize is
// OFF, which is how the differential test gets the row path's answer.

// bulkLoadID is the id of bulkLoads, apart from rules.go's list.
const bulkLoadID analyzer.RuleId = 1200

// bulkLoads replaces the INSERT a LOAD DATA plans with a bulkLoadNode when
// the bulk path handles it.
func bulkLoads(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if !vecexec.VectorizeOn(ctx) {
		return n, transform.SameTree, nil
	}
	return transform.Node(ctx, n, func(ctx *sql.Context, n sql.Node) (sql.Node, transform.TreeIdentity, error) {
		ii, ok := n.(*plan.InsertInto)
		if !ok {
			return n, transform.SameTree, nil
		}
		if _, ok := newBulkLoad(ctx, ii); !ok {
			return n, transform.SameTree, nil
		}
		return &bulkLoadNode{ii: ii}, transform.NewTree, nil
	})
}

// bulkLoadNode runs a LOAD DATA on the bulk path.
type bulkLoadNode struct {
	ii *plan.InsertInto
}

var _ sql.ExecSourceRel = (*bulkLoadNode)(nil)

func (n *bulkLoadNode) Resolved() bool                 { return true }
func (n *bulkLoadNode) IsReadOnly() bool               { return false }
func (n *bulkLoadNode) String() string                 { return "BulkLoad(" + n.ii.String() + ")" }
func (n *bulkLoadNode) Children() []sql.Node           { return nil }
func (n *bulkLoadNode) Schema(*sql.Context) sql.Schema { return types.OkResultSchema }
func (n *bulkLoadNode) WithChildren(_ *sql.Context, children ...sql.Node) (sql.Node, error) {
	if len(children) != 0 {
		return nil, sql.ErrInvalidChildrenNumber.New(n, len(children), 0)
	}
	return n, nil
}

// RowIter implements sql.ExecSourceRel: it loads the file.
func (n *bulkLoadNode) RowIter(ctx *sql.Context, _ sql.Row) (sql.RowIter, error) {
	l, ok := newBulkLoad(ctx, n.ii)
	if !ok {
		return nil, fmt.Errorf("LOAD DATA into %s: the bulk path no longer applies", n.ii.Destination)
	}
	affected, err := l.run(ctx)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(sql.NewRow(types.NewOkResult(int(affected)))), nil
}

// bulkLoad is one LOAD DATA statement on the bulk path.
type bulkLoad struct {
	ld     *plan.LoadData
	ignore bool
	ins    *inserter
	cols   sql.Schema
	// field is the line's field that column i takes, -1 for none;
	// missing is column i's value when the line has no such field.
	field   []int
	missing []any
}

// newBulkLoad returns the bulk load of ii, or false when ii is not a LOAD
// DATA the bulk path handles.
func newBulkLoad(ctx *sql.Context, ii *plan.InsertInto) (*bulkLoad, bool) {
	// The analyzer puts a projection onto the table's columns above the
	// LoadData: a column takes a field (GetField) or its default.
	var ld *plan.LoadData
	var proj []sql.Expression
	switch src := ii.Source.(type) {
	case *plan.LoadData:
		ld = src
	case *plan.Project:
		ld, _ = src.Child.(*plan.LoadData)
		proj = src.Projections
	}
	if ld == nil || ii.IsReplace || ii.OnDupExprs.HasUpdates() || len(ii.Returning) > 0 || len(ii.Checks()) > 0 {
		return nil, false
	}
	for _, e := range ld.SetExprs {
		if e != nil {
			return nil, false
		}
	}
	for _, v := range ld.UserVars {
		if v != nil {
			return nil, false
		}
	}
	if cs := strings.ToLower(ld.Charset); cs != "" && cs != "binary" && !strings.HasPrefix(cs, "utf8") {
		return nil, false
	}
	cols := ii.Destination.Schema(ctx)
	if proj != nil && (len(proj) != len(cols) || len(ld.ColNames) > 0) {
		return nil, false
	}
	for _, name := range ld.ColNames {
		if cols.IndexOfColName(name) < 0 {
			return nil, false
		}
	}
	l := &bulkLoad{ld: ld, ignore: ii.Ignore || ld.IsIgnore, cols: cols, field: make([]int, len(cols)), missing: make([]any, len(cols))}
	for i, c := range cols {
		if c.AutoIncrement || c.Generated != nil {
			return nil, false
		}
		// A field the line lacks is the column's default, or the type's
		// zero value for a NOT NULL column (loadDataIter).
		var ok bool
		if l.missing[i], ok = literalDefault(ctx, c.Default); !ok {
			return nil, false
		}
		if !c.Nullable {
			l.missing[i] = c.Type.Zero()
		}
		l.field[i] = i
		if len(ld.ColNames) > 0 {
			// A column list: field k is column ColNames[k]; the columns
			// it leaves out take their defaults.
			l.field[i] = -1
			for k, name := range ld.ColNames {
				if strings.EqualFold(name, c.Name) {
					l.field[i] = k
				}
			}
			if l.field[i] < 0 && !c.Nullable {
				return nil, false // "Field doesn't have a default value": go-mysql-server's rules
			}
			continue
		}
		if proj == nil {
			continue
		}
		switch e := proj[i].(type) {
		case *expression.GetField:
			l.field[i] = e.Index()
		case *sql.ColumnDefaultValue:
			if !c.Nullable {
				return nil, false // "Field doesn't have a default value": go-mysql-server's rules
			}
			l.field[i] = -1
			if l.missing[i], ok = literalDefault(ctx, e); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
	}
	insertable, err := plan.GetInsertable(ii.Destination)
	if err != nil {
		return nil, false
	}
	var ok bool
	l.ins, ok = insertable.Inserter(ctx).(*inserter)
	return l, ok
}

// literalDefault is the value of a column default that is a literal (nil
// for none); false for an expression.
func literalDefault(ctx *sql.Context, d *sql.ColumnDefaultValue) (any, bool) {
	if d == nil {
		return nil, true
	}
	if !d.IsLiteral() {
		return nil, false
	}
	v, err := d.Eval(ctx, nil)
	return v, err == nil
}

// run loads the file and stages its rows; it returns how many.
func (l *bulkLoad) run(ctx *sql.Context) (int64, error) {
	rd, err := l.open(ctx)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	n, err := l.load(ctx, rd)
	if err == nil {
		err = l.ins.StatementComplete(ctx)
	}
	if err == nil {
		err = l.ins.Close(ctx)
	} else {
		l.ins.DiscardChanges(ctx, err)
		l.ins.Close(ctx)
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// open opens the file: the client's for LOCAL, else a server file, which
// must lie inside the server-side file folder (serverfiles.go).
func (l *bulkLoad) open(ctx *sql.Context) (io.ReadCloser, error) {
	if l.ld.Local {
		if _, on, _ := sql.SystemVariables.GetGlobal("local_infile"); on != int8(1) {
			return nil, mysqlerr.New(mysqlerr.ErClientLocalFilesDisabled,
				"Loading local data is disabled; this must be enabled on both the client and the server side (the server: SET GLOBAL local_infile = 1, or icesql serve without --local-infile=false)")
		}
		return ctx.LoadInfile(l.ld.File)
	}
	if err := serverFileAllowed(serverFilesDir(sessionOf(ctx).e.root), l.ld.File); err != nil { // serverfiles.go
		return nil, err
	}
	f, err := os.Open(l.ld.File)
	if err != nil {
		return nil, sql.ErrLoadDataCannotOpen.New(err.Error())
	}
	return f, nil
}

// LOAD DATA's lines are split and converted on every core. One goroutine
// reads lines (finding a terminator is cheap) into chunks; workers split
// and convert each chunk into an Arrow batch of its own; the statement's
// goroutine takes the chunks in file order, so warnings come out, and the
// first error wins, exactly as on one goroutine. Chunks start small and
// double up to maxChunkLines: a small file is still cut into several, so
// the differential test crosses chunk boundaries too.
const (
	firstChunkLines = 8
	maxChunkLines   = 16 << 10
)

// loadChunk is a run of lines and, once done is closed, what they gave.
type loadChunk struct {
	lines    []string
	rec      arrow.RecordBatch // nil when no line was loaded
	rows     int64
	warnings []*sql.Warning
	err      error // the chunk's first error; its rows are not loaded
	done     chan struct{}
}

// load reads every line of rd into the table's Parquet writer.
func (l *bulkLoad) load(ctx *sql.Context, rd io.Reader) (int64, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 1<<20), int(types.LongTextBlobMax))
	sc.Split(l.ld.SplitLines)
	for skip := l.ld.IgnoreNum; skip > 0 && sc.Scan(); skip-- {
	}
	if err := l.ins.open(ctx); err != nil {
		return 0, err
	}
	schema := l.ins.builder.Schema()
	workers := runtime.GOMAXPROCS(0)
	work := make(chan *loadChunk)
	order := make(chan *loadChunk, 2*workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				l.convertChunk(ctx, schema, c)
				close(c.done)
			}
		}()
	}
	go func() {
		defer func() { close(work); wg.Wait(); close(order) }()
		size := firstChunkLines
		c := &loadChunk{done: make(chan struct{})}
		send := func() bool {
			select {
			case <-quit:
				return false
			default:
			}
			select {
			case order <- c:
			case <-quit:
				return false
			}
			work <- c
			size = min(2*size, maxChunkLines)
			c = &loadChunk{lines: make([]string, 0, size), done: make(chan struct{})}
			return true
		}
		for sc.Scan() {
			c.lines = append(c.lines, sc.Text())
			if len(c.lines) == size && !send() {
				return
			}
		}
		if err := sc.Err(); err != nil {
			c.err = err
		}
		if len(c.lines) > 0 || c.err != nil {
			send()
		}
	}()
	var n int64
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			err = l.take(ctx, c)
			if err == nil {
				n += c.rows
			} else {
				close(quit) // the reader stops; chunks under way drain below
			}
		} else if c.rec != nil {
			c.rec.Release()
		}
	}
	if err != nil {
		return 0, err
	}
	return n, nil
}

// take hands a converted chunk's warnings to the session and its batch to
// the writer, in file order.
func (l *bulkLoad) take(ctx *sql.Context, c *loadChunk) error {
	for _, w := range c.warnings {
		ctx.Session.Warn(w)
	}
	if c.err != nil {
		if c.rec != nil {
			c.rec.Release()
		}
		return c.err
	}
	if err := ctx.Err(); err != nil {
		if c.rec != nil {
			c.rec.Release()
		}
		return err
	}
	if c.rec != nil {
		l.ins.send(ctx, c.rec)
	}
	return l.ins.err
}

// convertChunk splits and converts a chunk's lines into a batch of schema.
func (l *bulkLoad) convertChunk(ctx *sql.Context, schema *arrow.Schema, c *loadChunk) {
	w := &loadWorker{l: l, b: array.NewRecordBuilder(memory.DefaultAllocator, schema), vals: make([]loadValue, len(l.cols))}
	defer w.b.Release()
	w.fast = make([]func(array.Builder, string) bool, len(l.cols))
	for i, col := range l.cols {
		w.fast[i] = fastAppender(col, w.b.Field(i))
	}
	var fields []string
	for _, line := range c.lines {
		var ok bool
		if fields, ok = splitLoadLine(l.ld, line, fields[:0]); !ok {
			continue
		}
		if err := w.appendRow(ctx, fields); err != nil {
			c.err = err
			break
		}
		c.rows++
	}
	c.lines = nil
	c.warnings = w.warnings
	if c.rows > 0 && c.err == nil {
		c.rec = w.b.NewRecordBatch()
	}
}

// loadWorker converts lines into its own Arrow builder; the warnings it
// gives are kept for the statement's goroutine to hand over in order.
type loadWorker struct {
	l    *bulkLoad
	b    *array.RecordBuilder
	vals []loadValue // one line's values, reused
	// fast appends a field in canonical form straight to column i's
	// builder, or reports that it is not canonical; nil for columns that
	// always take the general path.
	fast     []func(b array.Builder, s string) bool
	warnings []*sql.Warning
}

// loadValue is a column's value in a line before conversion: a value
// (set), or the text to convert.
type loadValue struct {
	set  bool
	v    any
	text string
}

// appendRow appends one line's fields, as go-mysql-server's INSERT would
// convert them: NOT NULL first, for every column, then the conversions.
func (w *loadWorker) appendRow(ctx *sql.Context, fields []string) error {
	l := w.l
	for i, col := range l.cols {
		r := loadValue{set: true}
		switch f := l.field[i]; {
		case f < 0 || f >= len(fields):
			r.v = l.missing[i]
		case fields[f] == "NULL", fields[f] == "" && !isStringType(col.Type):
		default:
			r = loadValue{text: fields[f]}
		}
		if r.set && r.v == nil && !col.Nullable {
			err := sql.ErrInsertIntoNonNullableProvidedNull.New(col.Name)
			if !l.ignore {
				return sql.NewWrappedInsertError(loadRow(fields), err)
			}
			r.v = col.Type.Zero()
			w.warnings = append(w.warnings, &sql.Warning{Level: "Note", Code: sql.CastSQLError(err).Num, Message: err.Error()})
		}
		w.vals[i] = r
	}
	for i, col := range l.cols {
		b := w.b.Field(i)
		r := w.vals[i]
		if !r.set {
			if fast := w.fast[i]; fast != nil && fast(b, r.text) {
				continue
			}
			var err error
			if r.v, err = w.convert(ctx, col, r.text, fields); err != nil {
				return err
			}
		}
		if err := sqlval.AppendValue(b, r.v); err != nil {
			return sql.ErrInvalidValue.New(r.v, col.Type.String()+" (column "+col.Name+": "+err.Error()+")")
		}
	}
	return nil
}

// convert is go-mysql-server's INSERT conversion of a text value to col's
// type, with its IGNORE rules: a value that does not convert is an error,
// or under IGNORE the nearest value with a warning.
func (w *loadWorker) convert(ctx *sql.Context, col *sql.Column, s string, fields []string) (any, error) {
	var v any
	var inRange sql.ConvertInRange
	var err error
	if typ, ok := col.Type.(sql.RoundingNumberType); ok {
		v, inRange, err = typ.ConvertRound(ctx, s)
	} else {
		v, inRange, err = col.Type.Convert(ctx, s)
	}
	if err == nil && inRange != sql.InRange {
		err = sql.ErrValueOutOfRange.New(s, col.Type)
	}
	if sql.ErrTruncatedIncorrect.Is(err) {
		err = sql.ErrInvalidValue.New(s, col.Type)
	}
	if err == nil {
		return v, nil
	}
	if !w.l.ignore || col.Type.Type() == sqltypes.TypeJSON {
		if types.ErrLengthBeyondLimit.Is(err) {
			err = types.ErrLengthBeyondLimit.New(s, col.Name)
		}
		return nil, sql.NewWrappedInsertError(loadRow(fields), err)
	}
	switch {
	case sql.IsNumberType(col.Type):
		if v == nil {
			v = col.Type.Zero()
		}
	case types.ErrLengthBeyondLimit.Is(err):
		if st, ok := col.Type.(sql.StringType); ok && int64(len(s)) > st.MaxCharacterLength() {
			v = s[:st.MaxCharacterLength()]
		}
	case types.ErrBadCharsetString.Is(err):
		v = string(types.TruncateInvalidUTF8([]byte(s)))
	default:
		v = col.Type.Zero()
	}
	w.warnings = append(w.warnings, &sql.Warning{Level: "Note", Code: sql.CastSQLError(err).Num, Message: err.Error()})
	return v, nil
}

// loadRow is a line's fields as the row an error names.
func loadRow(fields []string) sql.Row {
	row := make(sql.Row, len(fields))
	for i, f := range fields {
		row[i] = f
	}
	return row
}

func isStringType(t sql.Type) bool {
	_, ok := t.(sql.StringType)
	return ok
}

// splitLoadLine splits a line (its terminator included, as SplitLines
// returns it) into fields exactly as go-mysql-server's loadDataIter does:
// LINES STARTING BY, FIELDS TERMINATED BY, [OPTIONALLY] ENCLOSED BY and
// ESCAPED BY, with \N read as the text NULL. It reports false for a line
// without the LINES STARTING BY prefix, which is skipped.
func splitLoadLine(ld *plan.LoadData, line string, fields []string) ([]string, bool) {
	if ld.LinesStartingBy != "" {
		at := strings.Index(line, ld.LinesStartingBy)
		if at < 0 {
			return fields, false
		}
		line = line[at+len(ld.LinesStartingBy):]
	}
	if line == "" {
		return fields, false
	}
	term, enc, esc := ld.FieldsTerminatedBy, ld.FieldsEnclosedBy, ld.FieldsEscapedBy
	hasTerminator := strings.HasSuffix(line, ld.LinesTerminatedBy)
	if hasTerminator {
		line = line[:len(line)-len(ld.LinesTerminatedBy)]
	}
	hasEnc, hasEsc := enc != "", esc != ""
	if term != "" && (!hasEnc || strings.IndexByte(line, enc[0]) < 0) && (!hasEsc || strings.IndexByte(line, esc[0]) < 0) {
		// No enclosure or escape character: the loop below would only cut
		// at each terminator, left to right; strings.Index does it faster.
		for {
			at := strings.Index(line, term)
			if at < 0 {
				return append(fields, line), true
			}
			fields = append(fields, line[:at])
			line = line[at+len(term):]
		}
	}
	encEqualsEsc := hasEnc && hasEsc && enc == esc
	normalLineTerm := hasTerminator || !encEqualsEsc
	// A field is a slice of line while it needs no rewriting, else built.
	start, plain := 0, true
	var cur strings.Builder
	inEnclosure := false
	fieldLen := func(i int) int {
		if plain {
			return i - start
		}
		return cur.Len()
	}
	// toBuilder switches the current field from a slice of line to cur.
	toBuilder := func(i int) {
		if plain {
			cur.Reset()
			cur.WriteString(line[start:i])
			plain = false
		}
	}
	for i := 0; i < len(line); i++ {
		ch := line[i]
		isEnc := hasEnc && ch == enc[0]
		isEsc := hasEsc && !encEqualsEsc && ch == esc[0]
		switch {
		case isEnc && !inEnclosure && fieldLen(i) == 0:
			inEnclosure = true
			toBuilder(i)
			continue
		case isEnc && inEnclosure && encEqualsEsc && i+1 < len(line) && line[i+1] == enc[0]:
			toBuilder(i)
			cur.WriteByte(enc[0])
			i++
			continue
		case isEnc && inEnclosure:
			followedByTerm := i+1+len(term) <= len(line) && line[i+1:i+1+len(term)] == term
			if followedByTerm || (i+1 >= len(line) && normalLineTerm) {
				inEnclosure = false
				continue
			}
			toBuilder(i)
			cur.WriteByte(ch)
			continue
		case isEsc && i+1 < len(line):
			toBuilder(i)
			i++
			cur.WriteString(unescapeLoad(line[i]))
			continue
		case !inEnclosure && i+len(term) <= len(line) && line[i:i+len(term)] == term:
			if plain {
				fields = append(fields, line[start:i])
			} else {
				fields = append(fields, cur.String())
			}
			i += len(term) - 1
			start, plain = i+1, true
			continue
		}
		if !plain {
			cur.WriteByte(ch)
		}
	}
	last := line[start:]
	if !plain {
		last = cur.String()
	}
	if inEnclosure {
		last = enc[:1] + last
	}
	return append(fields, last), true
}

// unescapeLoad is what an escaped character stands for in LOAD DATA.
func unescapeLoad(c byte) string {
	switch c {
	case 'N':
		return "NULL"
	case 'Z':
		return "\x1a"
	case '0':
		return "\x00"
	case 'n':
		return "\n"
	case 't':
		return "\t"
	case 'r':
		return "\r"
	case 'b':
		return "\b"
	}
	return string([]byte{c})
}

// fastAppender returns a function that appends a field in the canonical
// text form of col's type (the form in which go-mysql-server's Convert
// gives the same value) to b, and reports false for any other text; nil
// when col's type has no fast form.
func fastAppender(col *sql.Column, b array.Builder) func(array.Builder, string) bool {
	switch col.Type.Type() {
	case sqltypes.Int32:
		if _, ok := b.(*array.Int32Builder); ok {
			return func(b array.Builder, s string) bool {
				n, ok := canonicalInt(s, 32)
				if ok {
					b.(*array.Int32Builder).Append(int32(n))
				}
				return ok
			}
		}
	case sqltypes.Int64:
		if _, ok := b.(*array.Int64Builder); ok {
			return func(b array.Builder, s string) bool {
				n, ok := canonicalInt(s, 64)
				if ok {
					b.(*array.Int64Builder).Append(n)
				}
				return ok
			}
		}
	case sqltypes.Float64:
		if _, ok := b.(*array.Float64Builder); ok {
			return func(b array.Builder, s string) bool {
				f, ok := canonicalFloat(s)
				if ok {
					b.(*array.Float64Builder).Append(f)
				}
				return ok
			}
		}
	case sqltypes.Date:
		if _, ok := b.(*array.Date32Builder); ok {
			return func(b array.Builder, s string) bool {
				days, ok := canonicalDate(s)
				if ok {
					b.(*array.Date32Builder).Append(arrow.Date32(days))
				}
				return ok
			}
		}
	case sqltypes.Text, sqltypes.VarChar, sqltypes.Blob, sqltypes.VarBinary:
		st, ok := col.Type.(sql.StringType)
		sb, isString := b.(*array.StringBuilder)
		if ok && isString && st.CharacterSet() == sql.CharacterSet_utf8mb4 {
			limit := st.MaxByteLength()
			return func(_ array.Builder, s string) bool {
				// A length in bytes within the limit is within it in characters.
				if int64(len(s)) > limit || !utf8.ValidString(s) {
					return false
				}
				sb.Append(s)
				return true
			}
		}
	}
	return nil
}

// canonicalInt parses an optional '-' and 1 to 18 digits, the form every
// integer conversion reads alike.
func canonicalInt(s string, bits int) (int64, bool) {
	digits := strings.TrimPrefix(s, "-")
	if len(digits) == 0 || len(digits) > 18 {
		return 0, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, bits)
	return n, err == nil
}

// canonicalFloat parses decimal digits with an optional sign, point and
// exponent; no spaces, hex, underscores, Inf or NaN, which conversions
// differ on.
func canonicalFloat(s string) (float64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9', c == '.', c == '-', c == '+', c == 'e', c == 'E':
		default:
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

// canonicalDate parses YYYY-MM-DD of a real day in the years 1000 to 9999
// into days since 1970-01-01.
func canonicalDate(s string) (int32, bool) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return 0, false
	}
	num := func(p string) (int, bool) {
		n := 0
		for i := 0; i < len(p); i++ {
			if p[i] < '0' || p[i] > '9' {
				return 0, false
			}
			n = n*10 + int(p[i]-'0')
		}
		return n, true
	}
	y, ok1 := num(s[:4])
	m, ok2 := num(s[5:7])
	d, ok3 := num(s[8:])
	if !ok1 || !ok2 || !ok3 || y < 1000 || m < 1 || m > 12 || d < 1 || d > daysIn(y, m) {
		return 0, false
	}
	return int32(daysFromCivil(y, m, d)), true
}

func daysIn(y, m int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// daysFromCivil is the days from 1970-01-01 to the proleptic Gregorian
// date y-m-d (Howard Hinnant's algorithm).
func daysFromCivil(y, m, d int) int {
	if m <= 2 {
		y--
	}
	era := y / 400
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + d - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}
