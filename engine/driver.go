package engine

import (
	"context"
	gosql "database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/dolthub/vitess/go/vt/sqlparser"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/wire"
)

// DriverName is the database/sql driver name: sql.Open("icesql", "<warehouse>").
// The DSN is the warehouse folder, optionally followed by options as in
// go-sql-driver/mysql: "?catalog=<name>&parseTime=false&loc=Local".
//   - catalog: the catalog prefix accepted in three-part names;
//   - parseTime (default true): DATE, DATETIME and TIMESTAMP values scan
//     into time.Time; false gives their MySQL text, as over the wire;
//   - loc (default UTC): the time zone of those time.Time values, and of
//     time.Time arguments ("Local" or an IANA name).
//
// Connections to the same warehouse and catalog share one Engine.
const DriverName = "icesql"

func init() { gosql.Register(DriverName, &Driver{}) }

// Driver is icesql's database/sql driver. Every sql.DB opened on the same
// warehouse and catalog shares one Engine, which is closed when the last
// of them is closed (database/sql closes a DB's connector).
type Driver struct {
	mu      sync.Mutex
	engines map[string]*sharedEngine
}

// sharedEngine is an Engine and how many sql.DBs (or connections opened
// by Driver.Open) use it.
type sharedEngine struct {
	e    *Engine
	refs int
}

// Open implements driver.Driver. database/sql uses OpenConnector; a
// connection opened here holds the engine until it is closed.
func (d *Driver) Open(dsn string) (driver.Conn, error) {
	c, err := d.OpenConnector(dsn)
	if err != nil {
		return nil, err
	}
	dc, err := c.Connect(context.Background())
	if err != nil {
		_ = c.(io.Closer).Close()
		return nil, err
	}
	dc.(*conn).release = c.(io.Closer).Close
	return dc, nil
}

// OpenConnector implements driver.DriverContext. The connector holds the
// DSN's engine until its Close, which sql.DB.Close calls.
func (d *Driver) OpenConnector(dsn string) (driver.Connector, error) {
	cfg, opts, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	key := cfg.Warehouse + "\x00" + cfg.CatalogName
	shared, ok := d.engines[key]
	if !ok {
		e, err := Open(context.Background(), cfg)
		if err != nil {
			return nil, err
		}
		shared = &sharedEngine{e: e}
		if d.engines == nil {
			d.engines = map[string]*sharedEngine{}
		}
		d.engines[key] = shared
	}
	shared.refs++
	c := newConnector(shared.e, opts)
	return &dsnConnector{connector: c, d: d, key: key, shared: shared}, nil
}

// dsnConnector is a connector of an engine the driver shares.
type dsnConnector struct {
	connector
	d      *Driver
	key    string
	shared *sharedEngine
	closed sync.Once
}

func (c *dsnConnector) Driver() driver.Driver { return c.d }

// Close releases the connector's hold on its engine, closing the engine
// when no sql.DB holds it any more.
func (c *dsnConnector) Close() error {
	var err error
	c.closed.Do(func() {
		d := c.d
		d.mu.Lock()
		defer d.mu.Unlock()
		if c.shared.refs--; c.shared.refs == 0 {
			delete(d.engines, c.key)
			err = c.shared.e.Close()
		}
	})
	return err
}

// parseDSN reads a DSN: the engine's configuration and the connections' options.
func parseDSN(dsn string) (Config, []ConnOption, error) {
	cfg := Config{Warehouse: dsn}
	parseTime, loc := true, time.UTC
	if wh, query, ok := strings.Cut(dsn, "?"); ok {
		cfg.Warehouse = wh
		for _, kv := range strings.Split(query, "&") {
			k, v, _ := strings.Cut(kv, "=")
			var err error
			switch k {
			case "catalog":
				cfg.CatalogName = v
			case "parseTime":
				parseTime, err = strconv.ParseBool(v)
			case "loc":
				loc, err = time.LoadLocation(v)
			default:
				err = errors.New("unknown option (known: catalog, parseTime, loc)")
			}
			if err != nil {
				return Config{}, nil, fmt.Errorf("icesql DSN %q: option %q: %w", dsn, kv, err)
			}
		}
	}
	if !parseTime {
		return cfg, nil, nil
	}
	return cfg, []ConnOption{ParseTime(loc)}, nil
}

