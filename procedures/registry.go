package procedures

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Kind is the type of a procedure argument or output column.
type Kind int

const (
	String Kind = iota
	Int64
	Bool
)

func (k Kind) String() string {
	switch k {
	case Int64:
		return "BIGINT"
	case Bool:
		return "BOOLEAN"
	case Timestamp:
		return "TIMESTAMP"
	case Map:
		return "MAP<STRING,STRING>"
	case Int64List:
		return "ARRAY<BIGINT>"
	}
	return "STRING"
}

// Param is one parameter, named as in Spark so that named arguments
// (name => value) written for Spark work unchanged.
type Param struct {
	Name     string
	Kind     Kind
	Required bool
	// Default is the value of an omitted optional parameter; nil means NULL.
	Default any
}

// Column is one column of a procedure's result.
type Column struct {
	Name string
	Kind Kind
}

// Env is what a procedure runs against.
type Env struct {
	// Catalog is the catalog tables are named in.
	Catalog catalog.Catalog
	// CatalogName is the prefix accepted before a table name (icesql.db.t).
	CatalogName string
	// Database is the session's current database, which a table named
	// without one is in (as Spark resolves 'sample' in the current namespace).
	Database string
	// RowFilter turns a SQL predicate on a table (rewrite_data_files' where)
	// into an Iceberg row filter; nil where no SQL layer is at hand.
	RowFilter func(ctx context.Context, ident table.Identifier, where string) (iceberg.BooleanExpression, error)
	// SortOrder reads a sort order written as SQL (id DESC NULLS LAST,
	// name) against a table's columns; nil where no SQL layer is at hand.
	SortOrder func(tbl *table.Table, text string) (table.SortOrder, error)
	// Progress reports how far a long procedure got (to the server log);
	// nil to stay silent.
	Progress func(format string, args ...any)
	// Warn tells the client something went partly wrong after the
	// procedure's change was committed (files it could not delete); nil to
	// stay silent.
	Warn func(format string, args ...any)
	// Root is the warehouse location: the only place add_files reads
	// files from. "" when the catalog has none on this machine, which
	// disables add_files.
	Root string
}

// warn reports through env.Warn when set.
func (env Env) warn(format string, args ...any) {
	if env.Warn != nil {
		env.Warn(format, args...)
	}
}

// progress reports through env.Progress when set.
func (env Env) progress(format string, args ...any) {
	if env.Progress != nil {
		env.Progress(format, args...)
	}
}

// Procedure is one CALL system.<name>. Run receives its arguments bound to
// the parameters (Args) and returns the result rows, each value of the
// matching Column's kind (string, int64, bool) or nil.
type Procedure struct {
	Name   string
	Params []Param
	Output []Column
	Run    func(ctx context.Context, env Env, args Args) ([][]any, error)
}

// Registry holds the procedures by name.
type Registry struct {
	byName map[string]*Procedure
}

// Lookup finds a procedure by name, ignoring case as Spark does.
func (r *Registry) Lookup(name string) (*Procedure, bool) {
	p, ok := r.byName[strings.ToLower(name)]
	return p, ok
}

