package engine

import (
	"context"
	"fmt"
	"net"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
)

// ServerConfig says where the MySQL wire server listens and whom it admits.
type ServerConfig struct {
	// Addr is host:port; port 0 picks a free port (see Server.Addr).
	Addr string
	// User and Password, when User is set, are the only account admitted.
	// Without a user every login is accepted, which is allowed on a
	// loopback address only.
	User     string
	Password string
}

// Server is a running MySQL wire endpoint for an Engine.
type Server struct {
	srv      *server.Server
	listener net.Listener
	stop     chan struct{} // closed by Close: ends the memory watchdog
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
	if cfg.User != "" {
		mdb := e.sqle.Analyzer.Catalog.MySQLDb
		ed := mdb.Editor()
		mdb.AddSuperUser(ed, cfg.User, "%", cfg.Password)
		ed.Close()
	}
	l, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	limits := newStatementLimits() // limits.go
	sessions := func(ctx context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
		s, err := e.sessionBuilder(ctx, conn, addr)
		if err == nil {
			limits.session(conn.ConnectionID, s)
		}
		return s, err
	}
	srv, err := server.NewServerWithHandler(server.Config{
		Protocol: "tcp",
		Address:  l.Addr().String(),
		Listener: l,
		Version:  "8.0.33-icesql-" + Version,
	}, e.sqle, sql.NewContext, sessions, nil, func(h mysql.Handler) (mysql.Handler, error) {
		return statusHandler{codeMappingHandler{limitHandler{Handler: h, l: limits}}}, nil
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("start MySQL server: %w", err)
	}
	stop := make(chan struct{})
	go watchMemory(limits, e.cfg.MemoryLimit, stop) // memwatch.go
	return &Server{srv: srv, listener: l, stop: stop}, nil
}

// Addr is the address the server listens on, with the real port.
func (s *Server) Addr() string { return s.listener.Addr().String() }

// Start serves connections until Close; it returns nil after Close.
func (s *Server) Start() error { return s.srv.Start() }

// Close stops accepting connections and closes the open ones.
func (s *Server) Close() error {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	return s.srv.Close()
}

func (e *Engine) sessionBuilder(_ context.Context, conn *mysql.Conn, addr string) (sql.Session, error) {
	user, host := "", ""
	if u, ok := conn.UserData.(sql.MysqlConnectionUser); ok {
		user, host = u.User, u.Host
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