// ConnOption sets how a connector's connections hand values to Go.
type ConnOption func(*connOptions)

type connOptions struct {
	// timeLoc, when set, makes DATE, DATETIME and TIMESTAMP values
	// time.Time in that zone (go-sql-driver's parseTime and loc).
	timeLoc *time.Location
}

// ParseTime makes DATE, DATETIME and TIMESTAMP values scan into time.Time:
// the value's wall clock in loc, as go-sql-driver/mysql's parseTime=true
// gives them. time.Time arguments are converted to loc before they are sent.
// A zero date ('0000-00-00') is the zero time.Time.
func ParseTime(loc *time.Location) ConnOption {
	return func(o *connOptions) { o.timeLoc = loc }
}

// Connector returns a database/sql connector for the engine:
// db := sql.OpenDB(e.Connector()). Every connection is a session of its own.
// Without options, values come as the MySQL text protocol shows them
// (dates as strings); ParseTime gives time.Time instead.
func (e *Engine) Connector(opts ...ConnOption) driver.Connector {
	return newConnector(e, opts)
}

func newConnector(e *Engine, opts []ConnOption) connector {
	c := connector{e: e}
	for _, o := range opts {
		o(&c.opts)
	}
	return c
}

type connector struct {
	e    *Engine
	opts connOptions
}

var connIDs atomic.Uint32

func (c connector) Connect(context.Context) (driver.Conn, error) {
	base := sql.NewBaseSessionWithClientServer("in-process", sql.Client{User: "root", Address: "localhost"}, connIDs.Add(1))
	return &conn{e: c.e, sess: c.e.NewSession(base), opts: c.opts}, nil
}

func (c connector) Driver() driver.Driver { return &Driver{} }

// conn is one session. database/sql transactions map to SQL ones.
type conn struct {
	e    *Engine
	sess *Session
	opts connOptions
	// release, when set, lets go of the engine (a connection of Driver.Open).
	release func() error
}

var (
	_ driver.QueryerContext     = (*conn)(nil)
	_ driver.ExecerContext      = (*conn)(nil)
	_ driver.ConnBeginTx        = (*conn)(nil)
	_ driver.NamedValueChecker  = (*conn)(nil)
	_ driver.ConnPrepareContext = (*conn)(nil)
)

var queryIDs atomic.Uint64

// run executes one statement; the caller must close the returned iterator.
func (c *conn) run(ctx context.Context, query string, args []driver.NamedValue) (*sql.Context, sql.Schema, sql.RowIter, error) {
	bindings, err := bindingsOf(args, c.opts.timeLoc)
	if err != nil {
		return nil, nil, nil, err
	}
	sctx := sql.NewContext(ctx, sql.WithSession(c.sess), sql.WithPid(queryIDs.Add(1)), sql.WithQuery(query),
		sql.WithProcessList(c.e.sqle.ProcessList), sql.WithMemoryManager(c.e.sqle.MemoryManager))
	schema, iter, _, err := c.e.sqle.QueryWithBindings(sctx, query, nil, bindings, nil)
	if err != nil {
		se := mysqlerr.ForStatement(query, err)
		wire.RememberError(c.sess, se) // wire/diagnostics.go
		return nil, nil, nil, se
	}
	return sctx, schema, iter, nil
}

func (c *conn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	sctx, schema, iter, err := c.run(ctx, query, args)
	if err != nil {
		return nil, err
	}
	if types.IsOkResultSchema(schema) {
		// A statement that returns no rows (DDL, INSERT) read with Query:
		// run it to the end and return an empty result, as MySQL drivers do.
		if _, err := drain(sctx, schema, iter); err != nil {
			return nil, err
		}
		return &rows{ctx: sctx, iter: sql.RowsToRowIter()}, nil
	}
	return &rows{ctx: sctx, schema: schema, iter: iter, timeLoc: c.opts.timeLoc}, nil
}

