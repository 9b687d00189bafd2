package wire

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"reflect"
	"time"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
)

// packetConn reads the client's side of a MySQL connection one packet
// ahead of vitess, which reads from it. vitess trusts what clients send:
// it reads a packet of any size into memory (max_allowed_packet is not
// enforced on input), accumulates COM_STMT_SEND_LONG_DATA without bound,
// and several of its parsers index past the end of a short or malformed
// packet, a panic that drops the connection without a word. The guard
// checks each packet before vitess sees it and answers what vitess would
// mishandle the way MySQL does:
//
//   - a command larger than @@max_allowed_packet: error 1153, after the
//     rest of it was read and discarded (never buffered), then the
//     connection closes; a packet before login larger than
//     preLoginPacketLimit likewise;
//   - a malformed handshake response: error 1043 (Bad handshake), closed;
//   - an empty packet or a command icesql does not serve: 1047;
//   - a malformed command: 1835; an unknown statement id: 1243;
//   - COM_STMT_SEND_LONG_DATA, which MySQL never answers, for an unknown
//     statement or parameter, or beyond max_allowed_packet per parameter:
//     dropped, and the statement's next COM_STMT_EXECUTE fails as MySQL's
//     does (1210, 1105).
//
// Over TLS the bytes below vitess are encrypted: the guard reads the
// handshake up to the SSL request, and a second guard reads the decrypted
// stream from login on (guardTLS).
type packetConn struct {
	net.Conn
	in       *bufio.Reader
	tls      bool         // the server offers TLS
	maxInput func() int64 // @@max_allowed_packet
	vc       *mysql.Conn  // vitess's connection over this one, once known
	phase    wirePhase
	lastSeq  byte // sequence id of the last packet read
	infile   bool // reading the contents of a LOAD DATA LOCAL file
	// seqShift moves the sequence id of the next packet vitess writes, after
	// an authentication exchange the guard extended (wireauth.go); hdrSeen
	// counts the bytes of that packet's header written so far.
	seqShift, hdrSeen byte
	out               []byte // checked bytes vitess has yet to read
	pass              int    // bytes of the current packet vitess reads straight from in
	more              bool   // the last packet had the maximum length: a continuation follows
	total             int64  // payload bytes of the current message so far
	// longData counts COM_STMT_SEND_LONG_DATA bytes per statement and
	// parameter; stmtErr is the error a statement's next execution gets.
	longData map[longDataKey]int64
	stmtErr  map[uint32]*mysql.SQLError
	// prepare checks statements to be prepared (preparecheck.go); nil
	// until the connection is known.
	prepare *prepareCheck
}

type wirePhase int

const (
	phaseGreeting wirePhase = iota // the client's first packet: handshake response or SSL request
	phaseAuth                      // authentication exchange
	phaseCommand                   // logged in
	phaseOpaque                    // TLS records: guardTLS reads above them
)

type longDataKey struct {
	stmt  uint32
	param uint16
}

const (
	// MaxPacketPayload is the longest payload of one packet; a message
	// longer than that continues in the next packet.
	MaxPacketPayload = 1<<24 - 1
	// preLoginPacketLimit bounds what a client sends before it is logged
	// in (handshake response, authentication data: a few hundred bytes).
	preLoginPacketLimit = 64 << 10
	// discardTimeout is how long the guard reads the rest of an oversized
	// message before it gives up on the client reading its error.
	discardTimeout = 10 * time.Second

	MsgPacketTooLarge     = "Got a packet bigger than 'max_allowed_packet' bytes"
	msgMalformedPacket    = "Malformed communication packet."
	MsgLongDataTooLong    = "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes"
	msgLongDataBadArgment = "Incorrect arguments to mysqld_stmt_send_long_data"
)

// errConnectionRefused ends a connection the guard answered with an error.
var errConnectionRefused = errors.New("connection closed after a protocol error")

func newPacketConn(c net.Conn, tls bool, phase wirePhase) *packetConn {
	return &packetConn{
		Conn:     c,
		in:       bufio.NewReaderSize(c, 16<<10),
		tls:      tls,
		maxInput: globalMaxAllowedPacket,
		phase:    phase,
		longData: map[longDataKey]int64{},
		stmtErr:  map[uint32]*mysql.SQLError{},
	}
}

