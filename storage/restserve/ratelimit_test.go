package restserve_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// TestTokenEndpointRateLimit: failed sign-ins at the token endpoint are
// limited per client address and per account: after 10 failures the next
// request, even with the right password, is answered 429 with
// Retry-After and the specification's error body, without its
// credentials being checked; the other account from another address
// still signs in; the allowance refills with time. A forged token in a
// token exchange is a failure, an expired one of ours is not.
func TestTokenEndpointRateLimit(t *testing.T) {
	wh, err := storage.OpenWarehouse(context.Background(), "file://"+t.TempDir(), storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tokens := restserve.NewTokens(map[string]string{"ann": "pw-ann", "bob": "pw-bob"}).WithClock(func() time.Time { return now }, time.Hour)
	h := restserve.New(wh, restserve.Config{Tokens: tokens})
	type answer struct {
		status     int
		retryAfter string
		body       map[string]any
	}
	post := func(addr string, form url.Values) answer {
		t.Helper()
		r := httptest.NewRequest(http.MethodPost, "/v1/oauth/tokens", strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		r.RemoteAddr = addr + ":4242"
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		var body map[string]any
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatalf("the answer is not JSON: %q", w.Body.String())
		}
		return answer{w.Code, w.Header().Get("Retry-After"), body}
	}
	signIn := func(user, password string) url.Values {
		return url.Values{"grant_type": {"client_credentials"}, "client_id": {user}, "client_secret": {password}}
	}
	exchange := func(token string) url.Values {
		return url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"}, "subject_token": {token},
			"subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}
	}
	wantLimited := func(what string, a answer) {
		t.Helper()
		e, _ := a.body["error"].(map[string]any)
		if a.status != http.StatusTooManyRequests || a.retryAfter != "6" || e["code"] != float64(429) ||
			e["type"] != "TooManyRequestsException" || !strings.Contains(e["message"].(string), "too many failed sign-ins") {
			t.Errorf("%s: %d Retry-After %q %v, want 429, Retry-After 6 and the error body", what, a.status, a.retryAfter, a.body)
		}
	}
	wantStatus := func(what string, a answer, status int) {
		t.Helper()
		if a.status != status {
			t.Errorf("%s: %d %v, want %d", what, a.status, a.body, status)
		}
	}

	// Successful sign-ins spend nothing.
	for range 20 {
		wantStatus("ann signs in", post("10.0.0.1", signIn("ann", "pw-ann")), 200)
	}
	for i := range 10 {
		a := post("10.0.0.1", signIn("ann", "guess"))
		if a.status != 401 || a.body["error"] != "invalid_client" {
			t.Fatalf("failure %d: %d %v, want 401 invalid_client", i+1, a.status, a.body)
		}
	}
	wantLimited("ann's password from the guessing address", post("10.0.0.1", signIn("ann", "pw-ann")))
	wantLimited("ann's password from another address", post("10.0.0.2", signIn("ann", "pw-ann")))
	wantLimited("bob's password from the guessing address", post("10.0.0.1", signIn("bob", "pw-bob")))
	wantStatus("bob from another address", post("10.0.0.2", signIn("bob", "pw-bob")), 200)

	// One credit comes back after 6 s: one more try, then limited again.
	now = now.Add(6 * time.Second)
	wantStatus("ann after 6 s", post("10.0.0.2", signIn("ann", "pw-ann")), 200)
	wantStatus("a guess after 6 s", post("10.0.0.2", signIn("ann", "guess")), 401)
	wantLimited("the next guess", post("10.0.0.2", signIn("ann", "guess")))

	// Names that are no account are limited by the address alone.
	for range 10 {
		wantStatus("an unknown user", post("10.0.0.3", signIn("nobody", "x")), 401)
	}
	wantLimited("the 11th unknown user", post("10.0.0.3", signIn("nobody2", "x")))

	// Token exchange: forged tokens are failures, an expired one is not.
	good := post("10.0.0.9", signIn("bob", "pw-bob")).body["access_token"].(string)
	for range 10 {
		wantStatus("a forged token", post("10.0.0.4", exchange(good+"x")), 400)
	}
	wantLimited("the 11th forged token", post("10.0.0.4", exchange(good)))
	now = now.Add(2 * time.Hour)
	for range 12 {
		wantStatus("an expired token", post("10.0.0.5", exchange(good)), 400)
	}
}
