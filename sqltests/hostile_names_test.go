package sqltests

import (
	"context"
	gosql "database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// hostileNames are names that mean something to a file system or a URI
// parser, or look as if they did.
var hostileNames = []string{
	"..", ".", "%2E%2E", "%2e%2e", "%2E%2E%2F%2E%2E%2Fvictim", "%2F", "a/b", "../victim",
	`..\victim`, "#", "a#b", "?", "a?b", "a\x00b", "a\nb", "a\rb", strings.Repeat("x", 1000),
	"a\u2215b", "\uff0e\uff0e", "\uff0e\uff0e\u2215victim", ".icesql", "%2Eicesql%2Ffiles",
	".icesql/files", "metadata", "data", "Metadata", "~", "~2E~2E", "sib%2Fdata", "sib/data",
	"sib/metadata", "%00", "a%", "x ", " x", "file:", "C:", "a*b", "ü-名前",
}

// TestHostileNames runs every statement that takes a name with every
// hostile name over the MySQL wire, and checks the file system after each:
// nothing appears or disappears outside the warehouse, a sibling table's
// files stay, what is created lands in the folder NameSegment names, and a
// name that cannot be stored is refused with 1102, 1103 or 1059.
func TestHostileNames(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "w")
	// Files outside the warehouse that an escape would touch.
	for _, f := range []string{"victim/keep.txt", "x/keep.txt", "a/b/keep.txt", "keep.txt"} {
		writeFile(t, filepath.Join(dir, f), "keep")
	}
	// A table of another warehouse, to register.
	foreign := filepath.Join(dir, "foreign")
	{
		e, err := engine.Open(ctx, engine.Config{Warehouse: foreign})
		if err != nil {
			t.Fatal(err)
		}
		c := pinnedConn(t, gosql.OpenDB(e.Connector()))
		mustExec(t, c, "CREATE DATABASE f")
		mustExec(t, c, "CREATE TABLE f.t (id BIGINT)")
		mustExec(t, c, "INSERT INTO f.t VALUES (1)")
		c.Close()
		e.Close()
	}
	conn := wireConn(t, wh)
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "USE d") // RENAME TABLE and CREATE VIEW want a current database
	mustExec(t, conn, "CREATE TABLE d.sib (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.sib VALUES (1)")
	mustExec(t, conn, "INSERT INTO d.sib VALUES (2)")
	outside := treeOutside(t, dir, wh)
	sib := tree(t, filepath.Join(wh, "d", "sib"))
	rootURI, err := storage.LocalLocation(wh)
	if err != nil {
		t.Fatal(err)
	}

	for _, name := range hostileNames {
		q := quoteIdent(name)
		seg, segErr := storage.NameSegment("table", name)
		var statements []string
		add := func(format string, args ...any) { statements = append(statements, fmt.Sprintf(format, args...)) }
		add("CREATE DATABASE %s", q)
		add("DROP DATABASE %s", q)
		add("CREATE TABLE d.%s (id BIGINT)", q)
		add("INSERT INTO d.%s VALUES (1)", q)
		add("INSERT INTO d.%s VALUES (2)", q)
		// The sibling's data files added, then deleted from this table and
		// expired: they stay, being outside this table's folder.
		add("CALL system.add_files(table => %s, source_table => %s)", sqlString("d."+q), sqlString("`parquet`.`"+filepath.Join(wh, "d", "sib", "data")+"`"))
		add("DELETE FROM d.%s WHERE id = 1", q)
		add("CALL system.expire_snapshots(table => %s, older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)", sqlString("d."+q))
		add("CALL system.rewrite_data_files(table => %s)", sqlString("d."+q))
		add("CALL system.rewrite_manifests(%s)", sqlString("d."+q))
		add("CALL system.rewrite_position_delete_files(%s)", sqlString("d."+q))
		add("CALL system.ancestors_of(%s)", sqlString("d."+q))
		add("CALL system.remove_orphan_files(table => %s, dry_run => true)", sqlString("d."+q))
		add("RENAME TABLE d.%s TO d.renamed", q)
		add("RENAME TABLE d.renamed TO d.%s", q)
		add("DROP TABLE d.%s", q)
		add("CREATE VIEW d.%s AS SELECT 1 AS x", q)
		add("DROP VIEW d.%s", q)
		add("CALL system.register_table(table => %s, metadata_file => %s)", sqlString("d."+q), sqlString(filepath.Join(foreign, "f", "t")))
		add("DROP TABLE d.%s", q)
		add("ALTER TABLE d.sib CREATE BRANCH %s", q)
		add("ALTER TABLE d.sib DROP BRANCH %s", q)
		add("ALTER TABLE d.sib CREATE TAG %s", q)
		add("ALTER TABLE d.sib DROP TAG %s", q)
		add("CALL system.remove_orphan_files(table => 'd.sib', location => %s, dry_run => true)", sqlString(rootURI+"/d/sib/"+name))
		add("CALL system.remove_orphan_files(table => 'd.sib', location => %s, dry_run => true)", sqlString(rootURI+"/d/sib/data/"+name+"/"+name+"/"+name))

		for _, stmt := range statements {
			_, err := conn.ExecContext(ctx, stmt)
			code := errorCode(err)
			refs := strings.Contains(stmt, "BRANCH") || strings.Contains(stmt, "TAG")
			switch {
			case strings.Contains(stmt, "location =>"):
				// A location inside the table's folder lists; anything
				// else is argument error 1210.
				if err != nil && code != 1210 {
					t.Errorf("%.80q: %.200v (code %d); want success or 1210", stmt, err, code)
				}
			case segErr != nil && !refs:
				switch code {
				case 1102, 1103, 1059: // refused
				case 1146, 1049, 1008, 1051: // not found, as it was never made
				default:
					t.Errorf("%.80q: %.200v (code %d); want the name refused (1102, 1103, 1059) or not found", stmt, err, code)
				}
			case err != nil && !refs:
				t.Errorf("%.80q: %.200v (code %d); want success: %.40q can be stored as %q", stmt, err, code, name, seg)
			}
			if segErr == nil && err == nil {
				switch {
				case strings.HasPrefix(stmt, "CREATE DATABASE"):
					mustBeDir(t, stmt, filepath.Join(wh, seg))
				case strings.HasPrefix(stmt, "CREATE TABLE"):
					mustBeDir(t, stmt, filepath.Join(wh, "d", seg, "metadata"))
				}
			}
			if got := treeOutside(t, dir, wh); !sameTree(got, outside) {
				t.Fatalf("%q changed files outside the warehouse:\n%s", stmt, diffTrees(outside, got))
			}
			if got := tree(t, filepath.Join(wh, "d", "sib")); !containsTree(got, sib) {
				t.Fatalf("%q removed or changed files of the sibling table d.sib:\n%s", stmt, diffTrees(sib, got))
			}
		}
		// Every object made was dropped again: the warehouse holds what it
		// held before.
		if got := entries(t, wh); strings.Join(got, ",") != "d" {
			t.Errorf("name %q: the warehouse holds %v after the drops; want [d]", name, got)
		}
		if got := entries(t, filepath.Join(wh, "d")); strings.Join(got, ",") != ".icesql,sib" {
			t.Errorf("name %q: namespace d holds %v after the drops; want [.icesql sib]", name, got)
		}
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT count(*) FROM d.sib").Scan(&n); err != nil || n != 2 {
			t.Fatalf("name %q: d.sib has %d rows (%v); want 2", name, n, err)
		}
	}
}

