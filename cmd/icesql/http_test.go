package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// TestRESTAndSQLWritersLoseNothing: REST clients (iceberg-go's, through the
// served catalog) and SQL sessions append to one table at once; every
// acknowledged row is there, and the snapshot log is one line.
func TestRESTAndSQLWritersLoseNothing(t *testing.T) {
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	for _, q := range []string{"CREATE DATABASE d", "CREATE TABLE d.t (id BIGINT, src TEXT)"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(httpHandler(e.Catalog().(*storage.Warehouse), nil, nil, "", nil, nil))
	defer srv.Close()

	const writers, rounds = 2, 8
	var acked atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 4*writers)
	for w := range writers {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for i := range rounds {
				if _, err := db.Exec(fmt.Sprintf("INSERT INTO d.t VALUES (%d, 'sql'), (%d, 'sql')", w*1000+i, w*1000+i)); err != nil {
					errs <- fmt.Errorf("sql writer %d: %w", w, err)
					return
				}
				acked.Add(2)
			}
		}()
		go func() {
			defer wg.Done()
			cat, err := rest.NewCatalog(ctx, "icesql", srv.URL)
			if err != nil {
				errs <- err
				return
			}
			for i := range rounds {
				if err := restAppend(ctx, cat, int64(w*1000+500+i)); err != nil {
					errs <- fmt.Errorf("rest writer %d: %w", w, err)
					return
				}
				acked.Add(3)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var n int64
	if err := db.QueryRow("SELECT COUNT(*) FROM d.t").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != acked.Load() {
		t.Fatalf("%d rows, %d acknowledged", n, acked.Load())
	}
	tbl, err := e.Catalog().LoadTable(ctx, table.Identifier{"d", "t"})
	if err != nil {
		t.Fatal(err)
	}
	chain := 0
	for s := tbl.CurrentSnapshot(); s != nil; chain++ {
		if s.ParentSnapshotID == nil {
			s = nil
			continue
		}
		s = tbl.Metadata().SnapshotByID(*s.ParentSnapshotID)
	}
	if chain != len(tbl.Metadata().Snapshots()) || chain != 2*writers*rounds {
		t.Fatalf("snapshot log: %d snapshots in the chain, %d in the table, want %d", chain, len(tbl.Metadata().Snapshots()), 2*writers*rounds)
	}
}

// restAppend appends three rows through the REST catalog, reloading and
// trying again when another writer committed first (409).
func restAppend(ctx context.Context, cat *rest.Catalog, id int64) error {
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "src", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for range 3 {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("rest")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rows := array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
	defer rows.Release()
	for attempt := 0; attempt < 100; attempt++ {
		tbl, err := cat.LoadTable(ctx, table.Identifier{"d", "t"})
		if err != nil {
			return err
		}
		if _, err = tbl.AppendTable(ctx, rows, 10, nil); err == nil {
			return nil
		} else if !errors.Is(err, rest.ErrCommitFailed) {
			return err
		}
	}
	return errors.New("still losing races after 100 attempts")
}

// TestHTTPAuth: with an account, the catalog wants its bearer token; the
// account's credentials are the token USER:PASSWORD.
func TestHTTPAuth(t *testing.T) {
	wh, err := storage.OpenWarehouse(context.Background(), "file://"+t.TempDir(), storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	if httpAuth("", "", nil) != nil {
		t.Fatal("without an account the catalog is open (loopback only)")
	}
	srv := httptest.NewServer(httpHandler(wh, httpAuth("ann", "s3cret", nil), nil, "", nil, nil))
	defer srv.Close()
	for _, c := range []struct {
		header string
		status int
	}{{"", 401}, {"Bearer ann:wrong", 401}, {"Basic YW5uOnMzY3JldA==", 401}, {"Bearer ann:s3cret", 200}} {
		req, _ := http.NewRequest("GET", srv.URL+"/_iceberg/v1/config", nil)
		if c.header != "" {
			req.Header.Set("Authorization", c.header)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("Authorization %q: %d, want %d", c.header, resp.StatusCode, c.status)
		}
	}
}

// TestOAuthTokens: clients configured with credential=USER:PASSWORD get a
// token from /v1/oauth/tokens (and /_iceberg/v1/oauth/tokens), which the
// catalog then accepts until it expires; wrong credentials, a forged, an
// expired token or one signed with an old password are refused with the
// specification's errors.
func TestOAuthTokens(t *testing.T) {
	ctx := context.Background()
	wh, err := storage.OpenWarehouse(ctx, "file://"+t.TempDir(), storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	clock := func() time.Time { return now }
	tokens := restserve.NewTokens(map[string]string{"ann": "s3cret"}).WithClock(clock, time.Hour)
	srv := httptest.NewServer(httpHandler(wh, httpAuth("ann", "s3cret", tokens), tokens, "", nil, nil))
	defer srv.Close()

	// post asks the token endpoint; it returns the status and the JSON body.
	post := func(path string, form url.Values, basic ...string) (int, map[string]any) {
		t.Helper()
		base := srv.URL
		if len(basic) == 1 { // another server
			base = basic[0]
		}
		req, _ := http.NewRequest("POST", base+path, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if len(basic) == 2 {
			req.SetBasicAuth(basic[0], basic[1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
			t.Fatalf("%s: the answer is not JSON: %v", path, err)
		}
		return resp.StatusCode, out
	}
	// config reads /v1/config with a bearer token, returning the status and
	// the error's type.
	config := func(token string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/v1/config", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Error struct{ Type string } }
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Error.Type
	}
	grant := url.Values{"grant_type": {"client_credentials"}, "client_id": {"ann"}, "client_secret": {"s3cret"}, "scope": {"catalog"}}

	var token string
	for _, path := range []string{"/v1/oauth/tokens", "/_iceberg/v1/oauth/tokens"} {
		status, out := post(path, grant)
		if status != 200 || out["token_type"] != "bearer" || out["expires_in"] != float64(3600) ||
			out["issued_token_type"] != "urn:ietf:params:oauth:token-type:access_token" {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		token = out["access_token"].(string)
		if status, typ := config(token); status != 200 {
			t.Fatalf("the issued token is refused: %d %s", status, typ)
		}
	}
	if status, out := post("/v1/oauth/tokens", url.Values{"grant_type": {"client_credentials"}}, "ann", "s3cret"); status != 200 {
		t.Errorf("HTTP Basic client authentication: %d %v", status, out)
	}

	for _, c := range []struct {
		name   string
		form   url.Values
		status int
		code   string
	}{
		{"wrong secret", url.Values{"grant_type": {"client_credentials"}, "client_id": {"ann"}, "client_secret": {"nope"}}, 401, "invalid_client"},
		{"unknown user", url.Values{"grant_type": {"client_credentials"}, "client_id": {"bob"}, "client_secret": {"s3cret"}}, 401, "invalid_client"},
		{"no client", url.Values{"grant_type": {"client_credentials"}}, 401, "invalid_client"},
		{"no grant", url.Values{"client_id": {"ann"}, "client_secret": {"s3cret"}}, 400, "invalid_request"},
		{"password grant", url.Values{"grant_type": {"password"}, "username": {"ann"}, "password": {"s3cret"}}, 400, "unsupported_grant_type"},
		{"exchange of a forged token", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
			"subject_token": {token + "x"}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}}, 400, "invalid_grant"},
	} {
		status, out := post("/v1/oauth/tokens", c.form)
		if status != c.status || out["error"] != c.code || out["error_description"] == "" {
			t.Errorf("%s: %d %v, want %d %s", c.name, status, out, c.status, c.code)
		}
	}

	// A client renews its token before it expires (Java's token exchange).
	status, out := post("/v1/oauth/tokens", url.Values{"grant_type": {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token": {token}, "subject_token_type": {"urn:ietf:params:oauth:token-type:access_token"}})
	if status != 200 {
		t.Fatalf("token exchange: %d %v", status, out)
	}
	if status, _ := config(out["access_token"].(string)); status != 200 {
		t.Errorf("the exchanged token is refused: %d", status)
	}

	// Forged, signed for another password, expired: each 401.
	forged := []string{token[:len(token)-2] + "AA", strings.Replace(token, "icesql1.YW5u", "icesql1.Ym9i", 1)}
	old := restserve.NewTokens(map[string]string{"ann": "old"})
	srv2 := httptest.NewServer(httpHandler(wh, httpAuth("ann", "old", old), old, "", nil, nil))
	defer srv2.Close()
	grant.Set("client_secret", "old")
	if status, out := post("/v1/oauth/tokens", grant, srv2.URL); status != 200 {
		t.Fatalf("the server with the old password: %d %v", status, out)
	} else {
		forged = append(forged, out["access_token"].(string))
	}
	for _, f := range forged {
		if status, typ := config(f); status != 401 || typ != "NotAuthorizedException" {
			t.Errorf("token %q: %d %s, want 401 NotAuthorizedException", f, status, typ)
		}
	}
	now = now.Add(time.Hour + time.Second)
	if status, typ := config(token); status != 401 || typ != "NotAuthorizedException" {
		t.Errorf("an expired token: %d %s, want 401", status, typ)
	}
	now = now.Add(-time.Hour)

	// iceberg-go's REST client with credential= exchanges it itself.
	cat, err := rest.NewCatalog(ctx, "icesql", srv.URL+"/_iceberg", rest.WithCredential("ann:s3cret"), rest.WithWarehouseLocation("warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := cat.CreateNamespace(ctx, table.Identifier{"oauth"}, nil); err != nil {
		t.Fatalf("create a namespace with a token: %v", err)
	}
	if _, err := rest.NewCatalog(ctx, "icesql", srv.URL+"/_iceberg", rest.WithCredential("ann:wrong")); err == nil || !errors.Is(err, rest.ErrOAuthError) {
		t.Errorf("wrong credentials: %v, want an OAuth error", err)
	}
}
