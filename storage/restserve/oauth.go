package restserve

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The OAuth2 token endpoint of the specification (POST /v1/oauth/tokens):
// clients configured with credential=CLIENT_ID:SECRET (PyIceberg, Spark
// and every Java client, iceberg-go, DuckDB's CLIENT_ID/CLIENT_SECRET)
// exchange the account's user and password for a bearer token, with the
// client-credentials grant, and renew it with the token-exchange grant
// before it expires.
//
// A token is signed rather than stored: USER.EXPIRY.MAC, the MAC keyed by
// the account's password. A server restart keeps tokens valid, a changed
// password revokes them all, and the server holds no state.

const (
	grantClientCredentials = "client_credentials"
	grantTokenExchange     = "urn:ietf:params:oauth:grant-type:token-exchange"
	accessTokenType        = "urn:ietf:params:oauth:token-type:access_token"
	tokenPrefix            = "icesql1."
)

// DefaultTokenTTL is how long an issued token is valid. Java clients renew
// a token some minutes before it expires (token-exchange grant).
const DefaultTokenTTL = time.Hour

// ErrTokenExpired is what Tokens.Verify returns for a token of ours whose
// time is over: the client must ask the token endpoint again.
var ErrTokenExpired = errors.New("the access token has expired: ask /v1/oauth/tokens for a new one")

// Tokens issues and verifies the access tokens of the token endpoint for
// a set of accounts (user → password). Without accounts (a server open to
// loopback clients) any client id is issued a token, which nothing checks.
type Tokens struct {
	accounts map[string]string
	open     []byte // the MAC key of an open server's tokens
	ttl      time.Duration
	now      func() time.Time
	failures *failureLimiter // failed sign-ins (ratelimit.go)
}

// NewTokens returns the issuer of tokens for accounts (user → password).
func NewTokens(accounts map[string]string) *Tokens {
	t := &Tokens{accounts: make(map[string]string, len(accounts)), ttl: DefaultTokenTTL, now: time.Now, failures: newFailureLimiter()}
	for u, p := range accounts {
		t.accounts[u] = p
	}
	if len(t.accounts) == 0 {
		t.open = make([]byte, 32)
		rand.Read(t.open)
	}
	return t
}

// WithClock returns a copy of t that reads the time from now and issues
// tokens valid for ttl (tests).
func (t *Tokens) WithClock(now func() time.Time, ttl time.Duration) *Tokens {
	c := *t
	c.now, c.ttl = now, ttl
	return &c
}

// key is the MAC key of user's tokens: derived from the password, so that
// changing it revokes them.
func (t *Tokens) key(user string) ([]byte, bool) {
	if t.open != nil {
		return t.open, true
	}
	pw, ok := t.accounts[user]
	if !ok {
		return nil, false
	}
	m := hmac.New(sha256.New, []byte(pw))
	m.Write([]byte("icesql oauth2 access token\x00" + user))
	return m.Sum(nil), true
}

func mac(key []byte, payload string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns a token for user, valid for t.ttl.
func (t *Tokens) issue(user string) (string, bool) {
	key, ok := t.key(user)
	if !ok {
		return "", false
	}
	payload := tokenPrefix + base64.RawURLEncoding.EncodeToString([]byte(user)) + "." + strconv.FormatInt(t.now().Add(t.ttl).Unix(), 10)
	return payload + "." + mac(key, payload), true
}

// Ours says token has the form of the tokens Tokens issues, so that an
// authenticator accepting other bearer tokens too knows which check applies.
func Ours(token string) bool { return strings.HasPrefix(token, tokenPrefix) }

// Verify returns the user a token was issued to; an error when it was not
// issued by t for a current account's password, or has expired.
func (t *Tokens) Verify(token string) (string, error) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	parts := strings.Split(rest, ".")
	if !ok || len(parts) != 3 {
		return "", errors.New("the bearer token is not an access token of this server")
	}
	name, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return "", errors.New("the bearer token is not an access token of this server")
	}
	user := string(name)
	key, ok := t.key(user)
	if !ok || subtle.ConstantTimeCompare([]byte(mac(key, token[:strings.LastIndexByte(token, '.')])), []byte(parts[2])) != 1 {
		return "", errors.New("the access token was not issued by this server, or the account's password has changed since")
	}
	expiry, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !t.now().Before(time.Unix(expiry, 0)) {
		return "", ErrTokenExpired
	}
	return user, nil
}

// client checks a client id and secret against the accounts.
func (t *Tokens) client(id, secret string) bool {
	if t.open != nil {
		return true
	}
	pw, ok := t.accounts[id]
	return ok && subtle.ConstantTimeCompare([]byte(pw), []byte(secret)) == 1
}

// tooManyFailures refuses a token request whose client or account has
// spent its allowance of failed sign-ins: 429 with Retry-After.
type tooManyFailures struct{ wait time.Duration }

func (e *tooManyFailures) Error() string { return "too many failed sign-ins" }

// oauthError is the token endpoint's error response (RFC 6749 §5.2, the
// specification's OAuthError): {"error": CODE, "error_description": ...}.
type oauthError struct {
	status      int
	code        string
	description string
}

func (e *oauthError) Error() string { return e.code + ": " + e.description }