// globalMaxAllowedPacket is @@global.max_allowed_packet, which MySQL
// applies to what a client sends (the session's copy is read-only).
func globalMaxAllowedPacket() int64 {
	_, v, ok := sql.SystemVariables.GetGlobal("max_allowed_packet")
	if !ok {
		return sqlfunc.DefaultMaxAllowedPacket
	}
	switch n := v.(type) {
	case int64:
		return n
	case uint64:
		return int64(min(n, 1<<62))
	case int:
		return int64(n)
	case int32:
		return int64(n)
	case uint32:
		return int64(n)
	}
	return sqlfunc.DefaultMaxAllowedPacket
}

func (c *packetConn) Read(p []byte) (int, error) {
	if c.phase == phaseOpaque && len(c.out) == 0 {
		return c.in.Read(p)
	}
	for len(c.out) == 0 && c.pass == 0 {
		if err := c.next(); err != nil {
			return 0, err
		}
	}
	if len(c.out) > 0 {
		n := copy(p, c.out)
		c.out = c.out[n:]
		return n, nil
	}
	n, err := c.in.Read(p[:min(len(p), c.pass)])
	c.pass -= n
	return n, err
}

// next reads the next packet header and decides what vitess gets of it.
func (c *packetConn) next() error {
	var h [4]byte
	if _, err := io.ReadFull(c.in, h[:]); err != nil {
		return err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	seq := h[3]
	c.lastSeq = seq
	limit := c.maxInput()
	if c.phase != phaseCommand {
		limit = preLoginPacketLimit
	}
	continued := c.more
	c.more = n == MaxPacketPayload
	if continued {
		c.total += int64(n)
	} else {
		c.total = int64(n)
	}
	if c.total > limit {
		return c.tooLarge(seq, n)
	}
	// The contents of a LOAD DATA LOCAL file come in packets numbered on
	// from the server's request for it: the first has sequence id 2, and
	// past 255 the ids wrap to 0, where a command would start. Nothing else
	// a logged-in client sends has an id other than 0 at the start of a
	// message, so such a packet opens the contents and the empty packet
	// closes them.
	contents := c.infile || (c.phase == phaseCommand && seq != 0 && !continued)
	if c.phase == phaseCommand && !continued {
		c.infile = contents && n > 0
	}
	switch {
	case c.phase == phaseGreeting:
		return c.greeting(h, n)
	case c.phase == phaseCommand && seq == 0 && !continued && !contents:
		return c.command(h, n)
	}
	// Authentication data, the rest of a long message, LOAD DATA LOCAL
	// contents: only their size is checked.
	c.out, c.pass = h[:], n
	return nil
}

func (c *packetConn) Write(p []byte) (int, error) {
	if c.seqShift == 0 {
		return c.Conn.Write(p)
	}
	q := append([]byte(nil), p...)
	if i := 3 - int(c.hdrSeen); i < len(q) {
		q[i] += c.seqShift
	}
	c.hdrSeen += byte(min(len(q), 4-int(c.hdrSeen)))
	if c.hdrSeen == 4 {
		c.seqShift, c.hdrSeen = 0, 0
	}
	return c.Conn.Write(q)
}

// shiftNextWrite makes the next packet vitess writes go out with its
// sequence id moved by n.
func (c *packetConn) shiftNextWrite(n byte) { c.seqShift, c.hdrSeen = n, 0 }

// writePacket writes one packet of the authentication exchange.
func (c *packetConn) writePacket(seq byte, payload []byte) error {
	packet := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint32(packet, uint32(len(payload)))
	packet[3] = seq
	_, err := c.Conn.Write(append(packet, payload...))
	return err
}

// readAuthPacket reads one packet of the authentication exchange, which
// vitess does not see.
func (c *packetConn) readAuthPacket() ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c.in, h[:]); err != nil {
		return nil, err
	}
	n := int(h[0]) | int(h[1])<<8 | int(h[2])<<16
	if n > preLoginPacketLimit {
		return nil, fmt.Errorf("authentication packet of %d bytes", n)
	}
	c.lastSeq = h[3]
	return c.payload(n)
}

