package engine

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/engine/internal/wire"
)

// TestWireCommandPanics: every command that crashed a connection (a
// panic vitess recovered, the client left without an answer) now gets
// MySQL's error, and the connection goes on. One row per panic class the
// wire fuzz found.
func TestWireCommandPanics(t *testing.T) {
	srv := startWireServer(t, ServerConfig{})
	watch := watchPanics(t)
	cases := []struct {
		name    string
		prepare bool
		payload []byte
		code    uint16
		state   string
	}{
		{"empty packet", false, []byte{}, 1047, "08S01"},
		{"COM_BINLOG_DUMP_GTID", false, []byte{0x1e}, 1047, "08S01"},
		{"COM_BINLOG_DUMP_GTID with a body", false, cat([]byte{0x1e, 0, 0}, u32(1), u32(0)), 1047, "08S01"},
		{"COM_REGISTER_SLAVE", false, []byte{0x15}, 1047, "08S01"},
		{"COM_STMT_RESET without a statement id", false, []byte{0x1a}, 1835, "HY000"},
		{"COM_STMT_RESET of an unknown statement", false, cat([]byte{0x1a}, u32(9)), 1243, "HY000"},
		{"COM_STMT_EXECUTE with a length of 2^63", true,
			cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0xfe, 0, 0xfe, 0, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0x80}), 1835, "HY000"},
		{"COM_STMT_EXECUTE of an unknown statement", false, cat([]byte{0x17}, u32(9), []byte{0}, u32(1)), 1243, "HY000"},
		{"COM_FIELD_LIST without NUL", false, []byte("\x04dual"), 1835, "HY000"},
		{"COM_SET_OPTION of an unknown option", false, []byte{0x1b, 2, 0}, 1047, "08S01"},
		{"COM_CHANGE_USER", false, []byte("\x11root\x00\x00\x00"), 1047, "08S01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, srv.Addr())
			r.login()
			if c.prepare {
				if _, err := r.command([]byte("\x16SELECT ?, ?"), 50*time.Millisecond); err != nil {
					t.Fatal(err)
				}
			}
			got, err := r.command(c.payload, 100*time.Millisecond)
			if err != nil || len(got) != 1 {
				t.Fatalf("want one ERR packet, got %x, %v", got, err)
			}
			code, state, msg, ok := mysqlErr(got[0])
			if !ok || code != c.code || state != c.state {
				t.Fatalf("want error %d (%s), got %x", c.code, c.state, got[0])
			}
			if err := r.ping(); err != nil {
				t.Fatalf("after error %d %s: %v", code, msg, err)
			}
			settle()
			if p := watch.take(); len(p) > 0 {
				t.Fatalf("panicked: %s", p[0])
			}
		})
	}
}

