package engine

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"database/sql"
	"errors"
	"io"
	"math/big"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/icesql/icesql/engine/internal/wire"
)

// selfSignedTLS makes a certificate for 127.0.0.1 and the server and
// client TLS configurations that use and trust it.
func selfSignedTLS(t *testing.T) (server, client *tls.Config) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "icesql test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	server = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	client = &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	return server, client
}

func withTLS(c *tls.Config) func(*mysql.Config) {
	return func(cfg *mysql.Config) { cfg.TLS = c }
}

// TestTLSAndSecureTransport: with a certificate clients may encrypt, a
// caching_sha2_password account logs in over TLS, and with
// RequireSecureTransport a plain login is refused with MySQL's 3159.
func TestTLSAndSecureTransport(t *testing.T) {
	serverTLS, clientTLS := selfSignedTLS(t)
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{User: "admin", Password: "pw", TLS: serverTLS, RequireSecureTransport: true})

	_, err := dial(t, srv, "admin", "pw").Exec("SELECT 1")
	wantCode(t, "plain login under require_secure_transport", err, 3159, "HY000")

	admin := dial(t, srv, "admin", "pw", withTLS(clientTLS))
	mustExec(t, admin,
		"CREATE USER 'sha'@'%' IDENTIFIED WITH caching_sha2_password BY 'sha-pw'",
		"CREATE USER 'native'@'%' IDENTIFIED WITH mysql_native_password BY 'native-pw'",
	)
	var plugin string
	if err := admin.QueryRow("SELECT plugin FROM mysql.user WHERE user = 'sha'").Scan(&plugin); err != nil || plugin != "caching_sha2_password" {
		t.Fatalf("plugin of sha: %q, %v", plugin, err)
	}
	for _, login := range []struct{ user, pw string }{{"sha", "sha-pw"}, {"native", "native-pw"}} {
		var user string
		if err := dial(t, srv, login.user, login.pw, withTLS(clientTLS)).QueryRow("SELECT CURRENT_USER()").Scan(&user); err != nil || user != login.user+"@%" {
			t.Fatalf("%s over TLS: %q, %v", login.user, user, err)
		}
	}
	_, err = dial(t, srv, "sha", "wrong", withTLS(clientTLS)).Exec("SELECT 1")
	wantCode(t, "caching_sha2_password with a wrong password", err, 1045)
}

// TestSecureTransportNeedsCertificate: requiring TLS without a certificate
// would admit nobody, so the server refuses to start.
func TestSecureTransportNeedsCertificate(t *testing.T) {
	e, err := Open(context.Background(), Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if srv, err := e.NewServer(ServerConfig{Addr: "127.0.0.1:0", RequireSecureTransport: true}); err == nil {
		srv.Close()
		t.Fatal("server requiring TLS started without a certificate")
	}
}

// TestConnectionLimit: the connection beyond MaxConnections gets MySQL's
// 1040, and a slot freed by a client that left is usable again.
func TestConnectionLimit(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{MaxConnections: 2})
	first, second := dial(t, srv, "root", ""), dial(t, srv, "root", "")
	for _, db := range []*sql.DB{first, second} {
		if err := db.Ping(); err != nil {
			t.Fatal(err)
		}
	}
	third := dial(t, srv, "root", "")
	wantCode(t, "third connection", third.Ping(), 1040, "08004")

	first.Close()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := third.Ping()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("slot not freed after a client left: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestHandshakeTimeout: a client that connects and never logs in is
// disconnected after the handshake timeout.
func TestHandshakeTimeout(t *testing.T) {
	_, srv := startTestServer(t, t.TempDir(), ServerConfig{HandshakeTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(30 * time.Second)) // only so that a broken server cannot hang the test
	buf := make([]byte, 4096)
	if _, err := c.Read(buf); err != nil {
		t.Fatalf("read handshake: %v", err)
	}
	for {
		if _, err = c.Read(buf); err != nil {
			break
		}
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("server kept a silent client past its handshake timeout")
		}
	}
}

// TestFailedLoginDelay: after three failed logins from an address, each
// new connection from it waits before its handshake, doubling per failure
// up to a bound; a successful login resets the count. The delays are the
// ones the server applied (recorded, not slept).
func TestFailedLoginDelay(t *testing.T) {
	e, err := Open(context.Background(), Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	srv, err := e.NewServer(ServerConfig{Addr: "127.0.0.1:0", User: "admin", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var delays []time.Duration
	srv.guard.Sleep = func(_ context.Context, d time.Duration) {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
	}
	go srv.Start()
	defer srv.Close()

	for range 5 {
		_, err := dial(t, srv, "admin", "wrong").Exec("SELECT 1")
		wantCode(t, "wrong password", err, 1045)
	}
	if err := dial(t, srv, "admin", "pw").Ping(); err != nil {
		t.Fatal(err)
	}
	if err := dial(t, srv, "admin", "pw").Ping(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	got := slices.Clone(delays)
	mu.Unlock()
	// Failures 1-3 pass undelayed; the 4th and 5th attempts wait 1 s and
	// 2 s, the successful 6th 4 s; the 7th, after a success, not at all.
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if !slices.Equal(got, want) {
		t.Fatalf("delays applied: %v, want %v", got, want)
	}
	if d := srv.guard.LoginDelay("127.0.0.1"); d != 0 {
		t.Fatalf("delay after a successful login: %v", d)
	}
}

func TestLoginDelayIsBounded(t *testing.T) {
	prev := time.Duration(0)
	for n := range 200 {
		d := wire.DelayAfter(n)
		if d < prev || d > wire.LoginDelayMax {
			t.Fatalf("delay after %d failures: %v (previous %v, bound %v)", n, d, prev, wire.LoginDelayMax)
		}
		prev = d
	}
	if prev != wire.LoginDelayMax {
		t.Fatalf("delay after many failures: %v, want the bound %v", prev, wire.LoginDelayMax)
	}
}
