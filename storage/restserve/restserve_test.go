package restserve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/catalog/rest"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
	"github.com/icesql/icesql/storage/s3serve"
	"github.com/icesql/icesql/storage/sigv4auth"
)

// server is a REST catalog over a fresh warehouse, and its folder.
type server struct {
	t    *testing.T
	wh   *storage.Warehouse
	dir  string
	http *httptest.Server
}

func newServer(t *testing.T, cfg restserve.Config) *server {
	t.Helper()
	dir := t.TempDir()
	root, err := storage.LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := storage.OpenWarehouse(context.Background(), root, storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(restserve.New(wh, cfg))
	t.Cleanup(srv.Close)
	return &server{t: t, wh: wh, dir: dir, http: srv}
}

// do sends a request and returns the status and the decoded JSON body.
func (s *server) do(method, path, body string) (int, map[string]any) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.http.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			s.t.Fatalf("%s %s: body is not JSON: %s", method, path, data)
		}
	}
	return resp.StatusCode, out
}

// want checks a response's status and, for an error, the exception type.
func (s *server) want(method, path, body string, status int, errType string) map[string]any {
	s.t.Helper()
	got, out := s.do(method, path, body)
	if got != status {
		s.t.Fatalf("%s %s: status %d, want %d: %v", method, path, got, status, out)
	}
	if errType != "" {
		e, _ := out["error"].(map[string]any)
		if e == nil || e["type"] != errType || e["code"] != float64(status) || e["message"] == "" {
			s.t.Fatalf("%s %s: error %v, want type %s", method, path, out, errType)
		}
	}
	return out
}

// client is iceberg-go's REST catalog client on s.
func (s *server) client() *rest.Catalog {
	s.t.Helper()
	cat, err := rest.NewCatalog(context.Background(), "icesql", s.http.URL+"/_iceberg", rest.WithWarehouseLocation("warehouse"))
	if err != nil {
		s.t.Fatal(err)
	}
	return cat
}

const schemaJSON = `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false},{"id":2,"name":"name","type":"string","required":false}]}`

func (s *server) createTable(ns, name string) map[string]any {
	s.t.Helper()
	return s.want("POST", "/v1/namespaces/"+ns+"/tables", `{"name":"`+name+`","schema":`+schemaJSON+`}`, 200, "")
}

// metadataFiles counts the metadata files of a table folder.
func (s *server) metadataFiles(ns, name string) int {
	s.t.Helper()
	m, _ := filepath.Glob(filepath.Join(s.dir, ns, name, "metadata", "*.metadata.json"))
	return len(m)
}

func TestConfig(t *testing.T) {
	s := newServer(t, restserve.Config{})
	out := s.want("GET", "/v1/config?warehouse=warehouse", "", 200, "")
	if out["overrides"].(map[string]any)["prefix"] != "warehouse" {
		t.Fatalf("overrides: %v", out["overrides"])
	}
	endpoints := out["endpoints"].([]any)
	for _, e := range []string{"POST /v1/{prefix}/transactions/commit", "HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
		"POST /v1/{prefix}/namespaces/{namespace}/register", "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}"} {
		if !slices.Contains(endpoints, any(e)) {
			t.Errorf("config lists no %q: %v", e, endpoints)
		}
	}
	s.want("GET", "/_iceberg/v1/config", "", 200, "")
	s.want("GET", "/v1/config?warehouse=other", "", 404, "NoSuchWarehouseException")
	s.want("GET", "/v1/other/namespaces", "", 404, "NoSuchWarehouseException")
	s.want("GET", "/v1/warehouse/nothing-here", "", 404, "NotFoundException")
}

