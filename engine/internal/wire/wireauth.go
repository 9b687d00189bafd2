package wire

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha1"
	"crypto/subtle"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"sync"

	"github.com/dolthub/go-mysql-server/server"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// ListenerFactory builds go-mysql-server's vitess listener with icesql's
// authentication methods in place of go-mysql-server's.
func ListenerFactory(cfg server.Config, lc mysql.ListenerConfig, sel server.ServerEventListener) (server.ProtocolListener, error) {
	lc.AuthServer = newAuthServer(lc.AuthServer)
	return server.MySQLProtocolListenerFactory(cfg, lc, sel)
}

// authServer is go-mysql-server's authentication (its users, grants and
// plugins), with the client's authentication data checked before it
// reaches a plugin that would index past its end, and
// caching_sha2_password completed over plain TCP.
type authServer struct {
	mysql.AuthServer
	methods []mysql.AuthMethod
}

func newAuthServer(as mysql.AuthServer) *authServer {
	a := &authServer{AuthServer: as}
	mdb, _ := as.(*mysql_db.MySQLDb)
	for _, m := range as.AuthMethods() {
		switch {
		case m.Name() == mysql.MysqlNativePassword:
			// go-mysql-server XORs 20 bytes of the reply: a shorter one
			// crashed the connection before login.
			m = scrambleLength{AuthMethod: m, size: 20}
		case m.Name() == mysql.CachingSha2Password && mdb != nil:
			m = &sha2Method{AuthMethod: m, mdb: mdb}
		}
		a.methods = append(a.methods, m)
	}
	return a
}

func (a *authServer) AuthMethods() []mysql.AuthMethod { return a.methods }

// scrambleLength refuses a scramble of the wrong length as a wrong
// password (an empty one stands for no password).
type scrambleLength struct {
	mysql.AuthMethod
	size int
}

func (m scrambleLength) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	if n := len(clientData); n != 0 && n != m.size {
		return nil, accessDenied(user)
	}
	return m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
}

func accessDenied(user string) error {
	return mysqlerr.New(mysql.ERAccessDeniedError, "Access denied for user '%v'", user)
}

// sha2Method is caching_sha2_password. vitess completes it only over TLS
// (where the client sends the password in the clear); over plain TCP a
// MySQL 8 client asks for the server's RSA public key (byte 2) and sends
// the password XOR the scramble, RSA-OAEP encrypted, which is what this
// adds. The key is made when a client first asks for it and lives as long
// as the server: a client that pins it (go-sql-driver's serverPubKey,
// mysql --server-public-key-path) must fetch it again after a restart.
type sha2Method struct {
	mysql.AuthMethod // vitess's, over TLS
	mdb              *mysql_db.MySQLDb

	once   sync.Once
	key    *rsa.PrivateKey
	pubPEM []byte
	keyErr error
}

// plain reports whether c is a TCP connection without TLS that the packet
// guard reads (the RSA exchange goes through it).
func plain(c *mysql.Conn) (*packetConn, bool) {
	if c.TLSEnabled() || c.IsUnixSocket() {
		return nil, false
	}
	pc, ok := c.Conn.(*packetConn)
	return pc, ok
}

func (m *sha2Method) HandleUser(c *mysql.Conn, user string) bool {
	if _, ok := plain(c); !ok || !m.mdb.Enabled() {
		return m.AuthMethod.HandleUser(c, user)
	}
	rd := m.mdb.Reader()
	defer rd.Close()
	u := m.mdb.GetUser(rd, user, hostOf(c.RemoteAddr()), false)
	return u != nil && u.Plugin == string(mysql.CachingSha2Password)
}