func (c *conn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	sctx, schema, iter, err := c.run(ctx, query, args)
	if err != nil {
		return nil, err
	}
	affected, err := drain(sctx, schema, iter)
	if err != nil {
		return nil, err
	}
	return driver.RowsAffected(affected), nil
}

// drain runs a statement to its end and closes it, counting affected rows.
func drain(sctx *sql.Context, schema sql.Schema, iter sql.RowIter) (int64, error) {
	var affected int64
	for {
		row, err := iter.Next(sctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			iter.Close(sctx)
			return 0, mysqlerr.Coded(err)
		}
		if len(schema) == 1 && types.IsOkResultSchema(schema) && len(row) == 1 {
			if ok, isOK := row[0].(types.OkResult); isOK {
				affected += int64(ok.RowsAffected)
			}
		}
	}
	if err := iter.Close(sctx); err != nil {
		return 0, mysqlerr.Coded(err)
	}
	return affected, nil
}

func (c *conn) PrepareContext(_ context.Context, query string) (driver.Stmt, error) {
	return &stmt{c: c, query: query}, nil
}

func (c *conn) Prepare(query string) (driver.Stmt, error) { return &stmt{c: c, query: query}, nil }

func (c *conn) Close() error {
	c.e.sqle.CloseSession(c.sess.ID())
	if c.release != nil {
		return c.release()
	}
	return nil
}

func (c *conn) Begin() (driver.Tx, error) { return c.BeginTx(context.Background(), driver.TxOptions{}) }

func (c *conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	q := "START TRANSACTION"
	if opts.ReadOnly {
		q += " READ ONLY"
	}
	if _, err := c.ExecContext(ctx, q, nil); err != nil {
		return nil, err
	}
	return tx{c: c}, nil
}

func (c *conn) CheckNamedValue(*driver.NamedValue) error { return nil }

type tx struct{ c *conn }

func (t tx) Commit() error {
	_, err := t.c.ExecContext(context.Background(), "COMMIT", nil)
	return err
}

func (t tx) Rollback() error {
	_, err := t.c.ExecContext(context.Background(), "ROLLBACK", nil)
	return err
}

type stmt struct {
	c     *conn
	query string
}

func (s *stmt) Close() error  { return nil }
func (s *stmt) NumInput() int { return -1 }
func (s *stmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.c.ExecContext(context.Background(), s.query, named(args))
}
func (s *stmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.c.QueryContext(context.Background(), s.query, named(args))
}
func (s *stmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.query, args)
}
func (s *stmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.query, args)
}

func named(args []driver.Value) []driver.NamedValue {
	out := make([]driver.NamedValue, len(args))
	for i, a := range args {
		out[i] = driver.NamedValue{Ordinal: i + 1, Value: a}
	}
	return out
}

// bindingsOf turns ? arguments into go-mysql-server bind variables v1, v2,
// ...; a time.Time is sent as its wall clock in loc, when set.
func bindingsOf(args []driver.NamedValue, loc *time.Location) (map[string]sqlparser.Expr, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]sqlparser.Expr, len(args))
	for _, a := range args {
		name := a.Name
		if name == "" {
			name = "v" + strconv.Itoa(a.Ordinal)
		}
		v := a.Value
		if t, ok := v.(time.Time); ok {
			if loc != nil {
				t = t.In(loc)
			}
			v = t.Format("2006-01-02 15:04:05.999999")
		}
		bv, err := sqltypes.BuildBindVariable(v)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", name, err)
		}
		val, err := sqltypes.BindVariableToValue(bv)
		if err != nil {
			return nil, fmt.Errorf("argument %s: %w", name, err)
		}
		if out[name], err = sqlparser.ExprFromValue(val); err != nil {
			return nil, fmt.Errorf("argument %s: %w", name, err)
		}
	}
	return out, nil
}

// rows returns values as the MySQL text protocol shows them, so a program
// sees the same over database/sql in-process as over the wire: integers as
// int64 or uint64, floats as float64, NULL as nil, everything else as text
// (binary columns as []byte); with ParseTime, dates and times as time.Time.
type rows struct {
	ctx     *sql.Context
	schema  sql.Schema
	iter    sql.RowIter
	closed  bool
	timeLoc *time.Location // ParseTime's zone, or nil
}

