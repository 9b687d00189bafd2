package engine

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	vtlog "github.com/dolthub/vitess/go/vt/log"
)

// rawConn speaks the MySQL protocol byte by byte, so that tests can send
// what no client library would: truncated handshakes, bad lengths, garbage
// commands.
type rawConn struct {
	t *testing.T
	c net.Conn
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &rawConn{t: t, c: c}
}

// write sends payload as one packet with sequence id seq (split in
// 16 MiB - 1 pieces as the protocol wants when longer).
func (r *rawConn) write(seq byte, payload []byte) error {
	for {
		n := min(len(payload), 1<<24-1)
		var h [4]byte
		h[0], h[1], h[2], h[3] = byte(n), byte(n>>8), byte(n>>16), seq
		if _, err := r.c.Write(append(h[:], payload[:n]...)); err != nil {
			return err
		}
		seq++
		payload = payload[n:]
		if n < 1<<24-1 {
			return nil
		}
	}
}

// read returns the next packet's sequence id and payload (one physical
// packet), waiting at most d.
func (r *rawConn) read(d time.Duration) (byte, []byte, error) {
	r.c.SetReadDeadline(time.Now().Add(d))
	var h [4]byte
	if _, err := io.ReadFull(r.c, h[:]); err != nil {
		return 0, nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	p := make([]byte, n)
	if _, err := io.ReadFull(r.c, p); err != nil {
		return 0, nil, err
	}
	return h[3], p, nil
}

// handshakeResponse is a HandshakeResponse41 for user with an empty
// password, announcing plugin (empty: none).
func handshakeResponse(user, plugin string, authResponse []byte, extraFlags uint32) []byte {
	flags := uint32(1<<9 | 1<<15 | 1<<24 | 1<<16 | 1<<17 | 1<<13 | 1<<0 | 1<<2) // protocol41, secure conn, deprecate EOF, multi stmts/results, transactions
	flags |= extraFlags
	if plugin != "" {
		flags |= 1 << 19
	}
	p := binary.LittleEndian.AppendUint32(nil, flags)
	p = binary.LittleEndian.AppendUint32(p, 1<<24)
	p = append(p, 45) // utf8mb4
	p = append(p, make([]byte, 23)...)
	p = append(p, user...)
	p = append(p, 0)
	p = append(p, byte(len(authResponse)))
	p = append(p, authResponse...)
	if plugin != "" {
		p = append(p, plugin...)
		p = append(p, 0)
	}
	return p
}

// login reads the server's greeting and logs in as root without a
// password, returning the greeting's salt.
func (r *rawConn) login() []byte {
	r.t.Helper()
	_, greeting, err := r.read(10 * time.Second)
	if err != nil {
		r.t.Fatalf("read greeting: %v", err)
	}
	if err := r.write(1, handshakeResponse("root", "mysql_native_password", nil, 0)); err != nil {
		r.t.Fatal(err)
	}
	_, ok, err := r.read(10 * time.Second)
	if err != nil || len(ok) == 0 || ok[0] != 0 {
		r.t.Fatalf("login: %x, %v", ok, err)
	}
	return greetingSalt(greeting)
}

func greetingSalt(g []byte) []byte {
	pos := 1 + strings.IndexByte(string(g[1:]), 0) + 1 + 4
	salt := append([]byte(nil), g[pos:pos+8]...)
	pos += 8 + 1 + 2 + 1 + 2 + 2 + 1 + 10
	return append(salt, g[pos:pos+12]...)
}

// command sends a command packet and collects the server's answer: the
// packets it sends within d of the last one.
func (r *rawConn) command(payload []byte, d time.Duration) ([][]byte, error) {
	if err := r.write(0, payload); err != nil {
		return nil, err
	}
	return r.drain(d)
}

// drain collects the packets that arrive until the server falls silent for
// d; the error is nil on silence and what ended the connection otherwise.
func (r *rawConn) drain(d time.Duration) ([][]byte, error) {
	var got [][]byte
	for {
		_, p, err := r.read(d)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			return got, nil
		}
		if err != nil {
			return got, err
		}
		got = append(got, p)
	}
}

// ping checks that the connection still answers COM_PING with OK.
func (r *rawConn) ping() error {
	if err := r.write(0, []byte{0x0e}); err != nil {
		return err
	}
	for {
		_, p, err := r.read(10 * time.Second)
		if err != nil {
			return fmt.Errorf("no answer to COM_PING: %w", err)
		}
		if len(p) > 0 && p[0] == 0 {
			return nil
		}
		// answers of the previous command may still be arriving
	}
}

// mysqlErr decodes an ERR packet: code, SQLSTATE, message.
func mysqlErr(p []byte) (code uint16, state, msg string, ok bool) {
	if len(p) < 9 || p[0] != 0xff || p[3] != '#' {
		return 0, "", "", false
	}
	return binary.LittleEndian.Uint16(p[1:3]), string(p[4:9]), string(p[9:]), true
}

// panicWatch counts the panics that vitess recovers and logs while a test
// runs ("mysql_server caught panic"): each one is a connection dropped by
// a crash instead of answered.
type panicWatch struct {
	mu     sync.Mutex
	panics []string
}

func watchPanics(t testing.TB) *panicWatch {
	w := &panicWatch{}
	prev := vtlog.Errorf
	vtlog.Errorf = func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		if strings.Contains(msg, "caught panic") {
			w.mu.Lock()
			w.panics = append(w.panics, msg)
			w.mu.Unlock()
		}
	}
	t.Cleanup(func() { vtlog.Errorf = prev })
	return w
}

// take returns and forgets the panics seen so far.
func (w *panicWatch) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.panics
	w.panics = nil
	return p
}

// settle waits until the connection's handler goroutine has finished with
// what it was sent, so that a panic it causes is logged before take.
func settle() { time.Sleep(20 * time.Millisecond) }