// TestServerFilesNotByName checks that no database name makes the server-side
// file area (<warehouse>/.icesql/files) exist: it is the operator's to make.
func TestServerFilesNotByName(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "w")
	conn := wireConn(t, wh)
	for _, name := range []string{"%2Eicesql%2Ffiles", ".icesql/files", "\uff0eicesql\u2215files", ".icesql"} {
		_, err := conn.ExecContext(context.Background(), "CREATE DATABASE "+quoteIdent(name))
		if err != nil {
			t.Logf("CREATE DATABASE %q: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(wh, ".icesql", "files")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("CREATE DATABASE %q made the server-side file area exist (%v)", name, err)
		}
	}
	_, err := conn.ExecContext(context.Background(), "SELECT 'x' INTO DUMPFILE "+sqlString(filepath.Join(wh, ".icesql", "files", "m.json")))
	if err == nil {
		t.Fatalf("INTO DUMPFILE wrote into a server-side file area nobody made")
	}
}

// TestRemoveOrphanFilesStaysInTable deletes orphans (old enough) under
// locations that decode to outside the table's folder, and checks the files
// there survive.
func TestRemoveOrphanFilesStaysInTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "w")
	conn := wireConn(t, wh)
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.t VALUES (1)")
	mustExec(t, conn, "CREATE TABLE d.u (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.u VALUES (1)")
	old := time.Now().Add(-72 * time.Hour)
	victim := filepath.Join(dir, "x", "victim.parquet")
	writeFile(t, victim, "keep")
	orphan := filepath.Join(wh, "d", "t", "data", "orphan.parquet")
	writeFile(t, orphan, "old")
	if err := os.Symlink(filepath.Join(dir, "x"), filepath.Join(wh, "d", "t", "data", "link")); err != nil {
		t.Fatal(err)
	}
	if err := filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	}); err != nil {
		t.Fatal(err)
	}
	u := tree(t, filepath.Join(wh, "d", "u"))
	rootURI, _ := storage.LocalLocation(wh)
	cutoff := "TIMESTAMP '" + time.Now().Add(-48*time.Hour).UTC().Format("2006-01-02 15:04:05") + "'"
	for _, loc := range []string{
		rootURI + "/d/t/%2E%2E/%2E%2E/%2E%2E/x",
		rootURI + "/d/t/../../../x",
		rootURI + "/d/t/%2E%2E/u",
		rootURI + "/d/t/data/link",
		filepath.Join(dir, "x"),
		rootURI + "/d/t%2F%2E%2E%2Fu",
	} {
		_, err := conn.ExecContext(ctx, "SET time_zone = '+00:00'")
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.ExecContext(ctx, "CALL system.remove_orphan_files(table => 'd.t', older_than => "+cutoff+", location => "+sqlString(loc)+")")
		if code := errorCode(err); code != 1210 {
			t.Errorf("remove_orphan_files location %s: %v (code %d); want 1210", loc, err, code)
		}
	}
	// The table's own folder: the orphan goes, the link's target stays.
	rows, err := conn.QueryContext(ctx, "CALL system.remove_orphan_files(table => 'd.t', older_than => "+cutoff+")")
	if err != nil {
		t.Fatal(err)
	}
	var deleted []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		deleted = append(deleted, s)
	}
	rows.Close()
	if _, err := os.Stat(orphan); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the orphan in the table's folder was not deleted (listed: %v)", deleted)
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("a file outside the table's folder was deleted: %v", err)
	}
	if got := tree(t, filepath.Join(wh, "d", "u")); !sameTree(got, u) {
		t.Errorf("the sibling table changed:\n%s", diffTrees(u, got))
	}
}