// tooLarge answers a message beyond the limit: its rest is read and
// discarded (n bytes of the current packet, then its continuations), the
// client gets MySQL's 1153 and the connection closes.
func (c *packetConn) tooLarge(seq byte, n int) error {
	c.Conn.SetReadDeadline(time.Now().Add(discardTimeout))
	for {
		if _, err := c.in.Discard(n); err != nil {
			break
		}
		if n < MaxPacketPayload {
			break
		}
		var h [4]byte
		if _, err := io.ReadFull(c.in, h[:]); err != nil {
			break
		}
		n, seq = int(h[0])|int(h[1])<<8|int(h[2])<<16, h[3]
	}
	c.reply(seq+1, mysqlerr.ErNetPacketTooLarge, "08S01", MsgPacketTooLarge)
	return fmt.Errorf("%w: %s", errConnectionRefused, MsgPacketTooLarge)
}

// reply writes an ERR packet to the client.
func (c *packetConn) reply(seq byte, code uint16, state, msg string) {
	payload := []byte{0xff, byte(code), byte(code >> 8), '#'}
	payload = append(payload, state...)
	payload = append(payload, msg...)
	packet := make([]byte, 4, 4+len(payload))
	binary.LittleEndian.PutUint32(packet, uint32(len(payload)))
	packet[3] = seq
	c.Conn.Write(append(packet, payload...))
}

// payload reads the current packet's n bytes.
func (c *packetConn) payload(n int) ([]byte, error) {
	p := make([]byte, n)
	_, err := io.ReadFull(c.in, p)
	return p, err
}

// greeting checks the client's first packet, the handshake response (or
// the SSL request that precedes it over TLS).
func (c *packetConn) greeting(h [4]byte, n int) error {
	p, err := c.payload(n)
	if err != nil {
		return err
	}
	ssl, ok := checkHandshakeResponse(p, c.tls)
	if !ok {
		c.reply(h[3]+1, mysqlerr.ErHandshakeError, "08S01", "Bad handshake")
		return fmt.Errorf("%w: bad handshake", errConnectionRefused)
	}
	c.phase = phaseAuth
	if ssl {
		c.phase = phaseOpaque
	}
	c.out = append(h[:], p...)
	return nil
}

// checkHandshakeResponse reports whether p is a HandshakeResponse41 that
// vitess parses without fault, and whether it asks for TLS.
func checkHandshakeResponse(p []byte, tls bool) (ssl, ok bool) {
	const header = 4 + 4 + 1 + 23 // flags, max packet size, character set, reserved
	if len(p) < header {
		return false, false
	}
	flags := binary.LittleEndian.Uint32(p)
	if flags&mysql.CapabilityClientProtocol41 == 0 {
		return false, false
	}
	if tls && flags&mysql.CapabilityClientSSL != 0 {
		return true, true
	}
	rest := p[header:]
	nulString := func() bool {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return false
		}
		rest = rest[i+1:]
		return true
	}
	if !nulString() { // user
		return false, false
	}
	switch {
	case flags&mysql.CapabilityClientPluginAuthLenencClientData != 0:
		l, w, ok := lenEncInt(rest)
		if !ok || l > uint64(len(rest)-w) {
			return false, false
		}
		rest = rest[w+int(l):]
	case flags&mysql.CapabilityClientSecureConnection != 0:
		if len(rest) == 0 || int(rest[0]) > len(rest)-1 {
			return false, false
		}
		rest = rest[1+int(rest[0]):]
	default:
		if !nulString() {
			return false, false
		}
	}
	if flags&mysql.CapabilityClientConnectWithDB != 0 && !nulString() {
		return false, false
	}
	if flags&mysql.CapabilityClientPluginAuth != 0 && !nulString() {
		return false, false
	}
	return false, true
}

// lenEncInt decodes a length-encoded integer: its value and width.
func lenEncInt(p []byte) (uint64, int, bool) {
	if len(p) == 0 {
		return 0, 0, false
	}
	w := map[byte]int{0xfc: 3, 0xfd: 4, 0xfe: 9}[p[0]]
	if w == 0 {
		return uint64(p[0]), 1, true
	}
	if len(p) < w {
		return 0, 0, false
	}
	var b [8]byte
	copy(b[:], p[1:w])
	return binary.LittleEndian.Uint64(b[:]), w, true
}