func (m *sha2Method) HandleAuthPluginData(c *mysql.Conn, user string, serverData, clientData []byte, addr net.Addr) (mysql.Getter, error) {
	pc, ok := plain(c)
	empty := len(clientData) == 0 || (len(clientData) == 1 && clientData[0] == 0)
	if !ok || empty || len(serverData) < 2 {
		// TLS, or no password sent: vitess's method does it.
		return m.AuthMethod.HandleAuthPluginData(c, user, serverData, clientData, addr)
	}
	salt := serverData[:len(serverData)-1]
	password, err := m.fullAuth(pc, salt)
	if err != nil {
		return nil, fmt.Errorf("caching_sha2_password for %s: %w", user, err)
	}
	if password == nil {
		return nil, accessDenied(user)
	}
	return m.check(user, hostOf(addr), string(password))
}

// fullAuth runs caching_sha2_password's full authentication over plain
// TCP and returns the password, or nil when the client sent something
// that does not decrypt.
func (m *sha2Method) fullAuth(pc *packetConn, salt []byte) ([]byte, error) {
	base := pc.lastSeq + 1 // the sequence id vitess writes its answer with
	seq := base
	// "perform full authentication"
	if err := pc.writePacket(seq, []byte{mysql.AuthMoreDataPacket, mysql.CachingSha2FullAuth}); err != nil {
		return nil, err
	}
	p, err := pc.readAuthPacket()
	if err != nil {
		return nil, err
	}
	seq = pc.lastSeq + 1
	if len(p) == 1 && p[0] == 2 { // the client asks for the public key
		if err := m.makeKey(); err != nil {
			return nil, err
		}
		if err := pc.writePacket(seq, append([]byte{mysql.AuthMoreDataPacket}, m.pubPEM...)); err != nil {
			return nil, err
		}
		if p, err = pc.readAuthPacket(); err != nil {
			return nil, err
		}
		seq = pc.lastSeq + 1
	}
	// vitess's answer (OK or the error) follows the packets exchanged here.
	pc.shiftNextWrite(seq - base)
	if err := m.makeKey(); err != nil {
		return nil, err
	}
	plain, err := rsa.DecryptOAEP(sha1.New(), nil, m.key, p, nil)
	if err != nil || len(plain) == 0 || plain[len(plain)-1] != salt[(len(plain)-1)%len(salt)] {
		return nil, nil // not encrypted with our key, or not NUL-terminated
	}
	for i := range plain {
		plain[i] ^= salt[i%len(salt)]
	}
	return plain[:len(plain)-1], nil
}

func (m *sha2Method) makeKey() error {
	m.once.Do(func() {
		m.key, m.keyErr = rsa.GenerateKey(rand.Reader, 2048)
		if m.keyErr != nil {
			return
		}
		der, err := x509.MarshalPKIXPublicKey(&m.key.PublicKey)
		if err != nil {
			m.keyErr = err
			return
		}
		m.pubPEM = pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	})
	return m.keyErr
}

// check verifies the password of user@host as go-mysql-server's
// caching_sha2_password does, on a connection without TLS.
func (m *sha2Method) check(user, host, password string) (mysql.Getter, error) {
	rd := m.mdb.Reader()
	defer rd.Close()
	u := m.mdb.GetUser(rd, user, host, false)
	if u == nil || u.Locked || u.SslType != "" { // REQUIRE SSL/X509/...: not without TLS
		return nil, accessDenied(user)
	}
	if u.AuthString == "" {
		if password != "" {
			return nil, accessDenied(user)
		}
		return sql.MysqlConnectionUser{User: u.User, Host: u.Host}, nil
	}
	digest, iterations, salt, _, err := mysql.DeserializeCachingSha2PasswordAuthString([]byte(u.AuthString))
	if err != nil || digest != "SHA256" {
		return nil, accessDenied(user)
	}
	want, err := mysql.SerializeCachingSha2PasswordAuthString(password, salt, iterations)
	if err != nil || subtle.ConstantTimeCompare(want, []byte(u.AuthString)) != 1 {
		return nil, accessDenied(user)
	}
	return sql.MysqlConnectionUser{User: u.User, Host: u.Host}, nil
}
