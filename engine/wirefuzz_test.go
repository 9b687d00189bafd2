package engine

import (
	"context"
	"encoding/binary"
	"testing"
	"time"
)

// The wire fuzz tests speak raw MySQL packets to a served engine, before
// and after login. Each input must leave the server answering: no
// recovered panic, and a connection the server ends only after an ERR
// packet that says why. `go test` runs the seeds (a few seconds); a longer
// search runs with
//
//	go test -run '^$' -fuzz FuzzWireCommand -fuzztime 10m ./engine
//	go test -run '^$' -fuzz FuzzWireHandshake -fuzztime 10m ./engine

// startWireServer serves a fresh warehouse on a free loopback port.
func startWireServer(tb testing.TB, cfg ServerConfig) *Server {
	tb.Helper()
	e, err := Open(context.Background(), Config{Warehouse: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	cfg.Addr = "127.0.0.1:0"
	srv, err := e.NewServer(cfg)
	if err != nil {
		e.Close()
		tb.Fatal(err)
	}
	// Failed logins are the point here: no delay after them (wire/connguard.go).
	srv.guard.Sleep = func(context.Context, time.Duration) {}
	go srv.Start()
	tb.Cleanup(func() {
		srv.Close()
		e.Close()
	})
	return srv
}

func u32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func cat(parts ...[]byte) []byte {
	var out []byte
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// commandSeeds are command packets that once crashed a connection or
// probe a parser's edges. Statement 1 is `SELECT ?, ?` when the input asks
// for it to be prepared first.
var commandSeeds = []struct {
	prepare bool
	payload []byte
}{
	{false, []byte{}},                         // empty packet: no command byte
	{false, []byte{0x03}},                     // COM_QUERY without text
	{false, []byte{0x02}},                     // COM_INIT_DB without name
	{false, []byte("\x02no_such_db")},         // COM_INIT_DB of a missing database
	{false, []byte{0x04}},                     // COM_FIELD_LIST without table
	{false, []byte("\x04dual")},               // COM_FIELD_LIST without NUL
	{false, []byte("\x04no_such\x00%")},       // COM_FIELD_LIST of a missing table
	{false, []byte{0x11}},                     // COM_CHANGE_USER, truncated
	{false, []byte("\x11root\x00\x00\x00")},   // COM_CHANGE_USER
	{false, []byte{0x1b}},                     // COM_SET_OPTION, truncated
	{false, []byte{0x1b, 2, 0}},               // COM_SET_OPTION, unknown option
	{false, []byte{0x1b, 0, 0}},               // COM_SET_OPTION multi-statements on
	{false, []byte{0x1c}},                     // COM_STMT_FETCH, truncated
	{true, cat([]byte{0x1c}, u32(1), u32(1))}, // COM_STMT_FETCH without a cursor
	{false, []byte{0x12}},                     // COM_BINLOG_DUMP, truncated
	{false, cat([]byte{0x12}, u32(4), []byte{0, 0}, u32(1), []byte("binlog.000001"))},
	{false, []byte{0x1e}},                            // COM_BINLOG_DUMP_GTID, truncated
	{false, cat([]byte{0x1e, 0, 0}, u32(1), u32(0))}, // COM_BINLOG_DUMP_GTID
	{false, []byte{0x15}},                            // COM_REGISTER_SLAVE, truncated
	{false, cat([]byte{0x15}, u32(7), []byte{0, 0, 0, 0, 0})},
	{false, []byte{0x1f}},                                                          // COM_RESET_CONNECTION
	{false, []byte{0x1a}},                                                          // COM_STMT_RESET, truncated
	{false, cat([]byte{0x1a}, u32(9))},                                             // COM_STMT_RESET of an unknown statement
	{true, cat([]byte{0x1a}, u32(1))},                                              // COM_STMT_RESET
	{false, []byte{0x19}},                                                          // COM_STMT_CLOSE, truncated
	{false, []byte{0x18}},                                                          // COM_STMT_SEND_LONG_DATA, truncated
	{false, cat([]byte{0x18}, u32(9), []byte{0, 0, 'x'})},                          // ... for an unknown statement
	{true, cat([]byte{0x18}, u32(1), []byte{5, 0, 'x'})},                           // ... for a parameter it lacks
	{true, cat([]byte{0x18}, u32(1), []byte{0, 0, 'x'})},                           // ... for a parameter it has
	{false, []byte{0x16}},                                                          // COM_STMT_PREPARE without text
	{false, []byte("\x16SELECT ?")},                                                // COM_STMT_PREPARE
	{false, []byte("\x16SELECT ?; SELECT ?")},                                      // two statements
	{false, []byte{0x17}},                                                          // COM_STMT_EXECUTE, truncated
	{false, cat([]byte{0x17}, u32(9), []byte{0}, u32(1))},                          // ... of an unknown statement
	{true, cat([]byte{0x17}, u32(1))},                                              // ... truncated after the id
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1))},                           // ... without null bitmap
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0})},                // ... bitmap, no bound flag
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1})},             // ... bound flag, no types
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0})},       // ... one type of two
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0, 8, 0})}, // ... types, no values
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 8, 0, 8, 0, 1, 2})},
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0xfe, 0, 0xfe, 0, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})},
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0xfe, 0, 0xfe, 0, 0xfd, 1, 2, 3})},
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0x99, 0, 0x42, 0, 1, 2, 3, 4})},                                    // unknown types
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{3, 1, 8, 0, 8, 0})},                                                      // both NULL
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0x0c, 0, 0x0b, 0, 11, 0xe8, 0x07, 1, 1, 1, 1, 1, 1, 0, 0, 0, 20})}, // datetime, bad time length
	{true, cat([]byte{0x17}, u32(1), []byte{0}, u32(1), []byte{0, 1, 0x0b, 0, 0x0a, 0, 8, 1, 0, 0, 0, 0, 1, 1, 1, 4, 0xe8})},            // time, truncated date
	{true, cat([]byte{0x17}, u32(1), []byte{1}, u32(1), []byte{0, 1, 8, 0, 8, 0}, make([]byte, 16))},                                    // read-only cursor
	{true, cat([]byte{0x17}, u32(1), []byte{0x7f}, u32(1), []byte{0, 0})},                                                               // bad cursor flags, types not bound
	{false, []byte{0x01}}, // COM_QUIT
	{false, []byte{0x0e}}, // COM_PING
	{false, []byte{0x00}}, // COM_SLEEP
	{false, []byte{0x05}}, // COM_CREATE_DB
	{false, []byte{0x0d}}, // COM_DEBUG
	{false, []byte{0xff, 0xfe}},
}