// command checks a command that fits in one packet (n bytes) before vitess
// parses it; h is its header.
func (c *packetConn) command(h [4]byte, n int) error {
	if n == 0 {
		return c.refuse(n, mysqlerr.ErUnknownCom, "08S01", "Unknown command")
	}
	first, err := c.in.Peek(1)
	if err != nil {
		return err
	}
	switch first[0] {
	case mysql.ComPrepare:
		if c.prepare != nil {
			return c.checkPrepare(h, n)
		}
		c.out, c.pass = h[:], n
		return nil
	case mysql.ComQuery, mysql.ComInitDB, mysql.ComPing, mysql.ComQuit, mysql.ComStmtFetch:
		c.out, c.pass = h[:], n // a long query: its size is all there is to check
		return nil
	case mysql.ComStmtSendLongData:
		return c.sendLongData(h, n)
	case mysql.ComFieldList, mysql.ComSetOption, mysql.ComStmtExecute, mysql.ComStmtClose, mysql.ComStmtReset, mysql.ComResetConnection:
	default:
		// COM_BINLOG_DUMP(_GTID), COM_REGISTER_SLAVE, COM_CHANGE_USER, ...:
		// vitess leaves some of them half handled (no answer, a packet
		// never released).
		return c.refuse(n, mysqlerr.ErUnknownCom, "08S01", "Unknown command")
	}
	var p []byte
	if c.more {
		// A command longer than one packet (a large COM_STMT_EXECUTE):
		// checked whole, as vitess reads it whole, within max_allowed_packet.
		if p, err = c.message(n); err != nil {
			return err
		}
	} else if p, err = c.payload(n); err != nil {
		return err
	}
	if e := c.checkCommand(p); e != nil {
		c.reply(1, uint16(e.Num), e.State, e.Message)
		return nil
	}
	c.out = frame(p)
	return nil
}

// checkPrepare reads a COM_STMT_PREPARE whole (vitess reads it whole too)
// and answers a statement vitess cannot parse with MySQL's error.
func (c *packetConn) checkPrepare(h [4]byte, n int) error {
	p, err := c.message(n)
	if err != nil {
		return err
	}
	if e := c.prepare.check(string(p[1:])); e != nil {
		c.reply(1, uint16(e.Num), e.State, e.Message)
		return nil
	}
	if !c.more && len(p) < MaxPacketPayload {
		c.out = append(h[:], p...)
		return nil
	}
	c.out = frame(p)
	return nil
}

// refuse discards a command of n bytes in one packet and answers it with
// an error; the connection goes on.
func (c *packetConn) refuse(n int, code uint16, state, msg string) error {
	if err := c.discard(n); err != nil {
		return err
	}
	c.reply(1, code, state, msg)
	return nil
}

// discard drops n bytes of the current packet and its continuations.
func (c *packetConn) discard(n int) error {
	for {
		if _, err := c.in.Discard(n); err != nil {
			return err
		}
		if !c.more {
			return nil
		}
		var h [4]byte
		if _, err := io.ReadFull(c.in, h[:]); err != nil {
			return err
		}
		n = int(h[0]) | int(h[1])<<8 | int(h[2])<<16
		c.more = n == MaxPacketPayload
		if c.total += int64(n); c.total > c.maxInput() {
			return c.tooLarge(h[3], n)
		}
	}
}

// message reads a message that continues past its first packet (n bytes).
func (c *packetConn) message(n int) ([]byte, error) {
	p, err := c.payload(n)
	for err == nil && c.more {
		var h [4]byte
		if _, err = io.ReadFull(c.in, h[:]); err != nil {
			break
		}
		n = int(h[0]) | int(h[1])<<8 | int(h[2])<<16
		c.more = n == MaxPacketPayload
		if c.total += int64(n); c.total > c.maxInput() {
			return nil, c.tooLarge(h[3], n)
		}
		var next []byte
		if next, err = c.payload(n); err == nil {
			p = append(p, next...)
		}
	}
	return p, err
}

