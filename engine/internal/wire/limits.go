package wire

import (
	"context"
	"errors"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/icesql/icesql/engine/internal/memlimit"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// Why a statement was stopped by the server rather than by its client.
var (
	errStatementTimeout = errors.New("max_execution_time exceeded")
	errStatementMemory  = errors.New("memory limit exceeded")
)

// StatementLimits stops the wire statements that run past their
// max_execution_time (the session variable or the MAX_EXECUTION_TIME hint
// of a SELECT, as in MySQL) or that the memory watchdog picks
// (memwatch.go). go-mysql-server already stops a statement on KILL QUERY
// and when its client disconnects; all of these reach the statement as its
// context's cancellation, which every loop of a long statement checks.
type StatementLimits struct {
	mu       sync.Mutex
	sessions map[uint32]sql.Session   // by connection id
	running  map[uint32]*runningQuery // by connection id
}

// runningQuery is a statement in progress on a connection.
type runningQuery struct {
	cancel  context.CancelCauseFunc
	started time.Time
	stopped bool // by stopOldest, and still unwinding
}

func NewStatementLimits() *StatementLimits {
	return &StatementLimits{sessions: map[uint32]sql.Session{}, running: map[uint32]*runningQuery{}}
}

// Session records the session of a connection, for its max_execution_time.
func (l *StatementLimits) Session(conn uint32, s sql.Session) {
	l.mu.Lock()
	l.sessions[conn] = s
	l.mu.Unlock()
}

// SessionOf is the session of a connection, or nil before it has one.
func (l *StatementLimits) SessionOf(conn uint32) sql.Session {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.sessions[conn]
}

// begin starts a statement of conn; the caller runs it under the returned
// context and passes its error to end.
func (l *StatementLimits) begin(ctx context.Context, conn uint32, query string) (context.Context, func(error) error) {
	ctx, cancel := context.WithCancelCause(ctx)
	l.mu.Lock()
	sess := l.sessions[conn]
	l.running[conn] = &runningQuery{cancel: cancel, started: time.Now()}
	l.mu.Unlock()
	var timer *time.Timer
	if d := statementTimeout(ctx, sess, query); d > 0 {
		timer = time.AfterFunc(d, func() { cancel(errStatementTimeout) })
	}
	return ctx, func(err error) error {
		if timer != nil {
			timer.Stop()
		}
		l.mu.Lock()
		delete(l.running, conn)
		l.mu.Unlock()
		cause := context.Cause(ctx)
		cancel(nil)
		if err == nil {
			return nil
		}
		switch {
		case errors.Is(cause, errStatementTimeout):
			return mysqlerr.New(mysqlerr.ErQueryTimeout, "Query execution was interrupted, maximum statement execution time exceeded")
		case errors.Is(cause, errStatementMemory):
			debug.FreeOSMemory() // what the statement held goes back to the system now
			return memlimit.OutOfMemory(false)
		}
		if interrupted(err) {
			return mysqlerr.New(mysqlerr.ErQueryInterrupted, "Query execution was interrupted")
		}
		return err
	}
}

// interrupted reports whether err is a statement's context cancelled (by
// KILL QUERY), which go-mysql-server's handler reports as 1105 "context
// canceled".
func interrupted(err error) bool {
	if errors.Is(err, context.Canceled) {
		return true
	}
	var coded *mysql.SQLError
	return errors.As(err, &coded) && strings.Contains(coded.Message, context.Canceled.Error())
}

// closed forgets a connection.
func (l *StatementLimits) closed(conn uint32) {
	l.mu.Lock()
	delete(l.sessions, conn)
	delete(l.running, conn)
	l.mu.Unlock()
}

// stopOldest cancels the statement that has run longest with cause, and
// reports whether there was one.
func (l *StatementLimits) stopOldest(cause error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var oldest *runningQuery
	for _, q := range l.running {
		if !q.stopped && (oldest == nil || q.started.Before(oldest.started)) {
			oldest = q
		}
	}
	if oldest == nil {
		return false
	}
	oldest.stopped = true
	oldest.cancel(cause)
	return true
}

// anyStopping reports whether a statement stopOldest stopped still runs.
func (l *StatementLimits) anyStopping() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, q := range l.running {
		if q.stopped {
			return true
		}
	}
	return false
}

