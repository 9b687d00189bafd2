package engine

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/wire"
	"github.com/icesql/icesql/planner"
)

// ServerConfig says where the MySQL wire server listens and whom it admits.
type ServerConfig struct {
	// Addr is host:port; port 0 picks a free port (see Server.Addr).
	Addr string
	// User and Password, when User is set, are an account with every
	// privilege at any host, besides the accounts the warehouse keeps
	// (auth.go). Without a user any name logs in without a password, which
	// is allowed on a loopback address only.
	User     string
	Password string
	// TLS, when set, lets clients encrypt the connection.
	TLS *tls.Config
	// RequireSecureTransport refuses logins without TLS with MySQL's error
	// 3159, as MySQL's require_secure_transport=ON does; it needs TLS.
	RequireSecureTransport bool
	// MaxConnections, when positive, bounds the open connections; those
	// beyond it get MySQL's error 1040 (Too many connections).
	MaxConnections int
	// HandshakeTimeout is how long a client has to log in;
	// DefaultHandshakeTimeout when zero.
	HandshakeTimeout time.Duration
	// Observer, when set, is told of every statement and session
	// (observe.go): the server's slow-query log and metrics.
	Observer QueryObserver
}

// Server is a running MySQL wire endpoint for an Engine.
type Server struct {
	srv      *server.Server
	listener net.Listener
	stop     chan struct{} // closed by Close: ends the memory watchdog
	guard    *wire.ConnGuard
	closed   sync.Once
}

// NewServer listens on cfg.Addr. Start serves; Close stops.
func (e *Engine) NewServer(cfg ServerConfig) (*Server, error) {
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen address %q: %w", cfg.Addr, err)
	}
	if cfg.User == "" && !isLoopback(host) {
		return nil, fmt.Errorf("listen address %s is reachable from other machines: set --user and --password "+
			"to require a login, or listen on 127.0.0.1", cfg.Addr)
	}
	if cfg.User != "" && cfg.Password == "" && !isLoopback(host) {
		return nil, fmt.Errorf("listen address %s is reachable from other machines: user %s needs a --password", cfg.Addr, cfg.User)
	}
	if cfg.RequireSecureTransport && cfg.TLS == nil {
		return nil, fmt.Errorf("require_secure_transport needs a TLS certificate and key (--tls-cert, --tls-key)")
	}
	e.serverAccounts(cfg.User, cfg.Password) // auth.go
	secure := int8(0)
	if cfg.RequireSecureTransport {
		secure = 1
	}
	if err := sql.SystemVariables.AssignValues(map[string]any{"require_secure_transport": secure}); err != nil {
		return nil, fmt.Errorf("set require_secure_transport: %w", err)
	}
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	limits := wire.NewStatementLimits() // wire/limits.go
	sessions := func(ctx context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
		s, err := e.sessionBuilder(ctx, conn, addr)
		if err == nil {
			limits.Session(conn.ConnectionID, s)
		}
		return s, err
	}
	timeout := cfg.HandshakeTimeout
	if timeout == 0 {
		timeout = DefaultHandshakeTimeout
	}
	guard := wire.NewConnGuard(cfg.MaxConnections, timeout, cfg.RequireSecureTransport, cfg.TLS != nil)
	guard.Parser = planner.NewParser(e.cfg.CatalogName)
	srv, err := server.NewServerWithHandler(server.Config{
		Protocol:  "tcp",
		Address:   l.Addr().String(),
		Listener:  guard.Listener(l),
		Version:   "8.0.33-icesql-" + Version,
		TLSConfig: cfg.TLS,
		// icesql's authentication methods (wire/wireauth.go)
		ProtocolListenerFactory: wire.ListenerFactory,
	}, e.sqle, sql.NewContext, sessions, nil, func(h mysql.Handler) (mysql.Handler, error) {
		// From the connection inward: server status flags, MySQL's error
		// codes, statement limits, padded years, OK packet info, DECIMAL
		// parameters, go-mysql-server's handler.
		var inner mysql.Handler = decimalParamHandler{h} // decimalparams.go
		inner = wire.OkInfoHandler{Handler: inner}
		inner = sqlfunc.YearPadHandler{Handler: inner}
		inner = wire.LimitHandler{Handler: inner, Limits: limits}
		inner = codeMappingHandler{inner, limits}
		inner = wire.StatusHandler{Handler: inner}
		if cfg.Observer != nil {
			inner = observeHandler{Handler: inner, obs: cfg.Observer, open: &sync.Map{}, sessions: limits.SessionOf} // observe.go
		}
		return guard.Handler(inner), nil
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("start MySQL server: %w", err)
	}
	stop := make(chan struct{})
	go wire.WatchMemory(limits, e.cfg.MemoryLimit, stop) // wire/memwatch.go
	return &Server{srv: srv, listener: l, stop: stop, guard: guard}, nil
}

// Addr is the address the server listens on, with the real port.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Start serves connections until Close; it returns nil after Close.
func (s *Server) Start() error { return s.srv.Start() }

// Close stops accepting connections and closes the open ones.
func (s *Server) Close() error {
	var err error
	s.closed.Do(func() { // go-mysql-server's Close panics when called twice
		close(s.stop) // ends the memory watchdog
		s.guard.Close()
		err = s.srv.Close()
	})
	return err
}

func (e *Engine) sessionBuilder(_ context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
	user, host := "", ""
	if u, ok := conn.UserData.(sql.MysqlConnectionUser); ok {
		user, host = u.User, u.Host
		if user == "" {
			user = conn.User // logged in through the anonymous account (auth.go)
		}
	}
	base := sql.NewBaseSessionWithClientServer(addr, sql.Client{Address: host, User: user, Capabilities: conn.Capabilities}, conn.ConnectionID)
	return e.NewSession(base), nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// DefaultHandshakeTimeout is how long a client has from connecting to
// being logged in (MySQL's connect_timeout), when ServerConfig says 0.
const DefaultHandshakeTimeout = 10 * time.Second

// codeMappingHandler gives wire clients the same codes as mysqlerr.ForStatement,
// and adds a failed statement's error to its session's diagnostics
// (wire/diagnostics.go).
type codeMappingHandler struct {
	mysql.Handler
	sessions *wire.StatementLimits // the session of each connection
}

func (h codeMappingHandler) recode(c *mysql.Conn, query string, err error) error {
	if err == nil {
		return nil
	}
	se := mysqlerr.ForStatement(query, err)
	wire.RememberError(h.sessions.SessionOf(c.ConnectionID), se)
	return se
}

func (h codeMappingHandler) ComInitDB(c *mysql.Conn, schemaName string) error {
	return h.recode(c, "", h.Handler.ComInitDB(c, schemaName))
}

func (h codeMappingHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.recode(c, query, h.Handler.ComQuery(ctx, c, query, callback))
}

func (h codeMappingHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	rest, err := h.Handler.ComMultiQuery(ctx, c, query, callback)
	return rest, h.recode(c, query, err)
}

func (h codeMappingHandler) ComPrepare(ctx context.Context, c *mysql.Conn, query string, prepare *mysql.PrepareData) ([]*querypb.Field, error) {
	fields, err := h.Handler.ComPrepare(ctx, c, query, prepare)
	return fields, h.recode(c, query, err)
}

func (h codeMappingHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	return h.recode(c, prepare.PrepareStmt, h.Handler.ComStmtExecute(ctx, c, prepare, callback))
}