// frame splits a command's payload into packets again, numbered from 0.
func frame(p []byte) []byte {
	out := make([]byte, 0, len(p)+4*(len(p)/MaxPacketPayload+1))
	for seq := byte(0); ; seq++ {
		n := min(len(p), MaxPacketPayload)
		out = append(out, byte(n), byte(n>>8), byte(n>>16), seq)
		out = append(out, p[:n]...)
		p = p[n:]
		if n < MaxPacketPayload {
			return out
		}
	}
}

// checkCommand is the error a command gets instead of reaching vitess,
// or nil.
func (c *packetConn) checkCommand(p []byte) *mysql.SQLError {
	malformed := mysqlerr.New(mysqlerr.ErMalformedPacket, msgMalformedPacket)
	stmtID := func() (uint32, bool) {
		if len(p) < 5 {
			return 0, false
		}
		return binary.LittleEndian.Uint32(p[1:]), true
	}
	switch p[0] {
	case mysql.ComFieldList:
		if bytes.IndexByte(p[1:], 0) < 0 {
			return malformed
		}
	case mysql.ComSetOption:
		if len(p) != 3 {
			return malformed
		}
		if op := binary.LittleEndian.Uint16(p[1:]); op > 1 {
			return mysqlerr.New(mysqlerr.ErUnknownCom, "Unknown command")
		}
	case mysql.ComStmtClose:
		if id, ok := stmtID(); ok {
			c.forgetLongData(id)
		}
	case mysql.ComResetConnection:
		clear(c.longData)
		clear(c.stmtErr)
	case mysql.ComStmtReset:
		id, ok := stmtID()
		if !ok {
			return malformed
		}
		if c.prepared(id) == nil {
			return mysqlerr.New(mysqlerr.ErUnknownStmtHandler, "Unknown prepared statement handler (%d) given to mysqld_stmt_reset", id)
		}
		c.forgetLongData(id)
	case mysql.ComStmtExecute:
		id, ok := stmtID()
		if !ok {
			return malformed
		}
		prep := c.prepared(id)
		if prep == nil {
			return mysqlerr.New(mysqlerr.ErUnknownStmtHandler, "Unknown prepared statement handler (%d) given to mysqld_stmt_execute", id)
		}
		if e := c.stmtErr[id]; e != nil {
			// MySQL forgets the statement's long data with the error.
			prep.BindVars = make(map[string]*querypb.BindVariable, prep.ParamsCount)
			c.forgetLongData(id)
			return e
		}
		if !checkExecute(p[5:], prep) {
			return malformed
		}
		c.forgetLongData(id) // vitess starts each execution's parameters afresh
	}
	return nil
}

// prepared is vitess's record of statement id, or nil.
func (c *packetConn) prepared(id uint32) *mysql.PrepareData {
	if c.vc == nil {
		return nil
	}
	return c.vc.PrepareData[id]
}

func (c *packetConn) forgetLongData(id uint32) {
	for k := range c.longData {
		if k.stmt == id {
			delete(c.longData, k)
		}
	}
	delete(c.stmtErr, id)
}

// sendLongData passes a COM_STMT_SEND_LONG_DATA chunk (n bytes in this
// packet) to vitess, or drops it and marks its statement failed.
func (c *packetConn) sendLongData(h [4]byte, n int) error {
	const header = 1 + 4 + 2 // command, statement id, parameter
	if n < header {
		return c.discard(n) // MySQL ignores it; so does it answer nothing
	}
	p, err := c.in.Peek(header)
	if err != nil {
		return err
	}
	key := longDataKey{stmt: binary.LittleEndian.Uint32(p[1:]), param: binary.LittleEndian.Uint16(p[5:])}
	prep := c.prepared(key.stmt)
	switch {
	case prep == nil:
		return c.discard(n) // its execution fails: unknown statement
	case c.stmtErr[key.stmt] != nil:
		return c.discard(n)
	case prep.BindVars == nil || key.param >= prep.ParamsCount:
		c.stmtErr[key.stmt] = mysqlerr.New(mysqlerr.ErWrongArguments, msgLongDataBadArgment)
		return c.discard(n)
	}
	// The chunk's size is the whole message's; a long one is checked
	// packet by packet against the limit as it streams by (next).
	if c.longData[key]+int64(n-header) > c.maxInput() {
		c.stmtErr[key.stmt] = mysqlerr.New(mysql.ERUnknownError, MsgLongDataTooLong)
		return c.discard(n)
	}
	c.longData[key] += int64(n - header)
	c.out, c.pass = h[:], n
	return nil
}