// statementTimeout is how long query may run (0: no limit): the shorter of
// MySQL's limit on a SELECT (its MAX_EXECUTION_TIME hint, else the
// session's max_execution_time in milliseconds; both apply to SELECT
// statements only, as in MySQL) and MariaDB's max_statement_time (seconds,
// every statement), which BI tools written for MariaDB set.
func statementTimeout(ctx context.Context, sess sql.Session, query string) time.Duration {
	var limit time.Duration
	if sess != nil {
		sctx := sql.NewContext(ctx, sql.WithSession(sess))
		if v, err := sess.GetSessionVariable(sctx, maxStatementTimeVar); err == nil {
			if secs, ok := v.(float64); ok && secs > 0 {
				limit = time.Duration(secs * float64(time.Second))
			}
		}
	}
	head := strings.TrimLeft(query, " \t\r\n(")
	if len(head) < 6 || !strings.EqualFold(head[:6], "select") {
		return limit
	}
	selectLimit := func() time.Duration {
		if m := executionTimeHint.FindStringSubmatch(head); m != nil {
			if ms, err := strconv.ParseInt(m[1], 10, 64); err == nil {
				return time.Duration(ms) * time.Millisecond
			}
		}
		if sess == nil {
			return 0
		}
		v, err := sess.GetSessionVariable(sql.NewContext(ctx, sql.WithSession(sess)), "max_execution_time")
		if ms, ok := v.(int64); err == nil && ok && ms > 0 {
			return time.Duration(ms) * time.Millisecond
		}
		return 0
	}()
	if selectLimit > 0 && (limit == 0 || selectLimit < limit) {
		return selectLimit
	}
	return limit
}

// maxStatementTimeVar is MariaDB's limit on every statement, in seconds.
const maxStatementTimeVar = "max_statement_time"

var registerMaxStatementTime sync.Once

// AddMaxStatementTimeVar declares max_statement_time; go-mysql-server's
// system variables are process-wide.
func AddMaxStatementTimeVar() {
	registerMaxStatementTime.Do(func() {
		sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{&sql.MysqlSystemVariable{
			Name:    maxStatementTimeVar,
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemDoubleType(maxStatementTimeVar, 0, 31536000),
			Default: float64(0),
		}})
	})
}

// executionTimeHint finds MAX_EXECUTION_TIME(n) in the optimizer hint
// comment that follows a SELECT keyword (the only place MySQL reads it).
var executionTimeHint = regexp.MustCompile(`(?is)^select\s*/\*\+(?:[^*]|\*[^/])*?\bmax_execution_time\s*\(\s*(\d+)\s*\)`)

// LimitHandler runs each wire statement under its connection's limits.
type LimitHandler struct {
	mysql.Handler
	Limits *StatementLimits
}

func (h LimitHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	ctx, end := h.Limits.begin(ctx, c.ConnectionID, query)
	return end(h.Handler.ComQuery(ctx, c, query, callback))
}

func (h LimitHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	ctx, end := h.Limits.begin(ctx, c.ConnectionID, query)
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, callback)
	return rest, end(err)
}

func (h LimitHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	ctx, end := h.Limits.begin(ctx, c.ConnectionID, prepare.PrepareStmt)
	return end(h.Handler.ComStmtExecute(ctx, c, prepare, callback))
}

func (h LimitHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	ctx, end := h.Limits.begin(ctx, c.ConnectionID, "") // planning only: no time limit, but the watchdog's
	fields, err := h.Handler.ComPrepare(ctx, c, query, prepare)
	return fields, end(err)
}

func (h LimitHandler) ConnectionClosed(c *mysql.Conn) {
	h.Limits.closed(c.ConnectionID)
	h.Handler.ConnectionClosed(c)
}