// FuzzWireCommand sends one command packet after login (after preparing
// `SELECT ?, ?` as statement 1 when prepare is set).
func FuzzWireCommand(f *testing.F) {
	for _, s := range commandSeeds {
		f.Add(s.prepare, s.payload)
	}
	srv := startWireServer(f, ServerConfig{})
	watch := watchPanics(f)
	f.Fuzz(func(t *testing.T, prepare bool, payload []byte) {
		checkCommand(t, srv, watch, prepare, payload)
	})
}

// checkCommand sends payload as a command and checks that the server
// answered it without crashing the connection.
func checkCommand(t *testing.T, srv *Server, watch *panicWatch, prepare bool, payload []byte) {
	t.Helper()
	r := dialRaw(t, srv.Addr())
	r.login()
	if prepare {
		if _, err := r.command([]byte("\x16SELECT ?, ?"), 50*time.Millisecond); err != nil {
			t.Fatalf("prepare: %v", err)
		}
	}
	got, err := r.command(payload, 50*time.Millisecond)
	if err == nil && (len(payload) == 0 || payload[0] != 0x01) {
		err = r.ping()
	}
	settle()
	if p := watch.take(); len(p) > 0 {
		t.Fatalf("command %x: the server panicked: %s", payload, p[0])
	}
	if err == nil || (len(payload) > 0 && payload[0] == 0x01) {
		return
	}
	// The server ended the connection: it must have said why.
	if len(got) == 0 {
		t.Fatalf("command %x: connection dropped without an answer (%v)", payload, err)
	}
	if _, _, _, ok := mysqlErr(got[len(got)-1]); !ok {
		t.Fatalf("command %x: connection dropped after %x, not an ERR packet (%v)", payload, got[len(got)-1], err)
	}
}