// TestAddFilesAndRegisterStayInWarehouse checks add_files reads server-side
// files only from the warehouse, and register_table refuses metadata in the
// warehouse (the server-side file area included), whose location could name
// any folder for maintenance to delete in.
func TestAddFilesAndRegisterStayInWarehouse(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	wh := filepath.Join(dir, "w")
	conn := wireConn(t, wh)
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.t VALUES (1)")
	mustExec(t, conn, "CREATE TABLE d.added (id BIGINT)")
	var file string
	if err := conn.QueryRowContext(ctx, "SELECT file_path FROM d.t.files").Scan(&file); err != nil {
		t.Fatal(err)
	}
	outsideFile := filepath.Join(dir, "export", "x.parquet")
	data, err := os.ReadFile(strings.TrimPrefix(file, "file://"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, outsideFile, string(data))
	rootURI, _ := storage.LocalLocation(wh)
	for _, src := range []string{
		outsideFile,
		filepath.Dir(outsideFile),
		rootURI + "/d/%2E%2E/%2E%2E/export",
		wh + "/../export",
	} {
		_, err := conn.ExecContext(ctx, "CALL system.add_files(table => 'd.added', source_table => "+sqlString("`parquet`.`"+src+"`")+")")
		if code := errorCode(err); code != 1210 {
			t.Errorf("add_files from %s: %v (code %d); want 1210", src, err, code)
		}
	}
	// Inside the warehouse it works.
	inside := filepath.Join(wh, ".icesql", "files", "x.parquet")
	writeFile(t, inside, string(data))
	mustExec(t, conn, "CALL system.add_files(table => 'd.added', source_table => "+sqlString("`parquet`.`"+inside+"`")+")")

	// Another table's file added, deleted and expired stays where it is:
	// expire_snapshots deletes only in the table's own folder.
	mustExec(t, conn, "CALL system.add_files(table => 'd.added', source_table => "+sqlString("`parquet`.`"+file+"`")+", check_duplicate_files => false)")
	mustExec(t, conn, "DELETE FROM d.added")
	mustExec(t, conn, "CALL system.expire_snapshots(table => 'd.added', older_than => TIMESTAMP '2999-01-01 00:00:00', retain_last => 1)")
	var level, msg string
	var code int
	if err := conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1011 || !strings.Contains(msg, "outside the table's folder") {
		t.Errorf("warning after expire_snapshots = %d %q (%v); want 1011 naming the files left outside the table's folder", code, msg, err)
	}
	if _, err := os.Stat(strings.TrimPrefix(file, "file://")); err != nil {
		t.Errorf("expire_snapshots of d.added deleted d.t's data file: %v", err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 1 {
		t.Errorf("d.t reads %d rows (%v); want 1", n, err)
	}

	// Metadata naming an outside folder, put in the server-side file area.
	meta := filepath.Join(wh, ".icesql", "files", "evil.metadata.json")
	src, err := os.ReadFile(filepath.Join(wh, "d", "t", "metadata", "v2.metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, meta, strings.ReplaceAll(string(src), rootURI+"/d/t", "file://"+filepath.Join(dir, "export")))
	for _, f := range []string{meta, filepath.Join(wh, "d", "t"), filepath.Join(wh, "d", "t", "metadata", "v2.metadata.json"), "/"} {
		_, err := conn.ExecContext(ctx, "CALL system.register_table(table => 'd.reg', metadata_file => "+sqlString(f)+")")
		if code := errorCode(err); code != 1210 {
			t.Errorf("register_table %s: %v (code %d); want 1210", f, err, code)
		}
	}
}

// failingRemoveAll is a local store whose RemoveAll fails while fail is
// set, as on a read-only folder (tests run as root, whom chmod does not stop).
type failingRemoveAll struct {
	storage.LocalStore
	fail *atomic.Bool
}

func (s failingRemoveAll) RemoveAll(ctx context.Context, location string) error {
	if s.fail.Load() {
		return errors.New("injected: read-only folder")
	}
	return s.LocalStore.RemoveAll(ctx, location)
}

// TestDropTableDeleteFailureIsAWarning drops a table whose files cannot be
// deleted: the table is gone (the drop's one step succeeded), the client
// gets warning 1011, not an error, and the name can be used again.
func TestDropTableDeleteFailureIsAWarning(t *testing.T) {
	ctx := context.Background()
	var fail atomic.Bool
	conn := wireConnWith(t, engine.Config{Warehouse: t.TempDir(), Store: failingRemoveAll{fail: &fail}})
	mustExec(t, conn, "CREATE DATABASE d")
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	mustExec(t, conn, "INSERT INTO d.t VALUES (1)")
	fail.Store(true)
	mustExec(t, conn, "DROP TABLE d.t")
	var level, msg string
	var code int
	if err := conn.QueryRowContext(ctx, "SHOW WARNINGS").Scan(&level, &code, &msg); err != nil || code != 1011 || !strings.Contains(msg, "the table is dropped") {
		t.Errorf("warning after DROP TABLE = %d %q (%v); want 1011 saying the table is dropped", code, msg, err)
	}
	var n int
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); errorCode(err) != 1146 {
		t.Errorf("SELECT from the dropped table: %v; want 1146", err)
	}
	fail.Store(false)
	mustExec(t, conn, "CREATE TABLE d.t (id BIGINT)")
	if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM d.t").Scan(&n); err != nil || n != 0 {
		t.Errorf("the new d.t has %d rows (%v); want 0", n, err)
	}
}

// wireConn serves a warehouse over the MySQL wire and connects to it.
func wireConn(t *testing.T, warehouse string) *gosql.Conn {
	t.Helper()
	return wireConnWith(t, engine.Config{Warehouse: warehouse})
}

func wireConnWith(t *testing.T, cfg engine.Config) *gosql.Conn {
	t.Helper()
	e, err := engine.Open(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	srv, err := e.NewServer(engine.ServerConfig{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	t.Cleanup(func() { srv.Close() })
	mc := mysql.NewConfig()
	mc.User, mc.Net, mc.Addr = "root", "tcp", srv.Addr()
	connector, err := mysql.NewConnector(mc)
	if err != nil {
		t.Fatal(err)
	}
	return pinnedConn(t, gosql.OpenDB(connector))
}

func quoteIdent(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

func sqlString(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `'`, `''`, "\x00", `\0`)
	return "'" + r.Replace(s) + "'"
}

func errorCode(err error) int {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return int(me.Number)
	}
	if err != nil {
		return -1
	}
	return 0
}

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustBeDir(t *testing.T, stmt, p string) {
	t.Helper()
	if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
		t.Errorf("%q: no folder %s (%v)", stmt, p, err)
	}
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range des {
		out = append(out, d.Name())
	}
	sort.Strings(out)
	return out
}

// tree maps every file under dir to its mode, size and modification time,
// and every folder to "dir".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	return walkTree(t, dir, "")
}

// treeOutside is tree of dir without the folder skip (the warehouse).
func treeOutside(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	return walkTree(t, dir, skip)
}

func walkTree(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return fs.SkipDir
		}
		if d.IsDir() {
			out[p] = "dir" // its time changes with its entries, which are listed
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[p] = fmt.Sprintf("%v %d %d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(a, b map[string]string) bool { return containsTree(a, b) && len(a) == len(b) }

// containsTree says got still holds every entry of want, unchanged
// (version-hint.text aside: every commit rewrites that hint).
func containsTree(got, want map[string]string) bool {
	for p, v := range want {
		if got[p] != v && filepath.Base(p) != "version-hint.text" {
			return false
		}
	}
	return true
}

func diffTrees(want, got map[string]string) string {
	var lines []string
	for p, v := range want {
		if got[p] != v {
			lines = append(lines, fmt.Sprintf("- %s %s (now %q)", p, v, got[p]))
		}
	}
	for p, v := range got {
		if _, ok := want[p]; !ok {
			lines = append(lines, fmt.Sprintf("+ %s %s", p, v))
		}
	}
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}