func TestNamespaces(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/warehouse/namespaces", `{"namespace":["b"],"properties":{"owner":"ann"}}`, 200, "")
	s.want("POST", "/v1/namespaces", `{"namespace":["a"]}`, 200, "")
	s.want("POST", "/v1/namespaces", `{"namespace":["a"]}`, 409, "AlreadyExistsException")
	s.want("POST", "/v1/namespaces", `{"namespace":["x","y"]}`, 400, "BadRequestException")

	out := s.want("GET", "/v1/namespaces?pageToken=", "", 200, "")
	if got, _ := json.Marshal(out["namespaces"]); string(got) != `[["a"],["b"]]` {
		t.Fatalf("namespaces: %s", got)
	}
	out = s.want("GET", "/v1/namespaces?pageSize=1", "", 200, "")
	if got, _ := json.Marshal(out); string(got) != `{"namespaces":[["a"]],"next-page-token":"1"}` {
		t.Fatalf("first page: %s", got)
	}
	out = s.want("GET", "/v1/namespaces?pageSize=1&pageToken=1", "", 200, "")
	if got, _ := json.Marshal(out); string(got) != `{"namespaces":[["b"]],"next-page-token":null}` {
		t.Fatalf("second page: %s", got)
	}
	s.want("GET", "/v1/namespaces?pageToken=x", "", 400, "BadRequestException")

	out = s.want("GET", "/v1/namespaces/b", "", 200, "")
	if out["properties"].(map[string]any)["owner"] != "ann" {
		t.Fatalf("load: %v", out)
	}
	s.want("HEAD", "/v1/namespaces/b", "", 204, "")
	s.want("HEAD", "/v1/namespaces/none", "", 404, "")
	out = s.want("GET", "/v1/namespaces/none", "", 404, "NoSuchNamespaceException")
	if msg := out["error"].(map[string]any)["message"]; msg != "Namespace does not exist: none" {
		t.Fatalf("message %q is not Java's", msg)
	}

	// "missing" is always a list (PyIceberg requires it).
	out = s.want("POST", "/v1/namespaces/b/properties", `{"updates":{"k":"v"}}`, 200, "")
	if got, _ := json.Marshal(out); string(got) != `{"missing":[],"removed":[],"updated":["k"]}` {
		t.Fatalf("update: %s", got)
	}
	out = s.want("POST", "/v1/namespaces/b/properties", `{"removals":["k","nope"]}`, 200, "")
	if got, _ := json.Marshal(out); string(got) != `{"missing":["nope"],"removed":["k"],"updated":[]}` {
		t.Fatalf("removal: %s", got)
	}
	s.want("POST", "/v1/namespaces/b/properties", `{"removals":["k"],"updates":{"k":"v"}}`, 422, "UnprocessableEntityException")
	s.want("POST", "/v1/namespaces/none/properties", `{"updates":{"k":"v"}}`, 404, "NoSuchNamespaceException")
	// SQL sees the properties: they are the warehouse's.
	props, err := s.wh.LoadNamespaceProperties(context.Background(), table.Identifier{"b"})
	if err != nil || props["owner"] != "ann" || props["k"] != "" {
		t.Fatalf("warehouse properties %v, %v", props, err)
	}

	s.createTable("b", "t")
	s.want("DELETE", "/v1/namespaces/b", "", 409, "NamespaceNotEmptyException")
	s.want("DELETE", "/v1/namespaces/a", "", 204, "")
	s.want("DELETE", "/v1/namespaces/a", "", 404, "NoSuchNamespaceException")
}