// Names lists the procedures, sorted.
func (r *Registry) Names() []string {
	out := make([]string, 0, len(r.byName))
	for n := range r.byName {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func newRegistry(procs ...*Procedure) *Registry {
	r := &Registry{byName: map[string]*Procedure{}}
	for _, p := range procs {
		r.byName[strings.ToLower(p.Name)] = p
	}
	return r
}

// Builtin returns the registry of every procedure icesql has.
func Builtin() *Registry {
	return newRegistry(registerTable(),
		rollbackToSnapshot(), rollbackToTimestamp(), setCurrentSnapshot(), ancestorsOf(),
		expireSnapshots(), removeOrphanFiles(), rewriteDataFiles(), rewriteManifests(), rewritePositionDeleteFiles(), addFiles(),
		cherrypickSnapshot(), publishChanges(), fastForward())
}

// ErrArgument marks a CALL whose arguments do not fit the procedure; the
// message names the argument.
var ErrArgument = errors.New("wrong argument")

// ErrNotFound marks a procedure that does not exist.
var ErrNotFound = errors.New("procedure not found")

func argError(p *Procedure, format string, a ...any) error {
	return fmt.Errorf("%w: procedure system.%s: %s", ErrArgument, p.Name, fmt.Sprintf(format, a...))
}

// Arg is one argument as written in a CALL: Name is empty for a positional
// argument; Value is an evaluated SQL value.
type Arg struct {
	Name  string
	Value any
}

// Args are the bound arguments, by parameter name.
type Args map[string]any

// String returns a string argument ("" when NULL).
func (a Args) String(name string) string {
	s, _ := a[name].(string)
	return s
}

// Int64 returns an integer argument and whether it was given (not NULL).
func (a Args) Int64(name string) (int64, bool) {
	v, ok := a[name].(int64)
	return v, ok
}

// Bool returns a boolean argument (false when NULL).
func (a Args) Bool(name string) bool {
	v, _ := a[name].(bool)
	return v
}

// Bind matches the arguments of a CALL to the procedure's parameters as
// Spark does: positional arguments first, in declared order, then named
// ones; named and positional arguments may not both give one parameter.
func Bind(p *Procedure, args []Arg) (Args, error) {
	return BindIn(p, args, func(t time.Time) (time.Time, error) { return t, nil })
}

// BindIn is Bind with wall, which reads a wall-clock time written in a
// timestamp argument in the session time zone.
func BindIn(p *Procedure, args []Arg, wall func(time.Time) (time.Time, error)) (Args, error) {
	out := Args{}
	given := map[string]bool{}
	named := false
	for i, a := range args {
		var prm *Param
		if a.Name == "" {
			if named {
				return nil, argError(p, "positional argument %d follows a named argument; name it too", i+1)
			}
			if i >= len(p.Params) {
				return nil, argError(p, "too many arguments: it takes at most %d (%s)", len(p.Params), paramList(p))
			}
			prm = &p.Params[i]
		} else {
			named = true
			prm = p.param(a.Name)
			if prm == nil {
				return nil, argError(p, "unknown argument '%s'; its arguments are %s", a.Name, paramList(p))
			}
		}
		if given[prm.Name] {
			return nil, argError(p, "argument '%s' is given twice", prm.Name)
		}
		given[prm.Name] = true
		v, err := convertIn(prm.Kind, a.Value, wall)
		if err != nil {
			return nil, argError(p, "argument '%s': %v", prm.Name, err)
		}
		if v == nil && prm.Required {
			return nil, argError(p, "argument '%s' may not be NULL", prm.Name)
		}
		out[prm.Name] = v
	}
	for _, prm := range p.Params {
		if given[prm.Name] {
			continue
		}
		if prm.Required {
			return nil, argError(p, "missing required argument '%s'", prm.Name)
		}
		out[prm.Name] = prm.Default
	}
	return out, nil
}

func (p *Procedure) param(name string) *Param {
	for i := range p.Params {
		if strings.EqualFold(p.Params[i].Name, name) {
			return &p.Params[i]
		}
	}
	return nil
}

func paramList(p *Procedure) string {
	names := make([]string, len(p.Params))
	for i, prm := range p.Params {
		names[i] = prm.Name
	}
	return strings.Join(names, ", ")
}

// convertIn is convert for every kind, reading wall-clock times with wall.
func convertIn(k Kind, v any, wall func(time.Time) (time.Time, error)) (any, error) {
	if v == nil || k <= Bool {
		return convert(k, v)
	}
	return convertMore(k, v, wall)
}

// convert turns an evaluated SQL value into the parameter's kind.
func convert(k Kind, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch k {
	case String:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
		return nil, fmt.Errorf("want a string, got %v", v)
	case Int64:
		switch x := v.(type) {
		case int8:
			return int64(x), nil
		case int16:
			return int64(x), nil
		case int32:
			return int64(x), nil
		case int64:
			return x, nil
		case int:
			return int64(x), nil
		case uint8:
			return int64(x), nil
		case uint16:
			return int64(x), nil
		case uint32:
			return int64(x), nil
		case uint64:
			if x > math.MaxInt64 {
				return nil, fmt.Errorf("%d is out of the BIGINT range", x)
			}
			return int64(x), nil
		case string:
			n, err := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("want an integer, got '%s'", x)
			}
			return n, nil
		}
		return nil, fmt.Errorf("want an integer, got %v", v)
	case Bool:
		switch x := v.(type) {
		case bool:
			return x, nil
		case int8, int16, int32, int64, int:
			n, _ := convert(Int64, x)
			return n.(int64) != 0, nil
		case string:
			b, err := strconv.ParseBool(x)
			if err != nil {
				return nil, fmt.Errorf("want true or false, got '%s'", x)
			}
			return b, nil
		}
		return nil, fmt.Errorf("want true or false, got %v", v)
	}
	return nil, fmt.Errorf("unknown parameter kind %d", k)
}

// TableIdent parses a table argument: db.t, or catalog.db.t with the
// engine's catalog name, with `backquoted` parts allowed.
func (env Env) TableIdent(arg, s string) (table.Identifier, error) {
	parts, err := splitName(s)
	if err != nil {
		return nil, fmt.Errorf("%w: argument '%s': %v", ErrArgument, arg, err)
	}
	if len(parts) == 3 && strings.EqualFold(parts[0], env.CatalogName) {
		parts = parts[1:]
	}
	if len(parts) == 1 && env.Database != "" {
		parts = []string{env.Database, parts[0]}
	}
	if len(parts) != 2 {
		return nil, fmt.Errorf("%w: argument '%s': '%s' is not a table name of the form db.table", ErrArgument, arg, s)
	}
	return table.Identifier(parts), nil
}

// splitName splits a dotted name, honouring backquotes.
func splitName(s string) ([]string, error) {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '`' && quoted && i+1 < len(s) && s[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	if quoted {
		return nil, fmt.Errorf("unbalanced backquote in '%s'", s)
	}
	parts = append(parts, cur.String())
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("'%s' has an empty name part", s)
		}
	}
	return parts, nil
}
