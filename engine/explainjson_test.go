package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestExplainFormatJSON checks that EXPLAIN FORMAT=JSON answers one row
// holding a JSON document of the same plan EXPLAIN prints: the Iceberg
// scan a node with its pushed filter among its details.
func TestExplainFormatJSON(t *testing.T) {
	conns := wireSessions(t, 1,
		"CREATE DATABASE d",
		"CREATE TABLE d.t (id BIGINT, s STRING) PARTITIONED BY (bucket(4, id))",
		"INSERT INTO d.t VALUES (1, 'a'), (2, 'b')",
	)
	c := conns[0]
	var doc string
	if err := c.QueryRowContext(t.Context(), "EXPLAIN FORMAT=JSON SELECT s FROM d.t WHERE id = 1").Scan(&doc); err != nil {
		t.Fatal(err)
	}
	type node struct {
		Operation string   `json:"operation"`
		Details   []string `json:"details"`
		Inputs    []node   `json:"inputs"`
	}
	var plan struct {
		QueryPlan []node `json:"query_plan"`
	}
	if err := json.Unmarshal([]byte(doc), &plan); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, doc)
	}
	var scan *node
	var walk func(ns []node)
	walk = func(ns []node) {
		for i := range ns {
			if strings.HasPrefix(ns[i].Operation, "IcebergScan(d.t)") {
				scan = &ns[i]
			}
			walk(ns[i].Inputs)
		}
	}
	walk(plan.QueryPlan)
	if scan == nil || len(plan.QueryPlan) < 2 {
		t.Fatalf("no IcebergScan node among the roots:\n%s", doc)
	}
	if !strings.HasPrefix(strings.Join(scan.Details, "\n"), "pushed filter: ") {
		t.Errorf("the scan's details lack its pushed filter: %q", scan.Details)
	}
	// every line EXPLAIN prints is in the document
	rows, err := c.QueryContext(t.Context(), "EXPLAIN SELECT s FROM d.t WHERE id = 1")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		text, _ := json.Marshal(strings.TrimLeft(line, " │├└─"))
		if !strings.Contains(doc, string(text)) {
			t.Errorf("EXPLAIN's line %q is not in the JSON document", line)
		}
	}
	if _, err := c.ExecContext(t.Context(), "EXPLAIN FORMAT=JSON SELECT * FROM d.nope"); err == nil || !strings.Contains(err.Error(), "1146") {
		t.Errorf("EXPLAIN FORMAT=JSON of a missing table: %v, want 1146", err)
	}
}
