package catalogs_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icesql/icesql/engine"
)

// TestRESTOAuth2 covers credential=client_id:secret (OAuth2 client
// credentials, as Polaris and other REST catalogs use) and token=...: the
// client fetches a token from the catalog's token endpoint and sends it as a
// bearer token on every call.
func TestRESTOAuth2(t *testing.T) {
	for _, tc := range []struct {
		name  string
		props iceberg.Properties
	}{
		{"credential", iceberg.Properties{"credential": "icesql-client:s3cret", "scope": "PRINCIPAL_ROLE:ALL"}},
		{"token", iceberg.Properties{"token": "issued-token"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var (
				mu       sync.Mutex
				problems []string
				authed   int
			)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				defer mu.Unlock()
				w.Header().Set("Content-Type", "application/json")
				if r.URL.Path == "/v1/oauth/tokens" {
					r.ParseForm()
					id, secret, ok := r.BasicAuth()
					if !ok {
						id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
					}
					if r.PostForm.Get("grant_type") != "client_credentials" || id != "icesql-client" || secret != "s3cret" || r.PostForm.Get("scope") != "PRINCIPAL_ROLE:ALL" {
						problems = append(problems, "token request: "+r.PostForm.Encode())
						w.WriteHeader(http.StatusUnauthorized)
						return
					}
					json.NewEncoder(w).Encode(map[string]any{"access_token": "issued-token", "token_type": "bearer", "expires_in": 3600})
					return
				}
				if got := r.Header.Get("Authorization"); got != "Bearer issued-token" {
					problems = append(problems, r.URL.Path+": Authorization "+got)
					w.WriteHeader(http.StatusUnauthorized)
					json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "no token", "type": "NotAuthorizedException", "code": 401}})
					return
				}
				authed++
				switch r.URL.Path {
				case "/v1/config":
					json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}})
				case "/v1/namespaces":
					json.NewEncoder(w).Encode(map[string]any{"namespaces": [][]string{{"sales"}}})
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			}))
			defer srv.Close()
			props := iceberg.Properties{"type": "rest", "uri": srv.URL}
			for k, v := range tc.props {
				props[k] = v
			}
			conn := openConn(t, engine.Config{CatalogProperties: props})
			var n int
			if err := conn.QueryRowContext(context.Background(),
				"SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = 'sales'").Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 1 {
				t.Errorf("namespace sales not listed")
			}
			mu.Lock()
			defer mu.Unlock()
			for _, p := range problems {
				t.Error(p)
			}
			if authed < 2 {
				t.Errorf("%d authorised calls, want at least config and namespaces", authed)
			}
		})
	}
}