// handshakeSeeds are handshake responses that are truncated or carry bad
// lengths, flags, plugin names or plugin data.
var handshakeSeeds = [][]byte{
	{},
	{0x00},
	u32(1 << 9),                        // flags only
	cat(u32(1<<9), u32(0)),             // no character set
	cat(u32(1<<9), u32(0), []byte{45}), // no reserved bytes
	cat(u32(1<<9), u32(0), []byte{45}, make([]byte, 10)),                                                                // reserved bytes cut short
	cat(u32(1<<9), u32(0), []byte{45}, make([]byte, 23)),                                                                // no user
	cat(u32(1<<9), u32(0), []byte{45}, make([]byte, 23), []byte("admin")),                                               // user without NUL
	cat(u32(0), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\x00")),                                          // not protocol 4.1
	cat(u32(1<<9|1<<21), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff")), // lenenc length 2^64-1
	cat(u32(1<<9|1<<21), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\xfe\x00\x00\x00\x00\x00\x00\x00\x80")), // lenenc length 2^63
	cat(u32(1<<9|1<<21), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\xfd\xff\xff")),                         // lenenc longer than the packet
	cat(u32(1<<9|1<<15), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\x14ab")),                               // auth length beyond the packet
	cat(u32(1<<9|1<<3), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\x00")),                                  // connect-with-db, no db
	cat(u32(1<<9|1<<19), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\x00")),                                 // plugin flag, no plugin
	cat(u32(1<<9|1<<20), u32(0), []byte{45}, make([]byte, 23), []byte("admin\x00\x00\xfc\xff\xff\x05ab")),               // attributes cut short
	cat(u32(1<<9|1<<11), u32(0), []byte{45}, make([]byte, 23)),                                                          // SSL request without TLS
	handshakeResponse("admin", "mysql_native_password", []byte{1}, 0),                                                   // scramble of 1 byte
	handshakeResponse("admin", "mysql_native_password", []byte("0123456789abcdefghi"), 0),                               // 19 bytes
	handshakeResponse("admin", "mysql_native_password", make([]byte, 255), 0),
	handshakeResponse("admin", "caching_sha2_password", []byte{1}, 0),
	handshakeResponse("admin", "caching_sha2_password", nil, 0),
	handshakeResponse("admin", "mysql_clear_password", []byte("pw\x00"), 0),
	handshakeResponse("admin", "mysql_clear_password", nil, 0),
	handshakeResponse("admin", "dialog", nil, 0),
	handshakeResponse("admin", "sha256_password", []byte{1, 2, 3}, 0),
	handshakeResponse("admin", "\xff\xfe", []byte{1, 2, 3}, 0),
	handshakeResponse("nobody", "mysql_native_password", make([]byte, 20), 0),
	handshakeResponse("", "", nil, 0),
	handshakeResponse("admin", "mysql_native_password", nil, 1<<3), // connect-with-db, db missing
}

// FuzzWireHandshake sends one handshake response, then, when the server
// asks for more (auth switch, more data), reply.
func FuzzWireHandshake(f *testing.F) {
	for _, s := range handshakeSeeds {
		f.Add(s, []byte{})
		f.Add(s, []byte{1})
	}
	srv := startWireServer(f, ServerConfig{User: "admin", Password: "pw"})
	watch := watchPanics(f)
	f.Fuzz(func(t *testing.T, response, reply []byte) {
		checkHandshake(t, srv, watch, response, reply)
	})
}

func checkHandshake(t *testing.T, srv *Server, watch *panicWatch, response, reply []byte) {
	t.Helper()
	r := dialRaw(t, srv.Addr())
	if _, _, err := r.read(10 * time.Second); err != nil {
		t.Fatalf("greeting: %v", err)
	}
	if err := r.write(1, response); err != nil {
		t.Fatal(err)
	}
	got, err := r.drain(50 * time.Millisecond)
	if err == nil && len(got) > 0 && (got[len(got)-1][0] == 0xfe || got[len(got)-1][0] == 0x01) {
		// auth switch or more data: answer with reply
		if werr := r.write(byte(1+2*len(got)), reply); werr == nil {
			var more [][]byte
			more, err = r.drain(50 * time.Millisecond)
			got = append(got, more...)
		}
	}
	settle()
	if p := watch.take(); len(p) > 0 {
		t.Fatalf("handshake %x / %x: the server panicked: %s", response, reply, p[0])
	}
	if err == nil {
		return // logged in, or the server waits for more
	}
	if len(got) == 0 {
		t.Fatalf("handshake %x / %x: connection dropped without an answer (%v)", response, reply, err)
	}
	if _, _, _, ok := mysqlErr(got[len(got)-1]); !ok {
		t.Fatalf("handshake %x / %x: connection dropped after %x, not an ERR packet (%v)", response, reply, got[len(got)-1], err)
	}
}
