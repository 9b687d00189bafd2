package engine

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/types"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
	"github.com/icesql/icesql/storage"
)

// Server-side files (LOAD DATA INFILE, SELECT ... INTO OUTFILE / DUMPFILE,
// LOAD_FILE) are confined to <warehouse>/.icesql/files. go-mysql-server's
// own check compares the cleaned path to that folder by string prefix, with
// no separator and no symbolic links resolved, so <w>/.icesql/files-x or a
// link inside the folder leading out passed. icesql checks each path as
// MySQL does (the resolved path must lie below the folder) before
// go-mysql-server opens it.

// serverFilesDir is the folder server-side file access is confined to, ""
// when the warehouse is not on a local disk (no server-side files).
func serverFilesDir(root string) string {
	p, err := storage.LocalPath(root)
	if err != nil || root == "" {
		return ""
	}
	return filepath.Join(p, ".icesql", "files")
}

// serverFileAllowed refuses name, a file a statement is about to read or
// write on the server, unless it resolves below dir: any ".." step is
// refused (the operating system resolves it after symbolic links, lexical
// cleaning before), then links are resolved in both (storage.Inside). A
// relative name is taken from the process's working folder, as
// go-mysql-server opens it.
func serverFileAllowed(dir, name string) error {
	refuse := func(why string) error {
		return mysqlerr.New(mysqlerr.ErOptionPreventsStatement,
			"The MySQL server is running with the --secure-file-priv option so it cannot execute this statement: %q %s", name, why)
	}
	if dir == "" {
		return refuse("is refused: the warehouse is not on a local disk, so icesql reads and writes no server-side files")
	}
	for _, step := range strings.FieldsFunc(name, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if step == ".." {
			return refuse(`has a ".." step`)
		}
	}
	abs, err := filepath.Abs(name)
	if err != nil {
		return refuse(err.Error())
	}
	if err := storage.Inside(dir, abs, true); err != nil {
		return refuse(fmt.Sprintf("is not inside %s (symbolic links resolved)", dir))
	}
	return nil
}

// serverFileBuilder is the exec builder's priority builder: it refuses a
// LOAD DATA INFILE or SELECT ... INTO OUTFILE / DUMPFILE whose file is
// outside dir, and leaves every node to next.
type serverFileBuilder struct {
	dir  string
	next sql.NodeExecBuilder
}

func (b serverFileBuilder) Build(ctx *sql.Context, n sql.Node, row sql.Row) (sql.RowIter, error) {
	var name string
	switch n := n.(type) {
	case *plan.Into:
		name = n.Outfile + n.Dumpfile // at most one is set
	case *plan.LoadData:
		if !n.Local { // LOCAL reads the client's file
			name = n.File
		}
	}
	if name != "" {
		if err := serverFileAllowed(b.dir, name); err != nil {
			return nil, err
		}
	}
	return b.next.Build(ctx, n, row)
}

// loadFile is LOAD_FILE(name): the file's bytes, or NULL when it is outside
// the server-side file folder, unreadable, or longer than
// max_allowed_packet, as in MySQL. go-mysql-server's own compares only the
// file's folder (so a link in the folder leading out was followed) and
// panics on icesql's max_allowed_packet.
type loadFile struct{ name sql.Expression }

var (
	_ sql.FunctionExpression = (*loadFile)(nil)
	_ sql.CollationCoercible = (*loadFile)(nil)
)

var loadFileFunction = sql.Function1{Name: "load_file", Fn: func(_ *sql.Context, name sql.Expression) sql.Expression {
	return &loadFile{name: name}
}}

func (l *loadFile) FunctionName() string         { return "load_file" }
func (l *loadFile) Description() string          { return "returns the content of a server-side file." }
func (l *loadFile) Resolved() bool               { return l.name.Resolved() }
func (l *loadFile) String() string               { return fmt.Sprintf("load_file(%s)", l.name) }
func (l *loadFile) Type(*sql.Context) sql.Type   { return types.LongBlob }
func (l *loadFile) IsNullable(*sql.Context) bool { return true }
func (l *loadFile) Children() []sql.Expression   { return []sql.Expression{l.name} }
func (l *loadFile) CollationCoercibility(*sql.Context) (sql.CollationID, byte) {
	return sql.Collation_binary, 5
}
func (l *loadFile) WithChildren(_ *sql.Context, children ...sql.Expression) (sql.Expression, error) {
	if len(children) != 1 {
		return nil, sql.ErrInvalidChildrenNumber.New(l, len(children), 1)
	}
	return &loadFile{name: children[0]}, nil
}

func (l *loadFile) Eval(ctx *sql.Context, row sql.Row) (any, error) {
	v, err := l.name.Eval(ctx, row)
	s, ok := ctx.Session.(*Session)
	if err != nil || v == nil || !ok {
		return nil, err
	}
	name := sqlfunc.TextOf(ctx, v)
	if serverFileAllowed(serverFilesDir(s.e.root), name) != nil {
		return nil, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	limit := sqlfunc.MaxAllowedPacket(ctx)
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() || fi.Size() > limit {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(data)) > limit {
		return nil, nil
	}
	return data, nil
}
