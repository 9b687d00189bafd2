// Package wire holds what icesql adds to go-mysql-server's MySQL server
// at the protocol level: connection limits, TLS requirement and slowed
// failed logins (connguard.go), packet checks (wireguard.go), authentication
// plugins (wireauth.go), statement time and memory limits with KILL
// (limits.go, memwatch.go), prepared-statement checks (preparecheck.go),
// server status flags and OK packet info. engine/server.go assembles them.
package wire

import (
	"context"
	"encoding/binary"
	"net"
	"sync"
	"time"

	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
)

// Limits on failed logins.
const (
	// Failed logins from one client address are answered ever more slowly:
	// after loginFreeFailures consecutive failures, each new connection
	// from that address waits loginDelayMin before its handshake, doubling
	// with every further failure up to loginDelayMax (MySQL's
	// connection_control plugin, with a bound). A successful login resets
	// the count; a count idle for loginFailureMemory is forgotten.
	loginFreeFailures  = 3
	loginDelayMin      = time.Second
	LoginDelayMax      = 30 * time.Second
	loginFailureMemory = time.Hour
	// loginAddressesKept bounds the memory the counts take.
	loginAddressesKept = 10000
)

// ConnGuard enforces a server's connection limits: the number of open
// connections, the time a client has to log in, the delay after failed
// logins, and TLS when secure transport is required.
type ConnGuard struct {
	maxConns         int // 0: no limit
	handshakeTimeout time.Duration
	requireTLS       bool
	offersTLS        bool
	// Sleep waits before a handshake; tests record the delay instead.
	Sleep func(ctx context.Context, d time.Duration)
	// Parser is icesql's, to tell its own syntax from a syntax error in a
	// statement to be prepared (preparecheck.go).
	Parser *planner.Parser

	closing context.Context // done when the server closes
	Close   context.CancelFunc

	mu       sync.Mutex
	open     int
	pending  map[uint32]*time.Timer // handshake deadlines, by connection id
	failures map[string]*loginFailures
}

type loginFailures struct {
	count int
	last  time.Time
}

func NewConnGuard(maxConns int, handshakeTimeout time.Duration, requireTLS, offersTLS bool) *ConnGuard {
	ctx, cancel := context.WithCancel(context.Background())
	return &ConnGuard{
		maxConns:         maxConns,
		handshakeTimeout: handshakeTimeout,
		requireTLS:       requireTLS,
		offersTLS:        offersTLS,
		Sleep:            sleepCtx,
		closing:          ctx,
		Close:            cancel,
		pending:          map[uint32]*time.Timer{},
		failures:         map[string]*loginFailures{},
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Listener counts the connections l accepts and turns away those beyond
// the limit with MySQL's error 1040, as MySQL does: an error packet in
// place of the handshake.
func (g *ConnGuard) Listener(l net.Listener) net.Listener { return &guardedListener{Listener: l, g: g} }

type guardedListener struct {
	net.Listener
	g *ConnGuard
}

func (l *guardedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.g.admit() {
			return newPacketConn(&countedConn{Conn: c, g: l.g}, l.g.offersTLS, phaseGreeting), nil // wireguard.go
		}
		go refuse(c, mysql.ERConCount, "08004", "Too many connections")
	}
}

// admit takes a connection slot, if one is free.
func (g *ConnGuard) admit() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.maxConns > 0 && g.open >= g.maxConns {
		return false
	}
	g.open++
	return true
}

// countedConn gives its slot back when closed.
type countedConn struct {
	net.Conn
	g    *ConnGuard
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() {
		c.g.mu.Lock()
		c.g.open--
		c.g.mu.Unlock()
	})
	return c.Conn.Close()
}

// refuse sends a MySQL error packet as the first packet and closes c.
func refuse(c net.Conn, code uint16, state, msg string) {
	defer c.Close()
	payload := []byte{0xff, byte(code), byte(code >> 8), '#'}
	payload = append(payload, state...)
	payload = append(payload, msg...)
	packet := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint32(packet, uint32(len(payload))) // 3-byte length, then sequence id 0
	packet[3] = 0
	c.SetWriteDeadline(time.Now().Add(time.Second))
	c.Write(append(packet, payload...))
}

// LoginDelay is how long a new connection from host waits before its
// handshake.
func (g *ConnGuard) LoginDelay(host string) time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	f, ok := g.failures[host]
	if !ok || time.Since(f.last) > loginFailureMemory {
		return 0
	}
	return DelayAfter(f.count)
}

