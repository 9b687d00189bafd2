package restserve_test

import (
	"strings"
	"testing"

	"github.com/icesql/icesql/storage/restserve"
)

// TestNamespaceLocationRefused: a namespace is its folder of the
// warehouse, where its tables go; a create or a properties update naming
// another location is 400 BadRequestException saying so, and changes
// nothing; the namespace's own folder is accepted, and a table created in
// it is in that folder.
func TestNamespaceLocationRefused(t *testing.T) {
	s := newServer(t, restserve.Config{})
	out := s.want("POST", "/v1/namespaces", `{"namespace": ["ns"], "properties": {"location": "file:///somewhere/else"}}`, 400, "BadRequestException")
	if msg := out["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "keeps each namespace in its own folder") {
		t.Errorf("the refusal does not say why: %s", msg)
	}
	s.want("HEAD", "/v1/namespaces/ns", "", 404, "")
	s.want("POST", "/v1/namespaces", `{"namespace": ["ns"], "properties": {"location": "file://`+s.dir+`/ns/"}}`, 200, "")
	s.want("POST", "/v1/namespaces/ns/properties", `{"updates": {"location": "file:///somewhere/else", "owner": "x"}}`, 400, "BadRequestException")
	props := s.want("GET", "/v1/namespaces/ns", "", 200, "")["properties"].(map[string]any)
	if props["owner"] != nil || props["location"] != "file://"+s.dir+"/ns/" {
		t.Errorf("after the refused update the properties are %v", props)
	}
	tbl := s.createTable("ns", "t")
	if loc := tbl["metadata"].(map[string]any)["location"]; loc != "file://"+s.dir+"/ns/t" {
		t.Errorf("the table's location is %v, want the namespace's folder", loc)
	}
}