// arrowRows is an Arrow table of the test schema.
func arrowRows(t *testing.T, ids ...int64) arrow.Table {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	for _, id := range ids {
		b.Field(0).(*array.Int64Builder).Append(id)
		b.Field(1).(*array.StringBuilder).Append("n")
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	return array.NewTableFromRecords(sc, []arrow.RecordBatch{rec})
}

// TestTablesThroughIcebergGo drives the tables endpoints with iceberg-go's
// REST client: what the warehouse then holds is what SQL reads.
func TestTablesThroughIcebergGo(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, restserve.Config{})
	cat := s.client()
	if err := cat.CreateNamespace(ctx, table.Identifier{"db"}, nil); err != nil {
		t.Fatal(err)
	}
	sc := iceberg.NewSchema(0, iceberg.NestedField{ID: 1, Name: "id", Type: iceberg.PrimitiveTypes.Int64},
		iceberg.NestedField{ID: 2, Name: "name", Type: iceberg.PrimitiveTypes.String})
	ident := table.Identifier{"db", "t"}
	tbl, err := cat.CreateTable(ctx, ident, sc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, ident, sc); !errors.Is(err, catalog.ErrTableAlreadyExists) {
		t.Fatalf("second create: %v", err)
	}
	tbl, err = tbl.AppendTable(ctx, arrowRows(t, 1, 2, 3), 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The warehouse, which SQL reads, has the commit at once.
	got, err := s.wh.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	if snap := got.CurrentSnapshot(); snap == nil || snap.SnapshotID != tbl.CurrentSnapshot().SnapshotID {
		t.Fatalf("warehouse snapshot %v, client %v", snap, tbl.CurrentSnapshot())
	}
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{"extra"}, iceberg.PrimitiveTypes.Int32, "", false, nil).Commit(); err != nil {
		t.Fatal(err)
	}
	if tbl, err = tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ = s.wh.LoadTable(ctx, ident)
	if got.Schema().NumFields() != 3 || tbl.Schema().NumFields() != 3 {
		t.Fatalf("schema after evolution: %v", got.Schema())
	}
	var names []string
	for id, err := range cat.ListTables(ctx, table.Identifier{"db"}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, id[1])
	}
	if !slices.Equal(names, []string{"t"}) {
		t.Fatalf("tables: %v", names)
	}
	if ok, err := cat.CheckTableExists(ctx, ident); err != nil || !ok {
		t.Fatalf("exists: %v %v", ok, err)
	}
	if _, err := cat.RenameTable(ctx, ident, table.Identifier{"db", "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.LoadTable(ctx, ident); !errors.Is(err, catalog.ErrNoSuchTable) {
		t.Fatalf("load of the old name: %v", err)
	}
	if _, err := s.wh.LoadTable(ctx, table.Identifier{"db", "u"}); err != nil {
		t.Fatal(err)
	}
	s.want("POST", "/v1/namespaces/db/tables/u/metrics", `{"report-type":"scan-report"}`, 204, "")
	// Spark reports on a staged table, which does not exist yet.
	s.want("POST", "/v1/namespaces/db/tables/staged/metrics", `{"report-type":"scan-report"}`, 204, "")
	s.want("POST", "/v1/namespaces/db/tables/u/metrics", `{"report-type"`, 400, "BadRequestException")
	s.want("HEAD", "/v1/namespaces/db/tables/u", "", 204, "")
	s.want("HEAD", "/v1/namespaces/db/tables/none", "", 404, "")
	if err := cat.DropTable(ctx, table.Identifier{"db", "u"}); err != nil {
		t.Fatal(err)
	}
	s.want("GET", "/v1/namespaces/db/tables/u", "", 404, "NoSuchTableException")
}

