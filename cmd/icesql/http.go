package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
	"github.com/icesql/icesql/storage/s3serve"
	"github.com/icesql/icesql/storage/sigv4auth"
)

const httpUsage = `
Flags of serve (the HTTP port: the Iceberg REST catalog and the S3 API):
  --http HOST:PORT      address of the Iceberg REST catalog, served under /v1/ and /_iceberg/v1/
                        (default 127.0.0.1:8181; --http '' turns it off). With --user, requests
                        need an OAuth2 token of /v1/oauth/tokens (PyIceberg, Spark, DuckDB:
                        credential=USER:PASSWORD), "Authorization: Bearer USER:PASSWORD" (token=USER:PASSWORD)
                        or AWS SigV4 with USER and PASSWORD as access key and secret (signing name s3tables)
  --bucket NAME         the S3 API on the same port, at / (default warehouse): one bucket, the warehouse
                        folder, path-style or virtual-host style, SigV4 with USER and PASSWORD (a local warehouse only)
  --s3-locations        icesql's own writes name their files s3://BUCKET/... too, so a client
                        with only an S3 file IO (Spark's S3FileIO) reads them; engines that read
                        the warehouse folder directly then need the S3 API for those files
`

// httpHandler is everything the --http port serves: the Iceberg REST
// catalog under /v1/ and /_iceberg/v1/, with its token endpoint issuing
// tokens (bucket is its warehouse name;
// restserve.DefaultPrefix when empty), and the S3 API (s3api, nil for a
// warehouse on S3) at /, which checks its own requests (SigV4). auth, when
// set, checks every catalog request (see httpAuth).
func httpHandler(wh *storage.Warehouse, auth func(*http.Request) error, tokens *restserve.Tokens, bucket string, s3api http.Handler, s3 *restserve.S3) http.Handler {
	mux := http.NewServeMux()
	// The bucket's name is the catalog's warehouse name too, as on AIStor.
	cat := restserve.New(wh, restserve.Config{Authenticate: auth, Tokens: tokens, Prefix: bucket, S3: s3})
	mux.Handle("/v1/", cat)
	mux.Handle("/_iceberg/", cat)
	if s3api != nil {
		mux.Handle("/", s3api) // storage/s3serve: the S3 API over the warehouse folder
	}
	return mux
}

// sigv4 accepts requests signed with AWS Signature Version 4 by v.
func sigv4(v *sigv4auth.Verifier) authenticator {
	return func(r *http.Request) (bool, error) {
		if !sigv4auth.Signed(r) {
			return false, nil
		}
		_, err := v.Verify(r)
		return true, err
	}
}

// authenticator checks one kind of credentials. ok is false when the
// request carries none of its kind, so that the next one may look.
type authenticator func(r *http.Request) (ok bool, err error)

// httpAuth is the check of every request when the server has an account
// (--user): nil without one, which only a loopback address allows. The
// account's credentials are accepted as a bearer token: one tokens issued
// (the OAuth2 token endpoint) or the static USER:PASSWORD; and by the
// authenticators given (SigV4, see sigv4).
func httpAuth(user, password string, tokens *restserve.Tokens, auths ...authenticator) func(*http.Request) error {
	if user == "" {
		return nil
	}
	auths = append([]authenticator{bearer(user+":"+password, tokens)}, auths...)
	return func(r *http.Request) error {
		for _, a := range auths {
			if ok, err := a(r); ok {
				return err
			}
		}
		return errors.New("this catalog needs credentials: configure the client with credential=USER:PASSWORD (the account of --user; its token endpoint is /v1/oauth/tokens), or send Authorization: Bearer USER:PASSWORD")
	}
}

// bearer accepts "Authorization: Bearer <token>" with a token that tokens
// issued, or the given static one.
func bearer(static string, tokens *restserve.Tokens) authenticator {
	return func(r *http.Request) (bool, error) {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok {
			return false, nil
		}
		if tokens != nil && restserve.Ours(got) {
			_, err := tokens.Verify(got)
			return true, err
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(static)) != 1 {
			return true, errors.New("the bearer token is neither an access token of this server nor USER:PASSWORD of its account")
		}
		return true, nil
	}
}

