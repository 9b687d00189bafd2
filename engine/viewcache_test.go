package engine_test

import (
	"context"
	"database/sql"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// viewReadStore counts what view resolution reads: listings of a views
// folder, and reads of view link files (<ns>/.icesql/views/<key>.json),
// which is what each table name cost before a statement listed the folder.
type viewReadStore struct {
	storage.LocalStore
	listings, linkReads *atomic.Int64
}

func newViewReadStore() viewReadStore {
	return viewReadStore{listings: &atomic.Int64{}, linkReads: &atomic.Int64{}}
}

func (s viewReadStore) ReadFile(ctx context.Context, location string) ([]byte, error) {
	if strings.HasSuffix(path.Dir(location), "/.icesql/views") {
		s.linkReads.Add(1)
	}
	return s.LocalStore.ReadFile(ctx, location)
}

func (s viewReadStore) List(ctx context.Context, location string) ([]storage.Entry, error) {
	if strings.HasSuffix(location, "/.icesql/views") {
		s.listings.Add(1)
	}
	return s.LocalStore.List(ctx, location)
}

func (s viewReadStore) reset() {
	s.listings.Store(0)
	s.linkReads.Store(0)
}

// TestViewResolutionReads checks that a statement reads one link for its
// first name in a namespace (a single-table statement lists nothing) and
// lists the namespace's views for the others, however many tables it
// names; a view is read once however often the statement names it.
func TestViewResolutionReads(t *testing.T) {
	store := newViewReadStore()
	conn := openConn(t, engine.Config{Warehouse: t.TempDir(), Store: store})
	mustExec(t, conn, "CREATE DATABASE db", "CREATE DATABASE db2", "USE db",
		"CREATE TABLE t1 (id BIGINT)", "CREATE TABLE t2 (id BIGINT)", "CREATE TABLE t3 (id BIGINT)",
		"CREATE TABLE db2.u (id BIGINT)",
		"INSERT INTO t1 VALUES (1), (2)", "INSERT INTO t2 VALUES (1), (2)", "INSERT INTO t3 VALUES (1)",
		"INSERT INTO db2.u VALUES (1)")

	for _, c := range []struct {
		q                   string
		want                string
		listings, linkReads int64
	}{
		{"SELECT id FROM t1 WHERE id = 2", "2", 0, 1},
		{"SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id JOIN t3 ON t2.id = t3.id", "1", 1, 1},
		{"SELECT id FROM t1 WHERE id IN (SELECT id FROM t2) AND EXISTS (SELECT 1 FROM t3 WHERE t3.id = t1.id)", "1", 1, 1},
		{"SELECT t1.id FROM t1 JOIN db2.u ON t1.id = u.id JOIN T2 ON T2.id = u.id", "1", 1, 2},
	} {
		store.reset()
		if got := collect(t, conn, c.q); got != c.want {
			t.Errorf("%s = %q, want %q", c.q, got, c.want)
		}
		if l, r := store.listings.Load(), store.linkReads.Load(); l != c.listings || r != c.linkReads {
			t.Errorf("%s: %d listings and %d link reads, want %d and %d", c.q, l, r, c.listings, c.linkReads)
		}
	}

	mustExec(t, conn, "CREATE VIEW v AS SELECT id FROM t1 WHERE id > 1", "CREATE VIEW w AS SELECT id FROM v")
	for _, c := range []struct {
		q                   string
		want                string
		listings, linkReads int64
	}{
		// A namespace with views: still one listing, and one link read for the tables.
		{"SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id JOIN t3 ON t2.id = t3.id", "1", 1, 1},
		// A view named three times, in two cases, is read once.
		{"SELECT a.id FROM v a JOIN V b ON a.id = b.id JOIN t2 ON t2.id = a.id WHERE a.id IN (SELECT id FROM v)", "2", 1, 1},
		// A view over a view reads each once.
		{"SELECT w.id FROM w JOIN v ON w.id = v.id JOIN t1 ON t1.id = v.id", "2", 1, 2},
	} {
		store.reset()
		if got := collect(t, conn, c.q); got != c.want {
			t.Errorf("%s = %q, want %q", c.q, got, c.want)
		}
		if l, r := store.listings.Load(), store.linkReads.Load(); l != c.listings || r != c.linkReads {
			t.Errorf("%s: %d listings and %d link reads, want %d and %d", c.q, l, r, c.listings, c.linkReads)
		}
	}

	// Each statement lists again: nothing is answered from an earlier one.
	store.reset()
	collect(t, conn, "SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id")
	collect(t, conn, "SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id")
	if l := store.listings.Load(); l != 2 {
		t.Errorf("two statements listed the views %d times, want 2", l)
	}
}

// TestViewChangesSeenByNextStatement checks that a view created, replaced,
// renamed or dropped by another engine on the same warehouse (another
// process), or by another session of the same engine, is seen by the next
// statement of a session that has resolved names before.
func TestViewChangesSeenByNextStatement(t *testing.T) {
	dir := t.TempDir()
	a := openDB(t, dir)
	mustExec(t, a, "CREATE DATABASE db", "USE db", "CREATE TABLE t (id BIGINT)", "INSERT INTO t VALUES (1), (2), (3)")

	other := openEngine(t, engine.Config{Warehouse: dir})
	b := openConnOn(t, other)
	b2 := openConnOn(t, other)
	for _, conn := range []*sql.Conn{b, b2} {
		mustExec(t, conn, "USE db")
	}

	noView := func(conn *sql.Conn, name string) {
		t.Helper()
		if _, err := conn.QueryContext(context.Background(), "SELECT * FROM "+name); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("SELECT * FROM %s: err = %v, want table not found", name, err)
		}
	}
	sees := func(conn *sql.Conn, q, want string) {
		t.Helper()
		if got := collect(t, conn, q); got != want {
			t.Errorf("%s = %q, want %q", q, got, want)
		}
	}

	// b2 resolves names (and lists the views) before each change, so that
	// any answer kept from its earlier statements would show.
	noView(b2, "v")
	mustExec(t, a, "CREATE VIEW v AS SELECT id FROM t WHERE id > 1")
	sees(b2, "SELECT id FROM v JOIN t USING (id)", "2|3")
	sees(b, "SELECT COUNT(*) FROM v", "2")

	mustExec(t, a, "CREATE OR REPLACE VIEW v AS SELECT id FROM t WHERE id > 2")
	sees(b2, "SELECT id FROM v JOIN t USING (id)", "3")

	mustExec(t, a, "RENAME TABLE v TO v2")
	noView(b2, "v")
	sees(b2, "SELECT id FROM v2", "3")

	mustExec(t, a, "DROP VIEW v2")
	noView(b2, "v2")
	sees(b2, "SELECT COUNT(*) FROM t", "3")

	// Another session of the same engine.
	mustExec(t, b, "CREATE VIEW s AS SELECT id FROM t WHERE id = 1")
	sees(b2, "SELECT id FROM s", "1")
	mustExec(t, b, "ALTER VIEW s AS SELECT id FROM t WHERE id = 2")
	sees(b2, "SELECT id FROM s", "2")
	mustExec(t, b, "DROP VIEW s")
	noView(b2, "s")

	// A statement that renames a view twice resolves the name it made.
	mustExec(t, a, "CREATE VIEW r1 AS SELECT id FROM t WHERE id = 3", "RENAME TABLE r1 TO r2, r2 TO r3")
	noView(b2, "r2")
	sees(b2, "SELECT id FROM r3", "3")
}

