// Package sigv4auth verifies AWS Signature Version 4 on requests to the
// servers icesql runs for other engines (the S3 API and the Iceberg REST
// catalog): the Authorization header and presigned query forms, the payload
// hash in x-amz-content-sha256 (a hex digest, UNSIGNED-PAYLOAD, or the
// aws-chunked streaming forms the Java and Go SDKs send), and a clock skew
// of at most 15 minutes. The secrets are the passwords of icesql's users.
//
// The canonical request is built here rather than by re-signing the request
// with aws-sdk-go-v2's signer: the signer decides itself which headers to
// sign (it never signs User-Agent or Expect, and signs Content-Length only
// when positive), while a verifier must sign exactly the headers the client
// listed, and Java SDK v1 clients list User-Agent. The tests sign with the
// SDK's signer, so the two must agree.
package sigv4auth

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Payload hashes with a meaning of their own (x-amz-content-sha256).
const (
	UnsignedPayload          = "UNSIGNED-PAYLOAD"
	StreamingPayload         = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	StreamingPayloadTrailer  = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	StreamingUnsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	emptySHA256              = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	algorithm                = "AWS4-HMAC-SHA256"
	timeFormat               = "20060102T150405Z"
	dateFormat               = "20060102"
)

// MaxSkew is how far a request's signing time may lie from the server's
// clock, as on AWS.
const MaxSkew = 15 * time.Minute

// maxPresignExpiry is the longest validity a presigned URL may ask for.
const maxPresignExpiry = 7 * 24 * time.Hour

// maxHashedBody bounds a body read whole to hash it when the client sent
// no x-amz-content-sha256 (REST catalog requests; S3 clients always send it).
const maxHashedBody = 64 << 20