// TestStagedCreate is CREATE TABLE AS SELECT's path: stage-create says
// what the table would be, and a commit with assert-create creates it.
func TestStagedCreate(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	out := s.want("POST", "/v1/namespaces/db/tables", `{"name":"c","stage-create":true,"schema":`+schemaJSON+`}`, 200, "")
	meta := out["metadata"].(map[string]any)
	if _, ok := out["metadata-location"]; ok {
		t.Fatalf("a staged table has no metadata file yet: %v", out)
	}
	s.want("GET", "/v1/namespaces/db/tables/c", "", 404, "NoSuchTableException")
	commit := `{"requirements":[{"type":"assert-create"}],"updates":[
		{"action":"assign-uuid","uuid":"` + meta["table-uuid"].(string) + `"},
		{"action":"upgrade-format-version","format-version":2},
		{"action":"add-schema","schema":` + schemaJSON + `,"last-column-id":2},
		{"action":"set-current-schema","schema-id":-1},
		{"action":"add-spec","spec":{"spec-id":0,"fields":[]}},
		{"action":"set-default-spec","spec-id":-1},
		{"action":"add-sort-order","sort-order":{"order-id":0,"fields":[]}},
		{"action":"set-default-sort-order","sort-order-id":-1},
		{"action":"set-location","location":"file:///elsewhere"},
		{"action":"set-properties","updates":{"p":"1"}}]}`
	s.want("POST", "/v1/namespaces/db/tables/c", commit, 200, "")
	tbl, err := s.wh.LoadTable(context.Background(), table.Identifier{"db", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if tbl.Properties()["p"] != "1" || tbl.Metadata().TableUUID().String() != meta["table-uuid"] {
		t.Fatalf("created table: %v %v", tbl.Properties(), tbl.Metadata().TableUUID())
	}
	// The warehouse placed it, whatever set-location asked.
	if want := "file://" + filepath.ToSlash(filepath.Join(s.dir, "db", "c")); tbl.Location() != want {
		t.Fatalf("location %s, want %s", tbl.Location(), want)
	}
	out = s.want("POST", "/v1/namespaces/db/tables/c", commit, 409, "CommitFailedException")
	if msg := out["error"].(map[string]any)["message"]; msg != "Requirement failed: table already exists" {
		t.Fatalf("message %q", msg)
	}
}

// TestStagedCreateInDuckDBsOrder commits a staged create whose sort order
// and partition spec come before its schema, as DuckDB sends them.
func TestStagedCreateInDuckDBsOrder(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	out := s.want("POST", "/v1/namespaces/db/tables", `{"name":"c","stage-create":true,"schema":`+schemaJSON+`}`, 200, "")
	uuid := out["metadata"].(map[string]any)["table-uuid"].(string)
	commit := `{"requirements":[{"type":"assert-create"}],"updates":[
		{"action":"assign-uuid","uuid":"` + uuid + `"},
		{"action":"add-sort-order","sort-order":{"order-id":1,"fields":[{"source-id":1,"transform":"identity","direction":"asc","null-order":"nulls-first"}]}},
		{"action":"set-default-sort-order","sort-order-id":-1},
		{"action":"add-spec","spec":{"spec-id":0,"fields":[{"source-id":1,"field-id":1000,"name":"id_bucket","transform":"bucket[4]"}]}},
		{"action":"set-default-spec","spec-id":-1},
		{"action":"upgrade-format-version","format-version":2},
		{"action":"add-schema","schema":` + schemaJSON + `,"last-column-id":2},
		{"action":"set-current-schema","schema-id":-1}]}`
	s.want("POST", "/v1/namespaces/db/tables/c", commit, 200, "")
	tbl, err := s.wh.LoadTable(context.Background(), table.Identifier{"db", "c"})
	if err != nil {
		t.Fatal(err)
	}
	if n := tbl.SortOrder().Len(); n != 1 {
		t.Errorf("sort order %v, want one field", tbl.SortOrder())
	}
	if spec := tbl.Spec(); spec.NumFields() != 1 {
		t.Errorf("partition spec %v, want one field", tbl.Spec())
	}
}

// TestBadInput: each is a clear 4xx, and nothing is written.
func TestBadInput(t *testing.T) {
	s := newServer(t, restserve.Config{MaxBody: 4096})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	created := s.createTable("db", "t")
	uuid := created["metadata"].(map[string]any)["table-uuid"].(string)
	before := s.metadataFiles("db", "t")

	for _, c := range []struct{ name, body string }{
		{"malformed JSON", `{"requirements":[`},
		{"unknown update type", `{"requirements":[],"updates":[{"action":"make-it-fast"}]}`},
		{"unknown requirement type", `{"requirements":[{"type":"assert-mood"}],"updates":[]}`},
		{"update that cannot apply", `{"requirements":[],"updates":[{"action":"set-current-schema","schema-id":42}]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			s.want("POST", "/v1/namespaces/db/tables/t", c.body, 400, "BadRequestException")
		})
	}
	t.Run("stale base", func(t *testing.T) {
		out := s.want("POST", "/v1/namespaces/db/tables/t", `{"requirements":[{"type":"assert-current-schema-id","current-schema-id":7}],
			"updates":[{"action":"set-properties","updates":{"x":"1"}}]}`, 409, "CommitFailedException")
		if msg := out["error"].(map[string]any)["message"]; msg != "Requirement failed: current schema changed: expected id 7 != 0" {
			t.Fatalf("message %q", msg)
		}
		out = s.want("POST", "/v1/namespaces/db/tables/t", `{"requirements":[{"type":"assert-table-uuid","uuid":"00000000-0000-0000-0000-000000000001"}],
			"updates":[{"action":"set-properties","updates":{"x":"1"}}]}`, 409, "CommitFailedException")
		if msg := out["error"].(map[string]any)["message"].(string); !strings.HasPrefix(msg, "Requirement failed: UUID does not match") {
			t.Fatalf("message %q", msg)
		}
	})
	t.Run("register outside the warehouse", func(t *testing.T) {
		outside := t.TempDir()
		os.MkdirAll(filepath.Join(outside, "metadata"), 0o755)
		file := filepath.Join(s.dir, "db", "t", "metadata", "v1.metadata.json")
		data, _ := os.ReadFile(file)
		os.WriteFile(filepath.Join(outside, "metadata", "v1.metadata.json"), data, 0o644)
		s.want("POST", "/v1/namespaces/db/register", `{"name":"r","metadata-location":"file://`+filepath.ToSlash(outside)+`/metadata/v1.metadata.json"}`, 400, "BadRequestException")
		s.want("POST", "/v1/namespaces/db/register", `{"name":"r","metadata-location":"file://`+filepath.ToSlash(s.dir)+`/db/../../etc/v1.metadata.json"}`, 400, "BadRequestException")
		s.want("GET", "/v1/namespaces/db/tables/r", "", 404, "NoSuchTableException")
	})
	t.Run("oversized body", func(t *testing.T) {
		big := `{"requirements":[],"updates":[{"action":"set-properties","updates":{"x":"` + strings.Repeat("a", 8000) + `"}}]}`
		s.want("POST", "/v1/namespaces/db/tables/t", big, 413, "BadRequestException")
	})
	t.Run("create without schema", func(t *testing.T) {
		s.want("POST", "/v1/namespaces/db/tables", `{"name":"n"}`, 400, "BadRequestException")
		s.want("POST", "/v1/namespaces/none/tables", `{"name":"n","schema":`+schemaJSON+`}`, 404, "NoSuchNamespaceException")
	})
	if after := s.metadataFiles("db", "t"); after != before {
		t.Fatalf("bad requests wrote metadata: %d files, %d before", after, before)
	}
	tbl, _ := s.wh.LoadTable(context.Background(), table.Identifier{"db", "t"})
	if _, ok := tbl.Properties()["x"]; ok || tbl.Metadata().TableUUID().String() != uuid {
		t.Fatalf("the table changed: %v", tbl.Properties())
	}
}

// TestDropAndRegister: a drop without purge keeps the files, and the table
// can be registered again; a purge deletes them.
func TestDropAndRegister(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	out := s.createTable("db", "t")
	loc := out["metadata-location"].(string)
	s.want("DELETE", "/v1/namespaces/db/tables/t", "", 204, "")
	s.want("GET", "/v1/namespaces/db/tables/t", "", 404, "NoSuchTableException")
	if s.metadataFiles("db", "t") != 1 {
		t.Fatal("a drop without purge deleted the metadata")
	}
	// The name is free again: a new table gets a folder of its own.
	s.createTable("db", "t")
	out = s.want("POST", "/v1/namespaces/db/register", `{"name":"back","metadata-location":"`+loc+`"}`, 200, "")
	if out["metadata-location"] != loc {
		t.Fatalf("registered %v", out["metadata-location"])
	}
	s.want("POST", "/v1/namespaces/db/register", `{"name":"again","metadata-location":"`+loc+`"}`, 409, "AlreadyExistsException")
	s.want("POST", "/v1/namespaces/db/tables/back", `{"requirements":[],"updates":[{"action":"set-properties","updates":{"k":"v"}}]}`, 200, "")
	s.want("DELETE", "/v1/namespaces/db/tables/back?purgeRequested=true", "", 204, "")
	if n := s.metadataFiles("db", "t"); n != 0 {
		t.Fatalf("a purge left %d metadata files", n)
	}
	s.want("DELETE", "/v1/namespaces/db/tables/back", "", 404, "NoSuchTableException")
	s.want("GET", "/v1/namespaces/db/tables/t", "", 200, "")
}

// TestTransactionAllOrNothing: when one table's requirement fails, no
// table of the transaction changes.
func TestTransactionAllOrNothing(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	s.createTable("db", "a")
	s.createTable("db", "b")
	change := func(name, req string) string {
		return `{"identifier":{"namespace":["db"],"name":"` + name + `"},"requirements":[` + req + `],"updates":[{"action":"set-properties","updates":{"tx":"1"}}]}`
	}
	s.want("POST", "/v1/transactions/commit", `{"table-changes":[`+change("a", "")+`,`+change("b", `{"type":"assert-current-schema-id","current-schema-id":9}`)+`]}`, 409, "CommitFailedException")
	for _, n := range []string{"a", "b"} {
		if s.metadataFiles("db", n) != 1 {
			t.Fatalf("table %s changed in a failed transaction", n)
		}
	}
	s.want("POST", "/v1/transactions/commit", `{"table-changes":[`+change("a", "")+`,`+change("b", `{"type":"assert-current-schema-id","current-schema-id":0}`)+`]}`, 204, "")
	for _, n := range []string{"a", "b"} {
		tbl, err := s.wh.LoadTable(context.Background(), table.Identifier{"db", n})
		if err != nil || tbl.Properties()["tx"] != "1" {
			t.Fatalf("table %s: %v %v", n, tbl, err)
		}
	}
	s.want("POST", "/v1/transactions/commit", `{"table-changes":[`+change("none", "")+`]}`, 404, "NoSuchTableException")
	s.want("POST", "/v1/transactions/commit", `{"table-changes":[]}`, 400, "BadRequestException")
}

func TestViews(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	version := func(id int, sql string) string {
		return `{"version-id":` + string(rune('0'+id)) + `,"timestamp-ms":1,"schema-id":0,"summary":{},"default-namespace":["db"],
			"representations":[{"type":"sql","sql":"` + sql + `","dialect":"spark"}]}`
	}
	out := s.want("POST", "/v1/namespaces/db/views", `{"name":"v","schema":`+schemaJSON+`,"view-version":`+version(1, "SELECT 1 AS id, 'a' AS name")+`,"properties":{}}`, 200, "")
	uuid := out["metadata"].(map[string]any)["view-uuid"].(string)
	s.want("POST", "/v1/namespaces/db/views", `{"name":"v","schema":`+schemaJSON+`,"view-version":`+version(1, "SELECT 1")+`}`, 409, "AlreadyExistsException")
	out = s.want("GET", "/v1/namespaces/db/views", "", 200, "")
	if got, _ := json.Marshal(out["identifiers"]); string(got) != `[{"name":"v","namespace":["db"]}]` {
		t.Fatalf("views: %s", got)
	}
	s.want("HEAD", "/v1/namespaces/db/views/v", "", 204, "")
	s.want("GET", "/v1/namespaces/db/views/none", "", 404, "NoSuchViewException")
	replace := `{"requirements":[{"type":"assert-view-uuid","uuid":"` + uuid + `"}],"updates":[
		{"action":"add-schema","schema":` + schemaJSON + `},
		{"action":"add-view-version","view-version":` + version(2, "SELECT 2 AS id, 'b' AS name") + `},
		{"action":"set-current-view-version","view-version-id":-1}]}`
	out = s.want("POST", "/v1/namespaces/db/views/v", replace, 200, "")
	if cur := out["metadata"].(map[string]any)["current-version-id"]; cur != float64(2) {
		t.Fatalf("current version %v", cur)
	}
	v, err := s.wh.LoadView(context.Background(), table.Identifier{"db", "v"})
	if err != nil || !strings.Contains(v.CurrentVersion().Representations[0].Sql, "SELECT 2") {
		t.Fatalf("warehouse view: %v %v", v, err)
	}
	s.want("POST", "/v1/namespaces/db/views/v", `{"requirements":[{"type":"assert-view-uuid","uuid":"00000000-0000-0000-0000-000000000001"}],"updates":[]}`, 409, "CommitFailedException")
	s.want("POST", "/v1/namespaces/db/views/v", `{"requirements":[],"updates":[{"action":"frobnicate"}]}`, 400, "BadRequestException")
	s.want("POST", "/v1/views/rename", `{"source":{"namespace":["db"],"name":"v"},"destination":{"namespace":["db"],"name":"w"}}`, 204, "")
	s.want("GET", "/v1/namespaces/db/views/w", "", 200, "")
	s.want("DELETE", "/v1/namespaces/db/views/w", "", 204, "")
	s.want("DELETE", "/v1/namespaces/db/views/w", "", 404, "NoSuchViewException")
}

func TestAuthenticate(t *testing.T) {
	s := newServer(t, restserve.Config{Authenticate: func(r *http.Request) error {
		switch r.Header.Get("Authorization") {
		case "Bearer good":
			return nil
		case "Bearer limited":
			return restserve.ErrForbidden
		}
		return errors.New("credentials needed")
	}})
	s.want("GET", "/v1/config", "", 401, "NotAuthorizedException")
	for _, c := range []struct {
		token  string
		status int
	}{{"good", 200}, {"limited", 403}, {"bad", 401}} {
		req, _ := http.NewRequest("GET", s.http.URL+"/v1/config", bytes.NewReader(nil))
		req.Header.Set("Authorization", "Bearer "+c.token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.status {
			t.Errorf("token %s: %d, want %d", c.token, resp.StatusCode, c.status)
		}
	}
}

// TestParentlessSnapshotSequence: a snapshot without a parent (a replace
// transaction's) may carry a sequence number another commit has reached,
// as Java's and iceberg-go's metadata builders allow; one with a parent is
// a lost race the client must rebuild (409).
func TestParentlessSnapshotSequence(t *testing.T) {
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	s.createTable("db", "t")
	snapshot := func(id int, parent string) string {
		return `{"action":"add-snapshot","snapshot":{"snapshot-id":` + string(rune('0'+id)) + parent + `,"sequence-number":1,"timestamp-ms":` + fmt.Sprint(time.Now().UnixMilli()+int64(id)*1000) + `,
			"manifest-list":"file:///nowhere/snap.avro","summary":{"operation":"append"},"schema-id":0}},
			{"action":"set-snapshot-ref","ref-name":"main","type":"branch","snapshot-id":` + string(rune('0'+id)) + `}`
	}
	s.want("POST", "/v1/namespaces/db/tables/t", `{"requirements":[],"updates":[`+snapshot(1, "")+`]}`, 200, "")
	s.want("POST", "/v1/namespaces/db/tables/t", `{"requirements":[],"updates":[`+snapshot(2, "")+`]}`, 200, "")
	before := s.metadataFiles("db", "t")
	s.want("POST", "/v1/namespaces/db/tables/t", `{"requirements":[],"updates":[`+snapshot(3, `,"parent-snapshot-id":2`)+`]}`, 409, "CommitFailedException")
	if s.metadataFiles("db", "t") != before {
		t.Fatal("a refused commit wrote metadata")
	}
}

// TestThroughTheS3API is a remote engine's view of a served warehouse: the
// catalog hands out s3://BUCKET/ locations and the S3 API's configuration,
// the client writes data files, manifests and manifest lists through the
// S3 API (naming each other by s3:// locations), and the warehouse, which
// SQL reads, reads them from the folder.
func TestThroughTheS3API(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	root, err := storage.LocalLocation(dir)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := storage.OpenWarehouse(ctx, root, storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.ServeBucket(ctx, "lake", true); err != nil {
		t.Fatal(err)
	}
	s3api, err := s3serve.New(dir, "lake", sigv4auth.New(nil, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	cat := restserve.New(wh, restserve.Config{Prefix: "lake", S3: &restserve.S3{Bucket: "lake", Region: "us-east-1", AccessKey: "ann", SecretKey: "s3cret"}})
	mux.Handle("/v1/", cat)
	mux.Handle("/_iceberg/", cat)
	mux.Handle("/", s3api)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	s := &server{t: t, wh: wh, dir: dir, http: srv}

	s.want("POST", "/v1/lake/namespaces", `{"namespace":["db"]}`, 200, "")
	out := s.want("POST", "/v1/lake/namespaces/db/tables", `{"name":"t","schema":`+schemaJSON+`}`, 200, "")
	if loc := out["metadata"].(map[string]any)["location"]; loc != "s3://lake/db/t" {
		t.Fatalf("location %v, want s3://lake/db/t", loc)
	}
	if ml, _ := out["metadata-location"].(string); !strings.HasPrefix(ml, "s3://lake/db/t/metadata/") {
		t.Fatalf("metadata-location %q", ml)
	}
	want := map[string]any{"s3.endpoint": srv.URL, "s3.path-style-access": "true", "client.region": "us-east-1",
		"s3.access-key-id": "ann", "s3.secret-access-key": "s3cret"}
	config := out["config"].(map[string]any)
	for k, v := range want {
		if config[k] != v {
			t.Errorf("config[%s] = %v, want %v", k, config[k], v)
		}
	}
	creds := out["storage-credentials"].([]any)
	if len(creds) != 1 || creds[0].(map[string]any)["prefix"] != "s3://lake/" {
		t.Errorf("storage-credentials: %v", creds)
	}

	client, err := rest.NewCatalog(ctx, "icesql", srv.URL+"/_iceberg", rest.WithWarehouseLocation("lake"))
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := client.LoadTable(ctx, table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendTable(ctx, arrowRows(t, 1, 2, 3), 10, nil); err != nil {
		t.Fatal(err)
	}
	data, _ := filepath.Glob(filepath.Join(dir, "db", "t", "data", "*.parquet"))
	if len(data) != 1 {
		t.Fatalf("data files in the folder: %v", data)
	}
	got, err := wh.LoadTable(ctx, table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if ml := got.CurrentSnapshot().ManifestList; !strings.HasPrefix(ml, "s3://lake/db/t/metadata/") {
		t.Fatalf("manifest list %q: the client wrote it through the S3 API", ml)
	}
	rows, err := got.Scan().ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Release()
	if rows.NumRows() != 3 {
		t.Fatalf("the warehouse reads %d rows, want 3", rows.NumRows())
	}
	// The folder opened again (icesql sql, no S3 API) reads them too.
	again, err := storage.OpenWarehouse(ctx, root, storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	if tbl, err := again.LoadTable(ctx, table.Identifier{"db", "t"}); err != nil {
		t.Fatal(err)
	} else if rows, err := tbl.Scan().ToArrowTable(ctx); err != nil {
		t.Fatalf("the folder opened again: %v", err)
	} else {
		rows.Release()
	}
	// The warehouse keeps its own locations (its writers see the bucket's);
	// register takes either spelling.
	if loc := storage.StoredLocation(got); loc != root+"/db/t" {
		t.Fatalf("stored location %q", loc)
	}
	if loc := got.Location(); loc != "s3://lake/db/t" {
		t.Fatalf("icesql's writers see location %q, want s3://lake/db/t", loc)
	}
	meta := got.MetadataLocation()
	if err := wh.DetachTable(ctx, table.Identifier{"db", "t"}); err != nil {
		t.Fatal(err)
	}
	s3meta := "s3://lake/" + strings.TrimPrefix(meta, root+"/")
	s.want("POST", "/v1/lake/namespaces/db/register", `{"name":"t","metadata-location":"`+s3meta+`"}`, 200, "")
	s.want("POST", "/v1/lake/namespaces/db/register", `{"name":"u","metadata-location":"s3://other/db/t/metadata/x.metadata.json"}`, 400, "BadRequestException")
}
