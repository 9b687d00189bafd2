package catalogs_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"
)

// startGlueLock puts a proxy in front of moto's Glue that enforces what
// moto skips: AWS Glue's optimistic lock. Glue's UpdateTable fails with
// ConcurrentModificationException when its VersionId is not the table's
// current version (iceberg-go's Glue catalog sends it for exactly this), but
// moto 5 applies every update, so two writers silently overwrite each other's
// commits there. The proxy checks the version and applies the update under
// one lock, as Glue does, so the concurrency test exercises the real
// protocol. Every other request passes through unchanged.
func startGlueLock(t testing.TB, moto string) string {
	t.Helper()
	target, err := url.Parse(moto)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	rejected := 0
	t.Cleanup(func() { t.Logf("Glue lock: %d stale updates rejected", rejected) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "AWSGlue.UpdateTable" {
			proxy.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var in struct {
			DatabaseName string
			VersionId    string
			TableInput   struct{ Name string }
		}
		if err := json.Unmarshal(body, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if in.VersionId != "" {
			current, err := glueTableVersion(moto, in.DatabaseName, in.TableInput.Name)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			if current != in.VersionId {
				rejected++
				w.Header().Set("Content-Type", "application/x-amz-json-1.1")
				w.Header().Set("X-Amzn-ErrorType", "ConcurrentModificationException")
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprintf(w, `{"__type":"ConcurrentModificationException","Message":"Update table failed due to concurrent modifications: version %s is not the current %s"}`, in.VersionId, current)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// glueTableVersion asks moto for a table's current VersionId (moto does not
// check signatures, so the request is unsigned).
func glueTableVersion(moto, db, name string) (string, error) {
	payload, _ := json.Marshal(map[string]string{"DatabaseName": db, "Name": name})
	req, err := http.NewRequest(http.MethodPost, moto+"/", bytes.NewReader(payload))
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Amz-Target", "AWSGlue.GetTable")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/glue/aws4_request, SignedHeaders=host, Signature=0")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var out struct{ Table struct{ VersionId string } }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("GetTable %s.%s: %w", db, name, err)
	}
	return out.Table.VersionId, nil
}
