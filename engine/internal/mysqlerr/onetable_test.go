package mysqlerr

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneErrorTable keeps the MySQL error numbers and their SQLSTATEs in
// this package: outside it, engine code makes coded errors with New (the
// state from the table) or gets them from Coded, never with
// mysql.NewSQLError and a code and state of its own, and declares no error
// numbers.
func TestOneErrorTable(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") ||
			strings.Contains(p, filepath.Join("internal", "mysqlerr")) {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewSQLError" {
					t.Errorf("%s: mysql.NewSQLError outside mysqlerr: use mysqlerr.New, which takes the SQLSTATE from the table", fset.Position(n.Pos()))
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if strings.HasPrefix(name.Name, "er") && len(n.Values) > i {
						if lit, ok := n.Values[i].(*ast.BasicLit); ok && lit.Kind == token.INT && len(lit.Value) == 4 {
							t.Errorf("%s: error number %s = %s declared outside mysqlerr (codes.go)", fset.Position(name.Pos()), name.Name, lit.Value)
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestStatesOfNamedCodes: New gives a code MySQL's SQLSTATE for it.
func TestStatesOfNamedCodes(t *testing.T) {
	for code, want := range map[int]string{1146: "42S02", 1213: "40001", ErQueryInterrupted: "70100", ErOutOfResources: "HY000", 1235: "42000"} {
		if got := New(code, "x").State; got != want {
			t.Errorf("New(%d).State = %s, want %s", code, got, want)
		}
	}
}