// TestWireHandshakePanics: handshake responses that crashed the
// connection before login get Bad handshake (1043) or, for a scramble of
// the wrong length, Access denied (1045).
func TestWireHandshakePanics(t *testing.T) {
	srv := startWireServer(t, ServerConfig{User: "admin", Password: "pw"})
	watch := watchPanics(t)
	cases := []struct {
		name     string
		response []byte
		code     uint16
		state    string
	}{
		{"cut before the reserved bytes", cat(u32(1<<9), u32(0), []byte{45}), 1043, "08S01"},
		{"reserved bytes cut short", cat(u32(1<<9), u32(0), []byte{45}, make([]byte, 10)), 1043, "08S01"},
		{"auth length of 2^63", cat(u32(1<<9|1<<21), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\xfe\x00\x00\x00\x00\x00\x00\x00\x80")), 1043, "08S01"},
		{"user without NUL", cat(u32(1<<9), u32(0), []byte{45}, make([]byte, 23), []byte("admin")), 1043, "08S01"},
		{"native scramble of 1 byte", handshakeResponse("admin", "mysql_native_password", []byte{1}, 0), 1045, "28000"},
		{"native scramble of 19 bytes", handshakeResponse("admin", "mysql_native_password", []byte("0123456789abcdefghi"), 0), 1045, "28000"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := dialRaw(t, srv.Addr())
			if _, _, err := r.read(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if err := r.write(1, c.response); err != nil {
				t.Fatal(err)
			}
			got, err := r.drain(time.Second)
			if len(got) == 0 {
				t.Fatalf("no answer (%v)", err)
			}
			code, state, _, ok := mysqlErr(got[len(got)-1])
			if !ok || code != c.code || state != c.state {
				t.Fatalf("want error %d (%s), got %x", c.code, c.state, got)
			}
			settle()
			if p := watch.take(); len(p) > 0 {
				t.Fatalf("panicked: %s", p[0])
			}
		})
	}
	// The server still logs clients in.
	if err := dial(t, srv, "admin", "pw").Ping(); err != nil {
		t.Fatal(err)
	}
}

// setMaxAllowedPacket sets @@global.max_allowed_packet for the test.
func setMaxAllowedPacket(t *testing.T, db *sql.DB, n int) {
	t.Helper()
	mustExec(t, db, fmt.Sprintf("SET GLOBAL max_allowed_packet = %d", n))
	t.Cleanup(func() {
		if _, err := db.Exec(fmt.Sprintf("SET GLOBAL max_allowed_packet = %d", sqlfunc.DefaultMaxAllowedPacket)); err != nil {
			t.Errorf("restore max_allowed_packet: %v", err)
		}
	})
}

// TestPacketTooLarge: a command longer than max_allowed_packet gets
// MySQL's 1153 (08S01) and the connection closes; the server reads past
// it without keeping it (its allocations stay far below the command's
// size) and keeps serving others. One just below the limit is served.
func TestPacketTooLarge(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{})
	admin := dial(t, srv, "root", "")
	const limit = 1 << 20
	setMaxAllowedPacket(t, admin, limit)

	t.Run("raw 40 MiB query", func(t *testing.T) {
		r := dialRaw(t, srv.Addr())
		r.login()
		payload := append([]byte("\x03SELECT '"), bytes.Repeat([]byte("x"), 40<<20)...)
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		for seq, p := byte(0), payload; ; seq++ {
			n := min(len(p), wire.MaxPacketPayload)
			if _, err := r.c.Write([]byte{byte(n), byte(n >> 8), byte(n >> 16), seq}); err != nil {
				t.Fatal(err)
			}
			if _, err := r.c.Write(p[:n]); err != nil {
				t.Fatal(err)
			}
			if p = p[n:]; n < wire.MaxPacketPayload {
				break
			}
		}
		seq, p, err := r.read(30 * time.Second)
		if err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		code, state, msg, ok := mysqlErr(p)
		if !ok || code != 1153 || state != "08S01" || msg != wire.MsgPacketTooLarge {
			t.Fatalf("want 1153, got %x", p)
		}
		if seq != 3 { // after the client's packets 0, 1 and 2
			t.Fatalf("sequence id of the error: %d, want 3", seq)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 8<<20 {
			t.Fatalf("the server allocated %d bytes for a refused 40 MiB packet", grew)
		}
		if _, _, err := r.read(10 * time.Second); err == nil {
			t.Fatal("connection still open after 1153")
		}
	})

	t.Run("driver", func(t *testing.T) {
		db := dial(t, srv, "root", "", func(c *mysql.Config) { c.MaxAllowedPacket = 64 << 20 })
		var n int
		err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("y", limit) + "')").Scan(&n)
		wantCode(t, "query longer than max_allowed_packet", err, 1153, "08S01")
		// The server closed that connection, as MySQL does; a new one
		// is served up to the limit.
		db = dial(t, srv, "root", "", func(c *mysql.Config) { c.MaxAllowedPacket = 64 << 20 })
		q := "SELECT LENGTH('" + strings.Repeat("y", limit-100) + "')"
		if err := db.QueryRow(q).Scan(&n); err != nil || n != limit-100 {
			t.Fatalf("query just below max_allowed_packet: %d, %v", n, err)
		}
	})

	if err := admin.Ping(); err != nil {
		t.Fatalf("other connections after the refusals: %v", err)
	}
}

// TestLongDataBound: COM_STMT_SEND_LONG_DATA beyond max_allowed_packet
// for one parameter is dropped and the execution fails as in MySQL
// (1105), without the server keeping more than the limit; data for a
// parameter the statement lacks fails it with 1210.
func TestLongDataBound(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{})
	admin := dial(t, srv, "root", "")
	const limit = 1 << 20
	setMaxAllowedPacket(t, admin, limit)

	t.Run("driver", func(t *testing.T) {
		// The driver sends a parameter of 3 MiB as long data in chunks
		// below max_allowed_packet.
		db := dial(t, srv, "root", "", func(c *mysql.Config) { c.MaxAllowedPacket = limit })
		var n int
		err := db.QueryRow("SELECT LENGTH(?)", strings.Repeat("z", 3<<20)).Scan(&n)
		wantCode(t, "long data beyond max_allowed_packet", err, 1105, "HY000")
		var me *mysql.MySQLError
		if errors.As(err, &me) && me.Message != wire.MsgLongDataTooLong {
			t.Fatalf("message: %q", me.Message)
		}
		if err := db.QueryRow("SELECT LENGTH(?)", strings.Repeat("z", limit/2)).Scan(&n); err != nil || n != limit/2 {
			t.Fatalf("long data within max_allowed_packet: %d, %v", n, err)
		}
	})

	t.Run("raw, unknown parameter", func(t *testing.T) {
		r := dialRaw(t, srv.Addr())
		r.login()
		if _, err := r.command([]byte("\x16SELECT ?"), 50*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := r.write(0, cat([]byte{0x18}, u32(1), []byte{3, 0}, []byte("abc"))); err != nil {
			t.Fatal(err)
		}
		got, err := r.command(cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0}, make([]byte, 8)), 100*time.Millisecond)
		if err != nil || len(got) == 0 {
			t.Fatalf("no answer to the execution: %v", err)
		}
		if code, state, _, ok := mysqlErr(got[0]); !ok || code != 1210 || state != "HY000" {
			t.Fatalf("want 1210, got %x", got[0])
		}
		// The error is reported once; the next execution runs.
		got, err = r.command(cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0}, make([]byte, 8)), 100*time.Millisecond)
		if err != nil || len(got) == 0 || got[0][0] == 0xff {
			t.Fatalf("second execution: %x, %v", got, err)
		}
	})
}