func oauthErr(status int, code, format string, args ...any) *oauthError {
	return &oauthError{status: status, code: code, description: fmt.Sprintf(format, args...)}
}

// tokenResponse is the specification's OAuthTokenResponse.
type tokenResponse struct {
	AccessToken     string `json:"access_token"`
	TokenType       string `json:"token_type"`
	ExpiresIn       int64  `json:"expires_in"`
	IssuedTokenType string `json:"issued_token_type"`
	Scope           string `json:"scope,omitempty"`
}

// serveToken answers POST /v1/oauth/tokens. It is served before the
// request is authenticated: its body carries the credentials.
func (h *Handler) serveToken(w http.ResponseWriter, r *http.Request) {
	resp, err := h.token(r)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if tm, ok := errors.AsType[*tooManyFailures](err); ok {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(tm.wait.Seconds())), 10))
		writeError(w, apiError(http.StatusTooManyRequests, "TooManyRequestsException",
			"too many failed sign-ins from this client or for this account: try again in %s", tm.wait.Round(time.Second)))
		return
	}
	if err != nil {
		e, ok := errors.AsType[*oauthError](err)
		if !ok {
			e = oauthErr(http.StatusBadRequest, "invalid_request", "%v", err)
		}
		if e.status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="icesql"`)
		}
		body, _ := json.Marshal(map[string]string{"error": e.code, "error_description": e.description})
		w.WriteHeader(e.status)
		w.Write(body)
		return
	}
	body, _ := json.Marshal(resp)
	w.Write(body)
}

func (h *Handler) token(r *http.Request) (*tokenResponse, error) {
	tokens := h.cfg.Tokens
	if tokens == nil {
		return nil, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "this catalog issues no tokens")
	}
	if r.Method != http.MethodPost {
		return nil, oauthErr(http.StatusBadRequest, "invalid_request", "the token endpoint takes POST, not %s", r.Method)
	}
	if ct, _, _ := strings.Cut(r.Header.Get("Content-Type"), ";"); strings.TrimSpace(ct) != "application/x-www-form-urlencoded" {
		return nil, oauthErr(http.StatusBadRequest, "invalid_request", "the token request must be application/x-www-form-urlencoded, not %q", ct)
	}
	r.Body = http.MaxBytesReader(nil, r.Body, 64<<10)
	data, err := readBody(r)
	if err != nil {
		return nil, oauthErr(http.StatusBadRequest, "invalid_request", "%v", err)
	}
	form, err := url.ParseQuery(string(data))
	if err != nil {
		return nil, oauthErr(http.StatusBadRequest, "invalid_request", "the token request is not a valid form: %v", err)
	}
	// limited refuses a request whose client or account has failed too
	// often, before its credentials are checked; failed spends their
	// allowance (ratelimit.go).
	var keys []string
	limited := func(id string) error {
		keys = tokens.limitKeys(r, id)
		if d := tokens.failures.wait(tokens.now(), keys...); d > 0 {
			return &tooManyFailures{wait: d}
		}
		return nil
	}
	failed := func(err error) error {
		tokens.failures.fail(tokens.now(), keys...)
		return err
	}
	var user string
	switch grant := form.Get("grant_type"); grant {
	case grantClientCredentials:
		// RFC 6749 §2.3.1: in the body, or as HTTP Basic authentication.
		id, secret := form.Get("client_id"), form.Get("client_secret")
		if bu, bp, ok := r.BasicAuth(); ok {
			id, secret = bu, bp
		}
		if id == "" {
			return nil, oauthErr(http.StatusUnauthorized, "invalid_client", "the request names no client_id: send the account's user and password as client_id and client_secret (credential=USER:PASSWORD)")
		}
		if err := limited(id); err != nil {
			return nil, err
		}
		if !tokens.client(id, secret) {
			return nil, failed(oauthErr(http.StatusUnauthorized, "invalid_client", "the client_id and client_secret are not the user and password of an account of this server"))
		}
		user = id
	case grantTokenExchange:
		// A client renews its token: the token it holds is the subject.
		if tt := form.Get("subject_token_type"); tt != accessTokenType {
			return nil, oauthErr(http.StatusBadRequest, "invalid_request", "subject_token_type must be %s, not %q", accessTokenType, tt)
		}
		if err := limited(""); err != nil {
			return nil, err
		}
		u, err := tokens.Verify(form.Get("subject_token"))
		if err != nil {
			refused := oauthErr(http.StatusBadRequest, "invalid_grant", "the subject_token: %v", err)
			if errors.Is(err, ErrTokenExpired) {
				return nil, refused // a token of ours, only late: no guess
			}
			return nil, failed(refused)
		}
		user = u
	case "":
		return nil, oauthErr(http.StatusBadRequest, "invalid_request", "grant_type is missing")
	default:
		return nil, oauthErr(http.StatusBadRequest, "unsupported_grant_type", "the grant type %q is not supported: use %s or %s", grant, grantClientCredentials, grantTokenExchange)
	}
	tok, ok := tokens.issue(user)
	if !ok {
		return nil, oauthErr(http.StatusUnauthorized, "invalid_client", "the account %q no longer exists", user)
	}
	return &tokenResponse{AccessToken: tok, TokenType: "bearer", ExpiresIn: int64(tokens.ttl / time.Second),
		IssuedTokenType: accessTokenType, Scope: form.Get("scope")}, nil
}
