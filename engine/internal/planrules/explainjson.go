package planrules

import (
	"encoding/json"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// EXPLAIN FORMAT=JSON answers with the plan EXPLAIN prints, as one JSON
// document in one row. The document is
// icesql's plan, not MySQL's optimizer trace: each node of the tree is
// {"operation": first line, "details": [its attribute lines], "inputs":
// [its child nodes]}, under {"query_plan": [...]}, so a program can walk
// the same plan a person reads.

// explainJSONQuery matches EXPLAIN FORMAT=JSON at the start of a
// statement's text. The parser intercept has made the format TREE
// (explainAsTree), so the statement is planned as every EXPLAIN is; the
// text says how to print it.
var explainJSONQuery = regexp.MustCompile(`(?is)^\s*(?:explain|describe|desc)\s+(?:extended\s+)?format\s*=\s*json\b`)

func ExplainsAsJSON(ctx *sql.Context) bool {
	return explainJSONQuery.MatchString(ast.StripLeadingComments(ctx.Query()))
}

// ExplainJSON is the JSON document of a plan's lines.
func ExplainJSON(lines []string) (string, error) {
	doc, err := json.MarshalIndent(map[string]any{"query_plan": planTree(lines)}, "", "  ")
	return string(doc), err
}

// planNode is one node of a printed plan tree.
type planNode struct {
	Operation string      `json:"operation"`
	Details   []string    `json:"details,omitempty"`
	Inputs    []*planNode `json:"inputs,omitempty"`
}

// planTree reads the lines go-mysql-server's tree printer writes: a node's
// text, then its children, each after a branch (├─ or └─) one level deeper.
// A child line holding "name: value" with no children of its own is a
// detail of its parent; any other is an input.
func planTree(lines []string) []*planNode {
	type entry struct {
		n     *planNode
		depth int
	}
	var roots []*planNode
	var stack []entry
	for i, l := range lines {
		text, depth := strings.TrimLeft(l, treeBranches), lineDepth(l)
		for len(stack) > 0 && stack[len(stack)-1].depth >= depth {
			stack = stack[:len(stack)-1]
		}
		n := &planNode{Operation: text}
		if len(stack) == 0 {
			roots = append(roots, n)
		} else {
			parent := stack[len(stack)-1].n
			hasChildren := i+1 < len(lines) && lineDepth(lines[i+1]) > depth
			if strings.Contains(text, ": ") && !hasChildren {
				parent.Details = append(parent.Details, text)
				continue
			}
			parent.Inputs = append(parent.Inputs, n)
		}
		stack = append(stack, entry{n, depth})
	}
	return roots
}

// treeBranches are the characters before a tree line's text.
const treeBranches = " │├└─"

// lineDepth is the column where a tree line's text starts.
func lineDepth(l string) int {
	return utf8.RuneCountInString(l) - utf8.RuneCountInString(strings.TrimLeft(l, treeBranches))
}