// checkExecute reports whether the body of a COM_STMT_EXECUTE (after the
// statement id) is one vitess decodes without reading past its end, for
// the prepared statement prep: vitess indexes its null bitmap and slices
// length-encoded values without checking them.
func checkExecute(p []byte, prep *mysql.PrepareData) bool {
	if len(p) < 5 { // cursor flags, iteration count
		return false
	}
	p = p[5:]
	params := int(prep.ParamsCount)
	if params == 0 {
		return true
	}
	nulls := (params + 7) / 8
	if len(p) < nulls {
		return false
	}
	bitmap, p := p[:nulls], p[nulls:]
	types := make([]querypb.Type, params)
	for i := range types {
		if i < len(prep.ParamsType) {
			types[i] = querypb.Type(prep.ParamsType[i])
		}
	}
	if len(p) > 0 && p[0] == 1 { // new parameter types bound
		p = p[1:]
		if len(p) < 2*params {
			return false
		}
		for i := range types {
			t, err := sqltypes.MySQLToType(int64(p[2*i]), int64(p[2*i+1])>>2)
			if err != nil {
				return false
			}
			types[i] = t
		}
		p = p[2*params:]
	} else if len(p) > 0 {
		p = p[1:]
	}
	for i, t := range types {
		if v, ok := prep.BindVars[fmt.Sprintf("v%d", i+1)]; ok && v != nil {
			continue // sent as long data
		}
		if bitmap[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		w, ok := valueWidth(p, t)
		if !ok {
			return false
		}
		p = p[w:]
	}
	return true
}

// valueWidth is the number of bytes the binary-protocol value of type t at
// the start of p takes.
func valueWidth(p []byte, t querypb.Type) (int, bool) {
	fixed := 0
	switch t {
	case sqltypes.Null:
		return 0, true
	case sqltypes.Int8, sqltypes.Uint8:
		fixed = 1
	case sqltypes.Int16, sqltypes.Uint16, sqltypes.Year:
		fixed = 2
	case sqltypes.Int24, sqltypes.Uint24, sqltypes.Int32, sqltypes.Uint32, sqltypes.Float32:
		fixed = 4
	case sqltypes.Int64, sqltypes.Uint64, sqltypes.Float64:
		fixed = 8
	case sqltypes.Timestamp, sqltypes.Date, sqltypes.Datetime, sqltypes.Time:
		if len(p) == 0 {
			return 0, false
		}
		fixed = 1 + int(p[0])
	case sqltypes.Decimal, sqltypes.Text, sqltypes.Blob, sqltypes.VarChar, sqltypes.Char, sqltypes.VarBinary,
		sqltypes.Bit, sqltypes.Enum, sqltypes.Set, sqltypes.Geometry, sqltypes.Binary, sqltypes.TypeJSON:
		l, w, ok := lenEncInt(p)
		if !ok || l > uint64(len(p)-w) {
			return 0, false
		}
		return w + int(l), true
	default:
		return 0, false
	}
	return fixed, fixed <= len(p)
}

// guardTLS puts a packet guard above the decrypted stream of a connection
// that switched to TLS, once it is logged in: vitess reads that stream
// through a buffered reader it keeps to itself, which is pointed at the
// guard here. It fails, and the login with it, if vitess's Conn no longer
// has that reader (a vitess upgrade), rather than leave TLS clients
// unguarded.
func guardTLS(c *mysql.Conn, prepare *prepareCheck) error {
	f := reflect.ValueOf(c).Elem().FieldByName("bufferedReader")
	if !f.IsValid() || f.Type() != reflect.TypeOf((*bufio.Reader)(nil)) || f.IsNil() {
		return errors.New("vitess's connection has no bufferedReader")
	}
	br := (*bufio.Reader)(f.UnsafePointer())
	if br.Buffered() > 0 {
		return errors.New("the client sent a command before it was logged in")
	}
	g := newPacketConn(c.Conn, false, phaseCommand)
	g.vc = c
	g.prepare = prepare
	c.Conn = g
	br.Reset(g)
	return nil
}