// Error is a refused request: Code is the S3 error code, Status the HTTP
// status, as AWS answers. Servers that speak another error format use
// Status and Message.
type Error struct {
	Code    string
	Status  int
	Message string
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func refuse(status int, code, format string, args ...any) *Error {
	return &Error{Code: code, Status: status, Message: fmt.Sprintf(format, args...)}
}

// Identity is who signed a request; AccessKeyID is empty for a request
// admitted without credentials (loopback, none configured).
type Identity struct {
	AccessKeyID, Region, Service string
}

// Verifier admits requests signed with one of its credentials for one of
// its signing names. With no credentials, it admits any request from a
// loopback address and refuses every other, as the MySQL port does.
type Verifier struct {
	secrets  map[string]string
	services []string
	now      func() time.Time
}

// New returns a Verifier of the access key → secret pairs (icesql's users
// and passwords) for the given signing names ("s3", "s3tables").
func New(credentials map[string]string, services ...string) *Verifier {
	secrets := make(map[string]string, len(credentials))
	for k, v := range credentials {
		secrets[k] = v
	}
	return &Verifier{secrets: secrets, services: services, now: time.Now}
}

// WithClock returns a copy of v that reads the time from now (tests).
func (v *Verifier) WithClock(now func() time.Time) *Verifier {
	c := *v
	c.now = now
	return &c
}

// Open says whether v admits unsigned requests from loopback.
func (v *Verifier) Open() bool { return len(v.secrets) == 0 }

// Signed says r carries a SigV4 signature (header or presigned query), so
// that a server accepting other credentials too (a bearer token) knows
// which check applies.
func Signed(r *http.Request) bool {
	return strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-") || r.URL.Query().Has("X-Amz-Signature")
}

// Verify authenticates r. When the payload is signed (a hex hash or the
// streaming forms), r.Body is replaced by one that yields the decoded
// payload. For the signing name "s3" the body is checked as it is read
// (an object may be large) and fails with an *Error at its end if it does
// not match its signature: the S3 server reads it to the end before acting
// on it. For other signing names the body (at most 64 MiB) is read and
// checked before Verify returns.
// Without credentials, loopback requests are admitted as they are.
func (v *Verifier) Verify(r *http.Request) (Identity, error) {
	if v.Open() {
		if !loopback(r.RemoteAddr) {
			return Identity{}, refuse(http.StatusForbidden, "AccessDenied",
				"this server has no credentials configured and admits only loopback clients; start it with --user and a password")
		}
		// The payload may still be aws-chunked: decode it without checking.
		if err := v.unwrapUnverified(r); err != nil {
			return Identity{}, err
		}
		return Identity{}, nil
	}
	var s *signed
	var err error
	switch {
	case r.Header.Get("Authorization") != "":
		s, err = v.parseHeader(r)
	case r.URL.Query().Has("X-Amz-Signature"):
		s, err = v.parseQuery(r)
	default:
		return Identity{}, refuse(http.StatusForbidden, "AccessDenied", "the request is not signed: sign it with AWS Signature Version 4 using an icesql user and password")
	}
	if err != nil {
		return Identity{}, err
	}
	secret, ok := v.secrets[s.accessKey]
	if !ok {
		return Identity{}, refuse(http.StatusForbidden, "InvalidAccessKeyId", "the access key %q is not an icesql user", s.accessKey)
	}
	if err := v.checkService(s.service); err != nil {
		return Identity{}, err
	}
	key := signingKey(secret, s.date, s.region, s.service)
	if !s.matches(r, key) {
		return Identity{}, refuse(http.StatusForbidden, "SignatureDoesNotMatch",
			"the request signature does not match the one computed with the secret of %q; check the password and that the signing name is one of %s", s.accessKey, strings.Join(v.services, ", "))
	}
	if err := s.wrapBody(r, key); err != nil {
		return Identity{}, err
	}
	if s.service != "s3" {
		// Other services (the REST catalog) get a body checked in full:
		// a JSON decoder stops reading at the end of its value, before a
		// lazy check would run.
		if err := readWhole(r); err != nil {
			return Identity{}, err
		}
	}
	return Identity{AccessKeyID: s.accessKey, Region: s.region, Service: s.service}, nil
}

// readWhole reads and checks r's body before it is used.
func readWhole(r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxHashedBody+1))
	if err != nil {
		var e *Error
		if errors.As(err, &e) {
			return e
		}
		return refuse(http.StatusBadRequest, "IncompleteBody", "reading the body: %v", err)
	}
	if len(body) > maxHashedBody {
		return refuse(http.StatusRequestEntityTooLarge, "EntityTooLarge", "the body is larger than %d bytes", maxHashedBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return nil
}

func (v *Verifier) checkService(service string) error {
	for _, s := range v.services {
		if s == service {
			return nil
		}
	}
	return refuse(http.StatusForbidden, "SignatureDoesNotMatch", "the request is signed for service %q; this endpoint accepts %s", service, strings.Join(v.services, ", "))
}

// loopback says the remote address is a loopback one.
func loopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// signed is what a request says about its signature.
type signed struct {
	accessKey, date, region, service string
	amzTime                          time.Time
	signedHeaders                    []string
	signature                        string
	payloadHash                      string
	presigned                        bool
}

func (v *Verifier) parseHeader(r *http.Request) (*signed, error) {
	auth := r.Header.Get("Authorization")
	alg, rest, _ := strings.Cut(auth, " ")
	if alg != algorithm {
		if strings.HasPrefix(alg, "AWS4-ECDSA") {
			return nil, refuse(http.StatusNotImplemented, "NotImplemented", "SigV4a (%s) is not supported; sign with %s", alg, algorithm)
		}
		return nil, refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "the Authorization header must use %s, not %q", algorithm, alg)
	}
	fields := map[string]string{}
	for _, f := range strings.Split(rest, ",") {
		k, val, ok := strings.Cut(strings.TrimSpace(f), "=")
		if ok {
			fields[k] = val
		}
	}
	s := &signed{signature: fields["Signature"]}
	if err := s.setCredential(fields["Credential"]); err != nil {
		return nil, err
	}
	if fields["SignedHeaders"] == "" || s.signature == "" {
		return nil, refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "the Authorization header lacks SignedHeaders or Signature")
	}
	s.signedHeaders = strings.Split(fields["SignedHeaders"], ";")
	when := r.Header.Get("X-Amz-Date")
	dateHeader := "x-amz-date"
	if when == "" {
		when, dateHeader = r.Header.Get("Date"), "date"
	}
	t, err := parseTime(when)
	if err != nil {
		return nil, refuse(http.StatusForbidden, "AccessDenied", "the request has no valid X-Amz-Date: %v", err)
	}
	s.amzTime = t
	if !s.signs(dateHeader) || !s.signs("host") {
		return nil, refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "SignedHeaders must include host and %s", dateHeader)
	}
	if err := s.checkScopeDate(); err != nil {
		return nil, err
	}
	if now := v.now(); t.Before(now.Add(-MaxSkew)) || t.After(now.Add(MaxSkew)) {
		return nil, refuse(http.StatusForbidden, "RequestTimeTooSkewed",
			"the request was signed at %s, more than %s from the server's time %s", t.Format(time.RFC3339), MaxSkew, now.UTC().Format(time.RFC3339))
	}
	s.payloadHash = r.Header.Get("X-Amz-Content-Sha256")
	if s.payloadHash != "" && !s.signs("x-amz-content-sha256") {
		return nil, refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "x-amz-content-sha256 is sent but not signed")
	}
	if s.service != "s3" {
		// Iceberg's Java REST client (RESTSigV4AuthSession) sends the body's
		// SHA-256 in base64 and signs its hex form, as the AWS SDK computes
		// it; the body is checked against it all the same.
		if sum, err := base64.StdEncoding.DecodeString(s.payloadHash); err == nil && len(sum) == sha256.Size {
			s.payloadHash = hex.EncodeToString(sum)
		}
	}
	return s, nil
}

