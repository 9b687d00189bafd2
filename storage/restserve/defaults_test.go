package restserve_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/restserve"
)

// Field defaults travel over REST in the spec's form (ISO strings for
// dates and timestamps), in every answer, a staged create's included, and
// the warehouse reads a file that lacks the column with the default.
func TestFieldDefaultsOverREST(t *testing.T) {
	ctx := context.Background()
	s := newServer(t, restserve.Config{})
	s.want("POST", "/v1/namespaces", `{"namespace":["db"]}`, 200, "")
	withDefaults := `{"type":"struct","schema-id":0,"fields":[{"id":1,"name":"id","type":"long","required":false},` +
		`{"id":2,"name":"d","type":"date","required":false,"initial-default":"2003-10-20","write-default":"2003-10-20"},` +
		`{"id":3,"name":"ts","type":"timestamp","required":false,"initial-default":"1970-01-01T00:00:00.012345","write-default":"1970-01-01T00:00:00.012345"}]}`
	// fieldDefaults are the defaults of a LoadTableResult's current schema.
	fieldDefaults := func(out map[string]any) []any {
		t.Helper()
		meta := out["metadata"].(map[string]any)
		for _, sc := range meta["schemas"].([]any) {
			sc := sc.(map[string]any)
			if sc["schema-id"] != meta["current-schema-id"] {
				continue
			}
			var got []any
			for _, f := range sc["fields"].([]any) {
				f := f.(map[string]any)
				if _, ok := f["initial-default"]; ok {
					got = append(got, f["initial-default"], f["write-default"])
				}
			}
			return got
		}
		t.Fatalf("no current schema in %v", meta)
		return nil
	}
	want := []any{"2003-10-20", "2003-10-20", "1970-01-01T00:00:00.012345", "1970-01-01T00:00:00.012345"}
	check := func(what string, out map[string]any) {
		t.Helper()
		if got := fieldDefaults(out); len(got) != len(want) || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Fatalf("%s: defaults %v, want %v", what, got, want)
		}
	}
	check("stage-create", s.want("POST", "/v1/namespaces/db/tables", `{"name":"staged","stage-create":true,"schema":`+withDefaults+`,"properties":{"format-version":"3"}}`, 200, ""))
	check("create", s.want("POST", "/v1/namespaces/db/tables", `{"name":"c","schema":`+withDefaults+`,"properties":{"format-version":"3"}}`, 200, ""))
	check("load", s.want("GET", "/v1/namespaces/db/tables/c", "", 200, ""))
	files, _ := filepath.Glob(filepath.Join(s.dir, "db", "c", "metadata", "*.metadata.json"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), `"initial-default":"2003-10-20"`) {
			t.Fatalf("%s does not hold the spec's form: %s", f, data)
		}
	}

	// A column added with a default reads it in the files written before.
	s.want("POST", "/v1/namespaces/db/tables", `{"name":"t","schema":`+schemaJSON+`,"properties":{"format-version":"3"}}`, 200, "")
	cat := s.client()
	tbl, err := cat.LoadTable(ctx, table.Identifier{"db", "t"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tbl.AppendTable(ctx, arrowRows(t, 1, 2), 10, nil); err != nil {
		t.Fatal(err)
	}

	commit := `{"requirements":[{"type":"assert-current-schema-id","current-schema-id":0}],"updates":[
		{"action":"add-schema","schema":{"type":"struct","schema-id":1,"fields":[{"id":1,"name":"id","type":"long","required":false},` +
		`{"id":2,"name":"name","type":"string","required":false},` +
		`{"id":3,"name":"d","type":"date","required":false,"initial-default":"2003-10-20","write-default":"2003-10-20"}]},"last-column-id":3},
		{"action":"set-current-schema","schema-id":-1}]}`
	check2 := s.want("POST", "/v1/namespaces/db/tables/t", commit, 200, "")
	if got := fieldDefaults(check2); len(got) != 2 || got[0] != "2003-10-20" {
		t.Fatalf("commit answer: defaults %v", got)
	}
	// Through the warehouse, fresh and reopened
	for i, wh := range []interface {
		LoadTable(context.Context, table.Identifier) (*table.Table, error)
	}{s.wh, reopen(t, s)} {
		got, err := wh.LoadTable(ctx, table.Identifier{"db", "t"})
		if err != nil {
			t.Fatal(err)
		}
		rows, err := got.Scan().ToArrowTable(ctx)
		if err != nil {
			t.Fatalf("handle %d: scan: %v", i, err)
		}
		col := rows.Column(2).Data().Chunk(0).(*array.Date32)
		if rows.NumRows() != 2 || col.Value(0).FormattedString() != "2003-10-20" {
			t.Fatalf("handle %d: rows %d, d = %v", i, rows.NumRows(), col)
		}
		rows.Release()
	}
}

// reopen opens s's warehouse folder again, as another process would.
func reopen(t *testing.T, s *server) *storage.Warehouse {
	t.Helper()
	wh, err := storage.OpenWarehouse(context.Background(), s.wh.Root(), storage.LocalStore{})
	if err != nil {
		t.Fatal(err)
	}
	return wh
}