// serveHTTP starts the --http port for e, when addr is set, and stops it
// when ctx ends. A catalog other than the embedded warehouse is not served:
// it has its own server. When the default port is taken (another icesql
// serve on this machine) the server runs without it and says so; a port
// given with --http must be free.
func serveHTTP(ctx context.Context, e *engine.Engine, addr string, served servedS3, explicit bool, scfg engine.ServerConfig, metrics http.Handler, stdout, stderr io.Writer) error {
	if addr == "" {
		return nil
	}
	bucket := served.bucket
	wh, ok := e.Catalog().(*storage.Warehouse)
	if !ok {
		fmt.Fprintf(stdout, "the Iceberg REST catalog is not served: it serves the embedded warehouse, and this server uses the %s catalog\n", e.Catalog().CatalogType())
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w", addr, err)
	}
	if scfg.User == "" && !loopback(host) {
		return fmt.Errorf("--http %s is reachable from other machines: set --user and --password to require credentials, or listen on 127.0.0.1", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && !explicit {
		fmt.Fprintf(stderr, "icesql: warning: the Iceberg REST catalog is not served: %v (choose a port with --http HOST:PORT)\n", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("--http: %w", err)
	}
	var creds map[string]string
	if scfg.User != "" {
		creds = map[string]string{scfg.User: scfg.Password}
	}
	var s3api http.Handler
	switch srv, err := s3serve.ForWarehouse(wh, bucket, creds); {
	case err != nil:
		ln.Close()
		return fmt.Errorf("--bucket: %w", err)
	case srv != nil: // nil for a warehouse on S3, whose store serves its files
		s3api = srv
	}
	var s3 *restserve.S3
	if s3api != nil {
		if s3, err = servedBucket(ctx, wh, served, scfg); err != nil {
			ln.Close()
			return err
		}
	}
	tokens := restserve.NewTokens(creds)
	auth := httpAuth(scfg.User, scfg.Password, tokens, sigv4(sigv4auth.New(creds, "s3tables", "execute-api")))
	mux := http.NewServeMux()
	mux.Handle("/", httpHandler(wh, auth, tokens, bucket, s3api, s3))
	mux.Handle("GET /metrics", withAuth(metrics, auth)) // Prometheus (serverlog.go)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	fmt.Fprintf(stdout, "Iceberg REST catalog on http://%s/v1 (also /_iceberg/v1), warehouse %q\n", ln.Addr(), bucket)
	if s3api != nil {
		fmt.Fprintf(stdout, "S3 API on http://%s, bucket %q (the warehouse folder; path-style or BUCKET.host)\n", ln.Addr(), bucket)
	}
	return nil
}

// servedS3 is how the S3 API serves the warehouse folder: as bucket, and
// whether icesql's own writes name their files in it (--s3-locations).
type servedS3 struct {
	bucket     string
	writeNames bool
}

// servedBucket is the S3 API over wh as the REST catalog hands it out:
// tables carry s3://BUCKET/ locations, which icesql maps back to the
// folder, and the account's credentials (any key on loopback without an
// account: the S3 API then admits every loopback request).
func servedBucket(ctx context.Context, wh *storage.Warehouse, served servedS3, scfg engine.ServerConfig) (*restserve.S3, error) {
	bucket := served.bucket
	if bucket == "" {
		bucket = restserve.DefaultPrefix
	}
	if err := wh.ServeBucket(ctx, bucket, served.writeNames); err != nil {
		return nil, err
	}
	s3 := &restserve.S3{Bucket: bucket, Region: "us-east-1", AccessKey: scfg.User, SecretKey: scfg.Password}
	if scfg.User == "" {
		s3.AccessKey, s3.SecretKey = "icesql", "icesql"
	}
	return s3, nil
}

func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
