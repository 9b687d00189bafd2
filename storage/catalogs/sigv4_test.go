package catalogs_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/icesql/icesql/engine"
)

// TestRESTSigV4 covers the AIStor Tables / AWS S3 Tables set-up: a REST
// catalog reached with SigV4 under the service name s3tables, static keys
// from rest.access-key-id/rest.secret-access-key, and a warehouse chosen by
// name. No such server runs here, so a local one stands in: it answers the
// config and namespace calls and checks every request's signature by
// signing the same request again with the same keys.
func TestRESTSigV4(t *testing.T) {
	const keyID, secret, region = "AKIDICESQLTEST", "icesql-secret", "us-east-1"
	var (
		mu       sync.Mutex
		problems []string
		signed   int
		created  bool
	)
	credScope := regexp.MustCompile(`Credential=([^/]+)/(\d{8})/([^/]+)/([^/]+)/aws4_request`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		fail := func(format string) { problems = append(problems, r.Method+" "+r.URL.Path+": "+format) }
		auth := r.Header.Get("Authorization")
		m := credScope.FindStringSubmatch(auth)
		switch {
		case m == nil:
			fail("not signed with SigV4: Authorization " + auth)
		case m[1] != keyID || m[3] != region || m[4] != "s3tables":
			fail("credential scope " + m[0] + ", want key " + keyID + ", region " + region + ", service s3tables")
		default:
			if err := verifySigV4(r, keyID, secret, region, "s3tables"); err != "" {
				fail(err)
			} else {
				signed++
			}
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/warehouses":
			var req struct{ Name string }
			if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil || req.Name != "lakehouse" {
				fail("want POST {\"name\": \"lakehouse\"}")
			}
			created = true
			w.WriteHeader(http.StatusOK)
			io.WriteString(w, "{}")
		case "/v1/config":
			if got := r.URL.Query().Get("warehouse"); got != "lakehouse" {
				fail("config asked for warehouse " + got + ", want lakehouse")
			}
			json.NewEncoder(w).Encode(map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{"prefix": "lakehouse"}})
		case "/v1/lakehouse/namespaces":
			json.NewEncoder(w).Encode(map[string]any{"namespaces": [][]string{{"sales"}}})
		default:
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": "no route", "type": "NotFoundException", "code": 404}})
		}
	}))
	defer srv.Close()

	conn := openConn(t, engine.Config{CatalogProperties: iceberg.Properties{
		"type": "rest", "uri": srv.URL, "warehouse": "lakehouse",
		"rest.sigv4-enabled": "true", "rest.signing-name": "s3tables", "rest.signing-region": region,
		"rest.access-key-id": keyID, "rest.secret-access-key": secret,
		"rest.create-warehouse": "true",
	}})
	var names []string
	rows, err := conn.QueryContext(context.Background(), "SHOW DATABASES")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	if !strings.Contains(strings.Join(names, ","), "sales") {
		t.Errorf("SHOW DATABASES = %v, want the catalog's namespace sales", names)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Error(p)
	}
	if !created {
		t.Error("the warehouse was not created (rest.create-warehouse)")
	}
	if signed < 3 {
		t.Errorf("%d correctly signed requests, want at least the warehouse, config and namespace calls", signed)
	}
}

// verifySigV4 signs a copy of r (the headers it says it signed, its body)
// with the given keys at its own X-Amz-Date and compares the signatures.
func verifySigV4(r *http.Request, keyID, secret, region, service string) string {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body)) // the handler reads it too
	sum := sha256.Sum256(body)
	payloadHash := hex.EncodeToString(sum[:])
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != payloadHash {
		return "x-amz-content-sha256 " + got + " is not the body's hash " + payloadHash
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return "bad X-Amz-Date: " + err.Error()
	}
	auth := r.Header.Get("Authorization")
	signedHeaders := regexp.MustCompile(`SignedHeaders=([^,]+)`).FindStringSubmatch(auth)
	signature := regexp.MustCompile(`Signature=([0-9a-f]+)`).FindStringSubmatch(auth)
	if signedHeaders == nil || signature == nil {
		return "malformed Authorization " + auth
	}
	again, _ := http.NewRequest(r.Method, "http://"+r.Host+r.URL.RequestURI(), nil)
	for _, h := range strings.Split(signedHeaders[1], ";") {
		switch h {
		case "host":
		case "content-length":
			// Go's server moves Content-Length out of the headers; the
			// signer reads it from the request.
			again.ContentLength = r.ContentLength
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	again.Header.Del("Authorization")
	creds := aws.Credentials{AccessKeyID: keyID, SecretAccessKey: secret}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, payloadHash, service, region, when); err != nil {
		return "re-sign: " + err.Error()
	}
	want := regexp.MustCompile(`Signature=([0-9a-f]+)`).FindStringSubmatch(again.Header.Get("Authorization"))
	if want == nil || want[1] != signature[1] {
		return "signature does not verify with the configured keys"
	}
	return ""
}