// DelayAfter is the delay after n consecutive failed logins.
func DelayAfter(n int) time.Duration {
	if n < loginFreeFailures {
		return 0
	}
	d := loginDelayMin
	for i := loginFreeFailures; i < n && d < LoginDelayMax; i++ {
		d *= 2
	}
	return min(d, LoginDelayMax)
}

func (g *ConnGuard) loginFailed(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	f, ok := g.failures[host]
	if !ok || now.Sub(f.last) > loginFailureMemory {
		if len(g.failures) >= loginAddressesKept {
			g.forgetLocked(now)
		}
		f = &loginFailures{}
		g.failures[host] = f
	}
	f.count++
	f.last = now
}

// forgetLocked drops the idle counts, or any one when none is idle.
func (g *ConnGuard) forgetLocked(now time.Time) {
	for h, f := range g.failures {
		if now.Sub(f.last) > loginFailureMemory {
			delete(g.failures, h)
		}
	}
	for h := range g.failures {
		if len(g.failures) < loginAddressesKept {
			break
		}
		delete(g.failures, h)
	}
}

func (g *ConnGuard) loginSucceeded(host string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.failures, host)
}

// Handler wraps the server's handler with the guard's checks at the
// points of a connection's life: before the handshake (the delay after
// failed logins, the handshake deadline), after authentication (TLS when
// required), after a failed login.
func (g *ConnGuard) Handler(h mysql.Handler) mysql.Handler { return guardHandler{Handler: h, g: g} }

type guardHandler struct {
	mysql.Handler
	g *ConnGuard
}

func (h guardHandler) NewConnection(c *mysql.Conn) {
	if d := h.g.LoginDelay(hostOf(c.RemoteAddr())); d > 0 {
		h.g.Sleep(h.g.closing, d)
	}
	timer := time.AfterFunc(h.g.handshakeTimeout, c.Close)
	h.g.mu.Lock()
	h.g.pending[c.ConnectionID] = timer
	h.g.mu.Unlock()
	if pc, ok := c.Conn.(*packetConn); ok {
		pc.vc = c
		pc.prepare = h.prepareCheck(c)
	}
	h.Handler.NewConnection(c)
}

// prepareCheck checks what c prepares (preparecheck.go).
func (h guardHandler) prepareCheck(c *mysql.Conn) *prepareCheck {
	if h.g.Parser == nil {
		return nil
	}
	return &prepareCheck{
		options: func() (ast.ParserOptions, error) { return h.Handler.ParserOptionsForConnection(c) },
		vc:      c,
		icesql:  h.g.Parser,
	}
}

// loggedIn stops the handshake deadline of c.
func (g *ConnGuard) loggedIn(c *mysql.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if t, ok := g.pending[c.ConnectionID]; ok {
		t.Stop()
		delete(g.pending, c.ConnectionID)
	}
}

func (h guardHandler) ConnectionAuthenticated(c *mysql.Conn) error {
	h.g.loggedIn(c)
	if h.g.requireTLS && !c.TLSEnabled() && !c.IsUnixSocket() {
		return mysqlerr.New(mysqlerr.ErSecureTransportRequired,
			"Connections using insecure transport are prohibited while --require_secure_transport=ON.")
	}
	// From here on the client sends commands: the packet guard checks them.
	if c.TLSEnabled() {
		if err := guardTLS(c, h.prepareCheck(c)); err != nil {
			return mysqlerr.New(mysql.ERUnknownError, "cannot guard the TLS connection: %v", err)
		}
	} else if pc, ok := c.Conn.(*packetConn); ok {
		pc.phase = phaseCommand
	}
	h.g.loginSucceeded(hostOf(c.RemoteAddr()))
	return h.Handler.ConnectionAuthenticated(c)
}

// ConnectionAborted is called for a login that failed: bad password,
// unknown user, or a handshake that could not be parsed.
func (h guardHandler) ConnectionAborted(c *mysql.Conn, reason string) error {
	h.g.loginFailed(hostOf(c.RemoteAddr()))
	return h.Handler.ConnectionAborted(c, reason)
}

func (h guardHandler) ConnectionClosed(c *mysql.Conn) {
	h.g.loggedIn(c)
	h.Handler.ConnectionClosed(c)
}

func hostOf(a net.Addr) string {
	if a == nil {
		return ""
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