// catalogReadStore counts a statement's listings of the warehouse and
// reads of each table's link file.
type catalogReadStore struct {
	storage.LocalStore
	root         string
	rootListings *atomic.Int64
	linkReads    *sync.Map // file name → *atomic.Int64
}

func (s catalogReadStore) ReadFile(ctx context.Context, location string) ([]byte, error) {
	if strings.HasSuffix(path.Dir(location), "/.icesql/links") {
		n, _ := s.linkReads.LoadOrStore(path.Base(location), &atomic.Int64{})
		n.(*atomic.Int64).Add(1)
	}
	return s.LocalStore.ReadFile(ctx, location)
}

func (s catalogReadStore) List(ctx context.Context, location string) ([]storage.Entry, error) {
	if strings.TrimSuffix(strings.TrimPrefix(location, "file://"), "/") == s.root {
		s.rootListings.Add(1)
	}
	return s.LocalStore.List(ctx, location)
}

// TestStatementCatalogReads checks that a statement lists the warehouse's
// namespaces once, and reads the link of each table it names once, where
// resolving the names read them several times.
func TestStatementCatalogReads(t *testing.T) {
	dir := t.TempDir()
	store := catalogReadStore{root: dir, rootListings: &atomic.Int64{}, linkReads: &sync.Map{}}
	conn := openConn(t, engine.Config{Warehouse: dir, Store: store})
	mustExec(t, conn, "CREATE DATABASE db", "USE db", "CREATE TABLE t1 (id BIGINT)", "CREATE TABLE t2 (id BIGINT)",
		"INSERT INTO t1 VALUES (1)", "INSERT INTO t2 VALUES (1)")
	for _, q := range []string{"SELECT id FROM t1", "SELECT t1.id FROM t1 JOIN t2 ON t1.id = t2.id", "SELECT COUNT(*) FROM db.t1 a, db.t2 b WHERE a.id = b.id"} {
		store.rootListings.Store(0)
		store.linkReads.Clear()
		collect(t, conn, q)
		if n := store.rootListings.Load(); n != 1 {
			t.Errorf("%s: listed the warehouse %d times, want once", q, n)
		}
		store.linkReads.Range(func(k, v any) bool {
			if n := v.(*atomic.Int64).Load(); n != 1 {
				t.Errorf("%s: read %s %d times, want once", q, k, n)
			}
			return true
		})
	}
	// A name in another case than the table's still resolves.
	if got := collect(t, conn, "SELECT id FROM T1"); got != "1" {
		t.Errorf("SELECT id FROM T1 = %q, want 1", got)
	}
}
