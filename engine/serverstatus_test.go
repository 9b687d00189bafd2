package engine_test

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/icesql/icesql/engine"
)

// Server status flags of the MySQL protocol.
const (
	statusInTrans    = 0x0001 // SERVER_STATUS_IN_TRANS
	statusAutocommit = 0x0002 // SERVER_STATUS_AUTOCOMMIT
)

// rawClient speaks just enough of the MySQL protocol to see the status
// flags the server sends, which drivers hide: pymysql reads autocommit
// from the handshake's flags, and a driver that trusts flags 0x0000 never
// turns autocommit off, so its rollback() does nothing.
type rawClient struct {
	conn net.Conn
	r    *bufio.Reader
	seq  byte
}

func (c *rawClient) readPacket(t *testing.T) []byte {
	t.Helper()
	var head [4]byte
	if _, err := io.ReadFull(c.r, head[:]); err != nil {
		t.Fatalf("read packet header: %v", err)
	}
	n := int(head[0]) | int(head[1])<<8 | int(head[2])<<16
	c.seq = head[3] + 1
	body := make([]byte, n)
	if _, err := io.ReadFull(c.r, body); err != nil {
		t.Fatalf("read packet: %v", err)
	}
	return body
}

func (c *rawClient) writePacket(t *testing.T, body []byte) {
	t.Helper()
	head := []byte{byte(len(body)), byte(len(body) >> 8), byte(len(body) >> 16), c.seq}
	if _, err := c.conn.Write(append(head, body...)); err != nil {
		t.Fatalf("write packet: %v", err)
	}
	c.seq++
}

// okStatus reads an OK packet and returns its status flags.
func (c *rawClient) okStatus(t *testing.T, what string) uint16 {
	t.Helper()
	p := c.readPacket(t)
	if len(p) == 0 || p[0] != 0x00 {
		t.Fatalf("%s: want an OK packet, got %q", what, p)
	}
	i := 1
	for range 2 { // affected rows, last insert id: length-encoded integers
		switch {
		case p[i] < 0xfb:
			i++
		case p[i] == 0xfc:
			i += 3
		case p[i] == 0xfd:
			i += 4
		default:
			i += 9
		}
	}
	return binary.LittleEndian.Uint16(p[i:])
}

// dialRaw connects and logs in as root (no password), returning the
// handshake's status flags and the login OK's.
func dialRaw(t *testing.T, addr string) (c *rawClient, handshake, login uint16) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	c = &rawClient{conn: conn, r: bufio.NewReader(conn)}
	p := c.readPacket(t)
	if p[0] != 10 {
		t.Fatalf("handshake protocol %d, want 10", p[0])
	}
	i := 1
	for p[i] != 0 { // server version
		i++
	}
	i += 1 + 4 + 8 + 1 + 2 + 1 // NUL, connection id, auth data, filler, capabilities, charset
	handshake = binary.LittleEndian.Uint16(p[i:])

	const caps = 0x0001 | 0x0200 | 0x2000 | 0x8000 | 0x80000 // long password, 4.1, transactions, secure connection, plugin auth
	resp := binary.LittleEndian.AppendUint32(nil, caps)
	resp = binary.LittleEndian.AppendUint32(resp, 1<<24)
	resp = append(resp, 33)
	resp = append(resp, make([]byte, 23)...)
	resp = append(resp, "root\x00"...)
	resp = append(resp, 0) // empty auth response
	resp = append(resp, "mysql_native_password\x00"...)
	c.writePacket(t, resp)
	for {
		p = c.readPacket(t)
		if p[0] != 0xfe { // not an auth switch request
			break
		}
		c.writePacket(t, nil)
	}
	if p[0] != 0x00 {
		t.Fatalf("login: %q", p)
	}
	c.r = bufio.NewReader(io.MultiReader(bytesReader(p), c.r))
	return c, handshake, c.okStatus(t, "login")
}

// bytesReader puts a read packet back in front of the stream.
func bytesReader(body []byte) io.Reader {
	head := []byte{byte(len(body)), byte(len(body) >> 8), byte(len(body) >> 16), 2}
	return &sliceReader{b: append(head, body...)}
}

type sliceReader struct{ b []byte }

func (s *sliceReader) Read(p []byte) (int, error) {
	if len(s.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.b)
	s.b = s.b[n:]
	return n, nil
}

// query sends a statement that answers with OK and returns its status flags.
func (c *rawClient) query(t *testing.T, q string) uint16 {
	t.Helper()
	c.seq = 0
	c.writePacket(t, append([]byte{0x03}, q...))
	return c.okStatus(t, q)
}

// TestServerStatusFlags: the handshake and every OK packet carry
// SERVER_STATUS_AUTOCOMMIT while autocommit is on and
// SERVER_STATUS_IN_TRANS while a transaction is open, as MySQL's do.
func TestServerStatusFlags(t *testing.T) {
	e := openEngine(t, engine.Config{Warehouse: t.TempDir()})
	addr := wireServer(t, e)
	c, handshake, login := dialRaw(t, addr)
	if handshake != statusAutocommit {
		t.Errorf("handshake status flags %#04x, want %#04x (autocommit)", handshake, statusAutocommit)
	}
	if login != statusAutocommit {
		t.Errorf("login OK status flags %#04x, want %#04x", login, statusAutocommit)
	}
	// mask: the flags checked. Right after SET autocommit = 0 go-mysql-server
	// already reports the implicit transaction open, where MySQL does at
	// the next statement; no client is known to depend on that difference.
	const both = statusAutocommit | statusInTrans
	steps := []struct {
		q          string
		want, mask uint16
	}{
		{"CREATE DATABASE d", statusAutocommit, both},
		{"CREATE TABLE d.t (id BIGINT)", statusAutocommit, both},
		{"INSERT INTO d.t VALUES (1)", statusAutocommit, both},
		{"BEGIN", statusAutocommit | statusInTrans, both},
		{"INSERT INTO d.t VALUES (2)", statusAutocommit | statusInTrans, both},
		{"ROLLBACK", statusAutocommit, both},
		{"SET autocommit = 0", 0, statusAutocommit},
		{"INSERT INTO d.t VALUES (3)", statusInTrans, both},
		{"COMMIT", 0, both},
		{"INSERT INTO d.t VALUES (4)", statusInTrans, both},
		{"ROLLBACK", 0, both},
		{"SET autocommit = 1", statusAutocommit, both},
	}
	for _, s := range steps {
		if got := c.query(t, s.q); got&s.mask != s.want {
			t.Errorf("%s: status flags %s, want %s", s.q, flags(got), flags(s.want))
		}
	}
}

func flags(f uint16) string {
	return fmt.Sprintf("%#04x (in_trans=%v autocommit=%v)", f, f&statusInTrans != 0, f&statusAutocommit != 0)
}