func (v *Verifier) parseQuery(r *http.Request) (*signed, error) {
	q := r.URL.Query()
	if alg := q.Get("X-Amz-Algorithm"); alg != algorithm {
		return nil, refuse(http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Algorithm must be %s, not %q", algorithm, alg)
	}
	s := &signed{signature: q.Get("X-Amz-Signature"), presigned: true}
	if err := s.setCredential(q.Get("X-Amz-Credential")); err != nil {
		return nil, err
	}
	if q.Get("X-Amz-SignedHeaders") == "" {
		return nil, refuse(http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-SignedHeaders is missing")
	}
	s.signedHeaders = strings.Split(q.Get("X-Amz-SignedHeaders"), ";")
	if !s.signs("host") {
		return nil, refuse(http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-SignedHeaders must include host")
	}
	t, err := parseTime(q.Get("X-Amz-Date"))
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Date: %v", err)
	}
	s.amzTime = t
	if err := s.checkScopeDate(); err != nil {
		return nil, err
	}
	secs, err := strconv.ParseInt(q.Get("X-Amz-Expires"), 10, 64)
	if err != nil || secs < 0 || time.Duration(secs)*time.Second > maxPresignExpiry {
		return nil, refuse(http.StatusBadRequest, "AuthorizationQueryParametersError", "X-Amz-Expires must be a number of seconds from 0 to %d, not %q", int64(maxPresignExpiry/time.Second), q.Get("X-Amz-Expires"))
	}
	now := v.now()
	if t.After(now.Add(MaxSkew)) {
		return nil, refuse(http.StatusForbidden, "AccessDenied", "the presigned request is dated %s, in the future", t.Format(time.RFC3339))
	}
	if now.After(t.Add(time.Duration(secs) * time.Second)) {
		return nil, refuse(http.StatusForbidden, "AccessDenied", "Request has expired: the presigned URL was valid until %s", t.Add(time.Duration(secs)*time.Second).Format(time.RFC3339))
	}
	s.payloadHash = q.Get("X-Amz-Content-Sha256")
	if s.payloadHash == "" {
		s.payloadHash = UnsignedPayload
	}
	return s, nil
}

// setCredential parses AKID/date/region/service/aws4_request.
func (s *signed) setCredential(cred string) error {
	parts := strings.Split(cred, "/")
	// The access key itself may not hold '/', but be lenient at the front.
	if len(parts) < 5 || parts[len(parts)-1] != "aws4_request" {
		return refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "the credential %q is not ACCESSKEY/DATE/REGION/SERVICE/aws4_request", cred)
	}
	n := len(parts)
	s.accessKey = strings.Join(parts[:n-4], "/")
	s.date, s.region, s.service = parts[n-4], parts[n-3], parts[n-2]
	return nil
}

func (s *signed) checkScopeDate() error {
	if s.amzTime.Format(dateFormat) != s.date {
		return refuse(http.StatusBadRequest, "AuthorizationHeaderMalformed", "the credential's date %s is not the signing date %s", s.date, s.amzTime.Format(dateFormat))
	}
	return nil
}

func (s *signed) signs(header string) bool {
	for _, h := range s.signedHeaders {
		if h == header {
			return true
		}
	}
	return false
}

func parseTime(v string) (time.Time, error) {
	if t, err := time.Parse(timeFormat, v); err == nil {
		return t, nil
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("%q is not a time like 20060102T150405Z", v)
}

func (s *signed) scope() string {
	return s.date + "/" + s.region + "/" + s.service + "/aws4_request"
}

// matches computes the signature of r and compares it with the one sent.
// The path is tried as sent on the wire and as the canonical encoding of
// its decoded form, each once and (for services other than s3) twice
// encoded, as the SDKs differ in which they sign.
func (s *signed) matches(r *http.Request, key []byte) bool {
	payload := s.payloadHash
	if payload == "" {
		// Not sent: the signature covers the body's hash, which needs the body.
		body, err := io.ReadAll(io.LimitReader(r.Body, maxHashedBody+1))
		if err != nil || len(body) > maxHashedBody {
			return false
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(body)
		payload = hex.EncodeToString(sum[:])
	}
	query := canonicalQuery(r.URL.RawQuery, s.presigned)
	headers := s.canonicalHeaders(r)
	for _, path := range candidatePaths(r, s.service != "s3") {
		canonical := strings.Join([]string{r.Method, path, query, headers, strings.Join(s.signedHeaders, ";"), payload}, "\n")
		if hmac.Equal([]byte(s.sign(key, canonical)), []byte(s.signature)) {
			return true
		}
	}
	return false
}

func (s *signed) sign(key []byte, canonicalRequest string) string {
	sum := sha256.Sum256([]byte(canonicalRequest))
	toSign := algorithm + "\n" + s.amzTime.Format(timeFormat) + "\n" + s.scope() + "\n" + hex.EncodeToString(sum[:])
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func candidatePaths(r *http.Request, double bool) []string {
	wire := r.URL.EscapedPath()
	if r.RequestURI != "" && !strings.HasPrefix(r.RequestURI, "http") {
		wire, _, _ = strings.Cut(r.RequestURI, "?")
	}
	if wire == "" {
		wire = "/"
	}
	paths := []string{wire}
	if c := uriEncode(r.URL.Path, false); c != wire && r.URL.Path != "" {
		paths = append(paths, c)
	}
	if double {
		for _, p := range paths[:len(paths):len(paths)] {
			paths = append(paths, uriEncode(p, false))
		}
	}
	return paths
}

// canonicalQuery sorts the parameters by name and value and encodes both
// strictly, leaving out X-Amz-Signature of a presigned request.
func canonicalQuery(raw string, presigned bool) string {
	type kv struct{ k, v string }
	var pairs []kv
	for _, part := range strings.Split(raw, "&") {
		if part == "" {
			continue
		}
		k, val, _ := strings.Cut(part, "=")
		dk, err := url.QueryUnescape(k)
		if err != nil {
			dk = k
		}
		dv, err := url.QueryUnescape(val)
		if err != nil {
			dv = val
		}
		if presigned && dk == "X-Amz-Signature" {
			continue
		}
		pairs = append(pairs, kv{uriEncode(dk, true), uriEncode(dv, true)})
	}
	sort.Slice(pairs, func(i, j int) bool {
		if pairs[i].k != pairs[j].k {
			return pairs[i].k < pairs[j].k
		}
		return pairs[i].v < pairs[j].v
	})
	var b strings.Builder
	for i, p := range pairs {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(p.k)
		b.WriteByte('=')
		b.WriteString(p.v)
	}
	return b.String()
}

// uriEncode is SigV4's UriEncode: every byte but A-Z a-z 0-9 - . _ ~ is
// %XX-encoded; '/' too when encodeSlash.
func uriEncode(s string, encodeSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '~':
			b.WriteByte(c)
		case c == '/' && !encodeSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

func (s *signed) canonicalHeaders(r *http.Request) string {
	var b strings.Builder
	for _, h := range s.signedHeaders {
		var values []string
		switch h {
		case "host":
			values = []string{r.Host}
		case "content-length":
			values = r.Header.Values("Content-Length")
			if len(values) == 0 {
				values = []string{strconv.FormatInt(r.ContentLength, 10)}
			}
		case "transfer-encoding":
			values = r.TransferEncoding
		default:
			values = r.Header.Values(h)
		}
		b.WriteString(h)
		b.WriteByte(':')
		for i, v := range values {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strings.Join(strings.Fields(v), " "))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func signingKey(secret, date, region, service string) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), date)
	k = hmacSHA256(k, region)
	k = hmacSHA256(k, service)
	return hmacSHA256(k, "aws4_request")
}