func (r *rows) Columns() []string {
	out := make([]string, len(r.schema))
	for i, c := range r.schema {
		out[i] = c.Name
	}
	return out
}

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *rows) ColumnTypeDatabaseTypeName(i int) string {
	name := strings.ToUpper(r.schema[i].Type.String())
	if j := strings.IndexAny(name, "( "); j > 0 {
		name = name[:j]
	}
	return name
}

func (r *rows) Next(dest []driver.Value) error {
	row, err := r.iter.Next(r.ctx)
	if errors.Is(err, io.EOF) {
		return io.EOF
	}
	if err != nil {
		return mysqlerr.Coded(err)
	}
	for i, col := range r.schema {
		if r.timeLoc != nil && isDateTime(col.Type) {
			if dest[i], err = timeValue(r.ctx, col.Type, row[i], r.timeLoc); err != nil {
				return err
			}
			continue
		}
		v, err := wireValue(r.ctx, col.Type, row[i])
		if err != nil {
			return err
		}
		dest[i] = v
	}
	return nil
}

func (r *rows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	if err := r.iter.Close(r.ctx); err != nil {
		return mysqlerr.Coded(err)
	}
	return nil
}

func wireValue(ctx *sql.Context, typ sql.Type, v any) (driver.Value, error) {
	if v == nil {
		return nil, nil
	}
	if dv, ok := directValue(typ, v); ok { // drivervalue.go
		return dv, nil
	}
	return textValue(ctx, typ, v)
}

// isDateTime reports whether a column's values are dates or date-times
// (TIME stays text, as in go-sql-driver/mysql).
func isDateTime(typ sql.Type) bool {
	switch typ.Type() {
	case sqltypes.Date, sqltypes.Datetime, sqltypes.Timestamp:
		return true
	}
	return false
}

// timeValue is a DATE, DATETIME or TIMESTAMP value as the time.Time whose
// wall clock, in loc, is the value's MySQL text (in the session's time zone
// for a TIMESTAMP): what go-sql-driver/mysql gives with parseTime=true. The
// zero date is the zero time.Time.
func timeValue(ctx *sql.Context, typ sql.Type, v any, loc *time.Location) (driver.Value, error) {
	text, err := textValue(ctx, typ, v)
	if text == nil || err != nil {
		return text, err
	}
	s, ok := text.(string)
	if !ok {
		return nil, fmt.Errorf("%s value %v has no text", typ, v)
	}
	if strings.HasPrefix(s, "0000-00-00") {
		return time.Time{}, nil
	}
	layout := "2006-01-02 15:04:05.999999999"
	if len(s) == len("2006-01-02") {
		layout = "2006-01-02"
	}
	t, err := time.ParseInLocation(layout, s, loc)
	if err != nil {
		return nil, fmt.Errorf("%s value %q: %w", typ, s, err)
	}
	return t, nil
}

// textValue converts v through its MySQL text, as the wire protocol
// carries it.
func textValue(ctx *sql.Context, typ sql.Type, v any) (driver.Value, error) {
	val, err := typ.SQL(ctx, nil, v)
	if err != nil {
		return nil, mysqlerr.Coded(err)
	}
	switch t := val.Type(); {
	case val.IsNull():
		return nil, nil
	case sqltypes.IsSigned(t):
		return strconv.ParseInt(string(val.Raw()), 10, 64)
	case sqltypes.IsUnsigned(t):
		return strconv.ParseUint(string(val.Raw()), 10, 64)
	case sqltypes.IsFloat(t):
		return strconv.ParseFloat(string(val.Raw()), 64)
	case sqltypes.IsBinary(t):
		// A copy that is not nil when empty: database/sql reads a nil
		// []byte as NULL, so an empty string or BLOB came back NULL.
		return append([]byte{}, val.Raw()...), nil
	case sqlfunc.IsDateType(t):
		padded, _ := sqlfunc.PaddedYear(val.Raw()) // sqlfunc/yearpad.go
		return string(padded), nil
	}
	return string(val.Raw()), nil
}
