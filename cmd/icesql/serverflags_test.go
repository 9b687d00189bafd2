package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServePasswordOutOfProcessList: the password of --user comes from a
// file or from ICESQL_PASSWORD, so it never appears on the command line.
func TestServePasswordOutOfProcessList(t *testing.T) {
	bin := buildBinary(t)
	file := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(file, []byte("from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	byFile := freeAddr(t)
	startServer(t, bin, "--warehouse", t.TempDir(), "--addr", byFile, "--user", "alice", "--password-file", file)
	byEnv := freeAddr(t)
	startServerEnv(t, bin, []string{"ICESQL_PASSWORD=from-env"}, "--warehouse", t.TempDir(), "--addr", byEnv, "--user", "alice")
	for addr, pw := range map[string]string{byFile: "from-file", byEnv: "from-env"} {
		if out, err := mysqlClient(t, addr, []string{"-u", "alice", "-p" + pw}, "SELECT 1"); err != nil {
			t.Errorf("login with the password %s: %v\n%s", pw, err, out)
		}
		if out, err := mysqlClient(t, addr, []string{"-u", "alice", "-pwrong"}, "SELECT 1"); err == nil || !strings.Contains(out, "1045") {
			t.Errorf("wrong password: %v\n%s", err, out)
		}
	}
	out, err := runCmd(bin, "serve", "--warehouse", t.TempDir(), "--user", "a", "--password", "x", "--password-file", file)
	if err == nil || !strings.Contains(out, "not both") {
		t.Errorf("--password with --password-file: %v\n%s", err, out)
	}
}

// TestServeTLS: with --tls-cert and --tls-key the mysql client encrypts
// (and verifies the certificate); with --require-secure-transport a plain
// login gets ERROR 3159.
func TestServeTLS(t *testing.T) {
	bin := buildBinary(t)
	cert, key := writeSelfSigned(t)
	addr := freeAddr(t)
	startServer(t, bin, "--warehouse", t.TempDir(), "--addr", addr, "--user", "alice", "--password-file", writeFile(t, "s3cret"),
		"--tls-cert", cert, "--tls-key", key, "--require-secure-transport")
	out, err := mysqlClient(t, addr, []string{"-u", "alice", "-ps3cret", "--ssl-ca=" + cert, "--ssl-verify-server-cert"}, "status")
	if err != nil || !strings.Contains(out, "Cipher in use") {
		t.Errorf("TLS login: %v\n%s", err, out)
	}
	out, err = mysqlClient(t, addr, []string{"-u", "alice", "-ps3cret", "--skip-ssl"}, "SELECT 1")
	if err == nil || !strings.Contains(out, "ERROR 3159") {
		t.Errorf("plain login under --require-secure-transport: %v\n%s", err, out)
	}
}

func runCmd(bin string, args ...string) (string, error) {
	out, err := exec.Command(bin, args...).CombinedOutput()
	return string(out), err
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeSelfSigned writes a certificate for 127.0.0.1 and its key as PEM files.
func writeSelfSigned(t *testing.T) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}