// TestPacketTooLargeOverTLS: over TLS the guard reads the decrypted
// stream (guardTLS), with the same answers.
func TestPacketTooLargeOverTLS(t *testing.T) {
	serverTLS, clientTLS := selfSignedTLS(t)
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{TLS: serverTLS})
	admin := dial(t, srv, "root", "", withTLS(clientTLS))
	const limit = 1 << 20
	setMaxAllowedPacket(t, admin, limit)
	db := dial(t, srv, "root", "", withTLS(clientTLS), func(c *mysql.Config) { c.MaxAllowedPacket = 64 << 20 })
	var n int
	err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("y", limit) + "')").Scan(&n)
	wantCode(t, "query longer than max_allowed_packet over TLS", err, 1153, "08S01")
	db = dial(t, srv, "root", "", withTLS(clientTLS), func(c *mysql.Config) { c.MaxAllowedPacket = 64 << 20 })
	if err := db.QueryRow("SELECT LENGTH('" + strings.Repeat("y", limit-100) + "')").Scan(&n); err != nil || n != limit-100 {
		t.Fatalf("query just below max_allowed_packet over TLS: %d, %v", n, err)
	}
}

// TestCachingSha2WithoutTLS: a caching_sha2_password account logs in over
// plain TCP the MySQL 8 way (the client fetches the server's RSA key and
// sends the password encrypted with it); a wrong password is 1045, and an
// account that requires TLS is still refused without it.
func TestCachingSha2WithoutTLS(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{User: "admin", Password: "pw"})
	admin := dial(t, srv, "admin", "pw")
	mustExec(t, admin,
		"CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
		"CREATE USER 'shassl'@'%' IDENTIFIED WITH caching_sha2_password BY 'pw' REQUIRE SSL",
		"CREATE USER 'nopw'@'%' IDENTIFIED WITH caching_sha2_password",
	)
	for range 2 { // the key is made once, then reused
		var user string
		if err := dial(t, srv, "sha", "sha-pw").QueryRow("SELECT CURRENT_USER()").Scan(&user); err != nil || user != "sha@%" {
			t.Fatalf("caching_sha2_password without TLS: %q, %v", user, err)
		}
	}
	_, err := dial(t, srv, "sha", "wrong").Exec("SELECT 1")
	wantCode(t, "caching_sha2_password with a wrong password", err, 1045, "28000")
	_, err = dial(t, srv, "shassl", "pw").Exec("SELECT 1")
	wantCode(t, "REQUIRE SSL account without TLS", err, 1045, "28000")
	if err := dial(t, srv, "nopw", "").Ping(); err != nil {
		t.Fatalf("caching_sha2_password account without a password: %v", err)
	}
	if err := admin.Ping(); err != nil {
		t.Fatal(err)
	}
}

// TestRequireSecureTransportVariable: @@require_secure_transport says what
// the server enforces.
func TestRequireSecureTransportVariable(t *testing.T) {
	serverTLS, clientTLS := selfSignedTLS(t)
	for _, require := range []bool{true, false} {
		_, srv := startTestServer(t, t.TempDir(), ServerConfig{TLS: serverTLS, RequireSecureTransport: require})
		var on int
		if err := dial(t, srv, "root", "", withTLS(clientTLS)).QueryRow("SELECT @@require_secure_transport").Scan(&on); err != nil {
			t.Fatal(err)
		}
		if (on == 1) != require {
			t.Fatalf("--require-secure-transport %v: @@require_secure_transport = %d", require, on)
		}
		srv.Close()
	}
}
