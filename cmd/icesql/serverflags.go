package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/icesql/icesql/engine"
)

const serverUsage = `
Flags of serve (who may connect, and how):
  --addr HOST:PORT      address to listen on (default 127.0.0.1:3306); an address reachable
                        from other machines needs --user and a password
  --user U              the account the server admits with every privilege, from any host;
                        without it, any name may log in from loopback without a password
  --password-file PATH  file holding the password of --user (first line; env ICESQL_PASSWORD
                        works too); --password P also works but shows it in the process list
  --tls-cert PATH, --tls-key PATH
                        PEM certificate and key: clients may encrypt the connection
  --require-secure-transport
                        refuse logins without TLS (MySQL error 3159)
  --max-connections N   open connections allowed; more get error 1040 (default 151)
  --handshake-timeout D time a client has to log in (default 10s)
`

// serverFlags are the flags of serve that configure the MySQL endpoint.
type serverFlags struct {
	cfg          *engine.ServerConfig
	password     string
	passwordFile string
	tlsCert      string
	tlsKey       string
}

func addServerFlags(fs *flag.FlagSet, cfg *engine.ServerConfig) *serverFlags {
	f := &serverFlags{cfg: cfg}
	fs.StringVar(&cfg.Addr, "addr", "127.0.0.1:3306", "address to listen on")
	fs.StringVar(&cfg.User, "user", "", "the account admitted with every privilege (default: any name, loopback only)")
	fs.StringVar(&f.password, "password", "", "password of --user (visible in the process list: prefer --password-file or ICESQL_PASSWORD)")
	fs.StringVar(&f.passwordFile, "password-file", "", "file whose first line is the password of --user")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate of the MySQL port")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&cfg.RequireSecureTransport, "require-secure-transport", false, "refuse logins without TLS (error 3159)")
	fs.IntVar(&cfg.MaxConnections, "max-connections", 151, "open connections allowed; more get error 1040")
	fs.DurationVar(&cfg.HandshakeTimeout, "handshake-timeout", engine.DefaultHandshakeTimeout, "time a client has to log in")
	return f
}

// finish resolves the password (flag, file or ICESQL_PASSWORD) and loads
// the TLS certificate, after parsing.
func (f *serverFlags) finish(stderr io.Writer) error {
	env, envSet := os.LookupEnv("ICESQL_PASSWORD")
	switch {
	case f.password != "" && f.passwordFile != "":
		return fmt.Errorf("give the password once: --password or --password-file, not both")
	case f.passwordFile != "":
		b, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return fmt.Errorf("--password-file: %w", err)
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f.cfg.Password = strings.TrimSuffix(line, "\r")
		if f.cfg.Password == "" {
			return fmt.Errorf("--password-file %s: the first line is empty", f.passwordFile)
		}
	case f.password != "":
		f.cfg.Password = f.password
		fmt.Fprintln(stderr, "icesql: warning: --password is visible to every user of this machine in the process list; use --password-file or ICESQL_PASSWORD")
	case envSet && f.cfg.User != "":
		f.cfg.Password = env
	}
	if f.cfg.Password != "" && f.cfg.User == "" {
		return fmt.Errorf("a password was given without --user: name the account it belongs to")
	}
	if f.cfg.MaxConnections < 1 {
		return fmt.Errorf("--max-connections must be at least 1, not %d", f.cfg.MaxConnections)
	}
	if f.cfg.HandshakeTimeout <= 0 {
		return fmt.Errorf("--handshake-timeout must be positive, not %s", f.cfg.HandshakeTimeout)
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return fmt.Errorf("TLS needs both --tls-cert and --tls-key")
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return fmt.Errorf("load --tls-cert %s and --tls-key %s: %w", f.tlsCert, f.tlsKey, err)
		}
		f.cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	return nil
}
