package restserve_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/iceberg-go"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// TestOldNamespaceLocationIgnored: a warehouse written before namespace
// locations were refused holds a namespace whose properties file names a
// location outside its folder (written here by hand, as the old server
// stored it). The catalog never hands that location out: the namespace's
// location is answered as its folder (in the S3 API's spelling when the
// warehouse is served), the stored value as icesql.ignored-location. An
// icesql engine connected over REST (which places a new table below the
// namespace's location) and the REST API create their tables in the
// folder; the table made before keeps working through both; nothing is
// written outside; property updates keep the ignored value until the
// location is removed, and cannot set icesql.ignored-location; DROP
// DATABASE leaves the outside folder alone.
func TestOldNamespaceLocationIgnored(t *testing.T) {
	ctx := context.Background()
	dir, outside := t.TempDir(), t.TempDir()
	e, err := engine.Open(ctx, engine.Config{Warehouse: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := sql.OpenDB(e.Connector())
	defer db.Close()
	exec := func(db *sql.DB, q string) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	count := func(db *sql.DB, tbl string) int {
		t.Helper()
		var n int
		if err := db.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", tbl, err)
		}
		return n
	}
	exec(db, "CREATE DATABASE old")
	exec(db, "CREATE TABLE old.kept (id BIGINT)")
	exec(db, "INSERT INTO old.kept VALUES (1), (2)")

	// The old server's namespace file, and a file in the folder its
	// location named.
	stale := "file://" + filepath.Join(outside, "old")
	propsFile := filepath.Join(dir, "old", ".icesql", "namespace.json")
	if err := os.WriteFile(propsFile, []byte(`{"location": "`+stale+`", "owner": "ann"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	sentinel := filepath.Join(outside, "old", "keep.txt")
	if err := os.MkdirAll(filepath.Dir(sentinel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sentinel, []byte("not the warehouse's"), 0o644); err != nil {
		t.Fatal(err)
	}

	wh := e.Catalog().(*storage.Warehouse)
	srv := httptest.NewServer(restserve.New(wh, restserve.Config{}))
	defer srv.Close()
	s := &server{t: t, http: srv, dir: dir}
	folder := "file://" + filepath.Join(dir, "old")
	props := s.want("GET", "/v1/namespaces/old", "", 200, "")["properties"].(map[string]any)
	if props["location"] != folder || props["icesql.ignored-location"] != stale || props["owner"] != "ann" {
		t.Fatalf("the old namespace's properties are %v, want location %s, icesql.ignored-location %s, owner ann", props, folder, stale)
	}
	served := httptest.NewServer(restserve.New(wh, restserve.Config{S3: &restserve.S3{Bucket: "lake"}}))
	defer served.Close()
	props = (&server{t: t, http: served}).want("GET", "/v1/namespaces/old", "", 200, "")["properties"].(map[string]any)
	if props["location"] != "s3://lake/old" {
		t.Errorf("served as the bucket lake, the namespace's location is %v, want s3://lake/old", props["location"])
	}

	// An icesql engine with the REST catalog: the table made before, and
	// a new one, which it asks to place below the namespace's location.
	client, err := engine.Open(ctx, engine.Config{CatalogProperties: iceberg.Properties{"type": "rest", "uri": srv.URL + "/_iceberg", "warehouse": "warehouse"}})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	cdb := sql.OpenDB(client.Connector())
	defer cdb.Close()
	if n := count(cdb, "old.kept"); n != 2 {
		t.Fatalf("the table made before has %d rows over REST, want 2", n)
	}
	exec(cdb, "INSERT INTO old.kept VALUES (3)")
	exec(cdb, "CREATE TABLE old.made (id BIGINT)")
	exec(cdb, "INSERT INTO old.made VALUES (7)")
	s.createTable("old", "viarest")
	exec(db, "CREATE TABLE old.viasql (id BIGINT)")
	for _, name := range []string{"kept", "made", "viarest", "viasql"} {
		meta := s.want("GET", "/v1/namespaces/old/tables/"+name, "", 200, "")["metadata"].(map[string]any)
		if loc := meta["location"]; loc != folder+"/"+name {
			t.Errorf("table old.%s is at %v, want %s/%s", name, loc, folder, name)
		}
	}
	if n := count(db, "old.kept"); n != 3 {
		t.Errorf("SQL sees %d rows of old.kept after the REST client's insert, want 3", n)
	}
	if n := count(db, "old.made"); n != 1 {
		t.Errorf("SQL sees %d rows of old.made, want 1", n)
	}
	onlySentinel := func() {
		t.Helper()
		var found []string
		filepath.WalkDir(outside, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				found = append(found, p)
			}
			return nil
		})
		if len(found) != 1 || found[0] != sentinel {
			t.Errorf("outside the warehouse: %v, want only %s", found, sentinel)
		}
	}
	onlySentinel()

	// Updates keep the ignored location until it is removed or set to the
	// folder; one elsewhere is refused.
	s.want("POST", "/v1/namespaces/old/properties", `{"updates": {"owner": "bob"}}`, 200, "")
	props = s.want("GET", "/v1/namespaces/old", "", 200, "")["properties"].(map[string]any)
	if props["location"] != folder || props["icesql.ignored-location"] != stale || props["owner"] != "bob" {
		t.Errorf("after an update of owner the properties are %v", props)
	}
	s.want("POST", "/v1/namespaces/old/properties", `{"updates": {"location": "file:///somewhere/else"}}`, 400, "BadRequestException")
	s.want("POST", "/v1/namespaces/old/properties", `{"updates": {"icesql.ignored-location": "file:///somewhere/else"}}`, 400, "BadRequestException")
	out := s.want("POST", "/v1/namespaces/old/properties", `{"removals": ["location"]}`, 200, "")
	if got, _ := json.Marshal(out); string(got) != `{"missing":[],"removed":["location"],"updated":[]}` {
		t.Errorf("removing the location: %s", got)
	}
	props = s.want("GET", "/v1/namespaces/old", "", 200, "")["properties"].(map[string]any)
	if _, ok := props["location"]; ok || props["icesql.ignored-location"] != nil || props["owner"] != "bob" {
		t.Errorf("after removing the location the properties are %v", props)
	}
	if data, err := os.ReadFile(propsFile); err != nil || string(data) != `{"owner":"bob"}` {
		t.Errorf("the properties file holds %s (%v)", data, err)
	}

	exec(db, "DROP DATABASE old")
	if _, err := os.Stat(filepath.Join(dir, "old")); !os.IsNotExist(err) {
		t.Errorf("the dropped namespace's folder: %v", err)
	}
	onlySentinel()
}
