package engine

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
)

// QueryEvent is one statement the MySQL server ran, for logs and metrics.
type QueryEvent struct {
	ConnectionID uint32
	User         string
	Query        string
	// Kind is the statement's first keyword in upper case (SELECT, INSERT,
	// COMMIT, ...), OTHER for the rare ones: a bounded set, fit for a label.
	Kind         string
	Duration     time.Duration
	Rows         int64 // rows returned
	RowsAffected int64
	Err          error  // nil when the statement succeeded
	Code         uint16 // the MySQL error code of Err (1213: a commit conflict)
	// Scan is what the statement's table scans planned, pruned and read.
	Scan ScanTally
	// Commits are the tables the statement committed to (COMMIT, or an
	// autocommit statement that wrote), each marked when it lost to a
	// concurrent commit.
	Commits []CommitTally
}

// QueryObserver is told of every statement and session of a Server
// (ServerConfig.Observer); it is called on the connection's goroutine, so it
// must be quick and safe for concurrent use.
type QueryObserver interface {
	QueryDone(QueryEvent)
	SessionOpened()
	SessionClosed()
}

// observeHandler reports statements and sessions to an observer.
type observeHandler struct {
	mysql.Handler
	obs      QueryObserver
	open     *sync.Map                     // connection ids told as opened, so each close is told once
	sessions func(conn uint32) sql.Session // the session of a connection, for its statement's tallies
}

func (h observeHandler) NewConnection(c *mysql.Conn) {
	h.Handler.NewConnection(c)
	if _, loaded := h.open.LoadOrStore(c.ConnectionID, true); !loaded {
		h.obs.SessionOpened()
	}
}

func (h observeHandler) ConnectionClosed(c *mysql.Conn) {
	h.Handler.ConnectionClosed(c)
	if _, ok := h.open.LoadAndDelete(c.ConnectionID); ok {
		h.obs.SessionClosed()
	}
}

func (h observeHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	start, n := time.Now(), &counts{}
	err := h.Handler.ComQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		n.add(res)
		return callback(res, more)
	})
	h.report(c, query, start, n, err)
	return err
}

func (h observeHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	start, n := time.Now(), &counts{}
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		n.add(res)
		return callback(res, more)
	})
	ran := query
	if len(rest) <= len(query) {
		ran = query[:len(query)-len(rest)]
	}
	h.report(c, ran, start, n, err)
	return rest, err
}

func (h observeHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	start, n := time.Now(), &counts{}
	err := h.Handler.ComStmtExecute(ctx, c, prepare, func(res *sqltypes.Result) error {
		n.add(res)
		return callback(res)
	})
	h.report(c, prepare.PrepareStmt, start, n, err)
	return err
}

// counts tallies the results sent for one statement: rows of a result set,
// or the rows an OK packet says were affected (a result set's RowsAffected
// repeats its row count).
type counts struct {
	resultSet      bool
	rows, affected int64
}

func (n *counts) add(res *sqltypes.Result) {
	n.resultSet = n.resultSet || len(res.Fields) > 0
	n.rows += int64(len(res.Rows))
	if !n.resultSet {
		n.affected += int64(res.RowsAffected)
	}
}

func (h observeHandler) report(c *mysql.Conn, query string, start time.Time, n *counts, err error) {
	ev := QueryEvent{ConnectionID: c.ConnectionID, User: c.User, Query: strings.TrimSpace(query), Kind: StatementKind(query),
		Duration: time.Since(start), Rows: n.rows, RowsAffected: n.affected, Err: err}
	var se *mysql.SQLError
	if errors.As(err, &se) {
		ev.Code = uint16(se.Number())
	}
	if s, ok := h.sessions(c.ConnectionID).(*Session); ok {
		ev.Scan, ev.Commits = s.TakeStatementStats() // scanmetrics.go
	}
	h.obs.QueryDone(ev)
}

// statementKinds are the kinds StatementKind tells apart; the others are OTHER.
var statementKinds = map[string]string{
	"SELECT": "SELECT", "WITH": "SELECT", "(": "SELECT", "VALUES": "SELECT", "TABLE": "SELECT",
	"INSERT": "INSERT", "REPLACE": "REPLACE", "UPDATE": "UPDATE", "DELETE": "DELETE", "MERGE": "MERGE",
	"LOAD": "LOAD", "TRUNCATE": "TRUNCATE", "CREATE": "CREATE", "DROP": "DROP", "ALTER": "ALTER",
	"RENAME": "ALTER", "SHOW": "SHOW", "DESCRIBE": "DESCRIBE", "DESC": "DESCRIBE", "EXPLAIN": "EXPLAIN",
	"SET": "SET", "USE": "USE", "BEGIN": "BEGIN", "START": "BEGIN", "COMMIT": "COMMIT",
	"ROLLBACK": "ROLLBACK", "CALL": "CALL", "KILL": "KILL", "GRANT": "GRANT", "REVOKE": "REVOKE",
	"PREPARE": "PREPARE", "EXECUTE": "EXECUTE", "DO": "DO",
}

// StatementKind is the first keyword of a statement after spaces and
// comments, in upper case, or OTHER when it is not one of statementKinds.
func StatementKind(query string) string {
	s := SkipLeadingComments(query)
	if strings.HasPrefix(s, "(") {
		return "SELECT"
	}
	end := strings.IndexFunc(s, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '(' || r == ';'
	})
	if end >= 0 {
		s = s[:end]
	}
	if k, ok := statementKinds[strings.ToUpper(s)]; ok {
		return k
	}
	return "OTHER"
}

// SkipLeadingComments drops the spaces and comments (#, -- , /* */) that
// begin a statement; a /*! ... */ comment is MySQL code and stays.
func SkipLeadingComments(s string) string {
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		switch {
		case strings.HasPrefix(s, "#") || strings.HasPrefix(s, "--") && (len(s) == 2 || strings.ContainsRune(" \t\r\n", rune(s[2]))):
			_, rest, found := strings.Cut(s, "\n")
			if !found {
				return ""
			}
			s = rest
		case strings.HasPrefix(s, "/*") && !strings.HasPrefix(s, "/*!"):
			_, rest, found := strings.Cut(s[2:], "*/")
			if !found {
				return ""
			}
			s = rest
		default:
			return s
		}
	}
}
