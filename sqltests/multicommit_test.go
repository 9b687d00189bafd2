package sqltests

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
)

// racingStore simulates another process committing to a table at the
// worst moment: each time icesql creates a metadata file of the table whose
// metadata folder is target, the other process has created that version
// first (a copy of the version before it), so icesql's create fails as a
// lost race does. times says how many creates lose; -1 is every one.
type racingStore struct {
	storage.Store
	mu     sync.Mutex
	target string
	times  int
	raced  int
}

var metadataVersion = regexp.MustCompile(`/v(\d+)\.metadata\.json$`)

func (s *racingStore) arm(target string, times int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.target, s.times, s.raced = target, times, 0
}

func (s *racingStore) CreateExclusive(ctx context.Context, loc string, data []byte) error {
	s.mu.Lock()
	m := metadataVersion.FindStringSubmatch(loc)
	race := s.target != "" && strings.Contains(loc, s.target) && m != nil && (s.times < 0 || s.raced < s.times)
	if race {
		s.raced++
	}
	s.mu.Unlock()
	if race {
		v, _ := strconv.Atoi(m[1])
		prev, err := s.Store.ReadFile(ctx, strings.TrimSuffix(loc, m[0])+fmt.Sprintf("/v%d.metadata.json", v-1))
		if err != nil {
			return err
		}
		if err := s.Store.CreateExclusive(ctx, loc, prev); err != nil {
			return err
		}
	}
	return s.Store.CreateExclusive(ctx, loc, data)
}

// TestMultiTableCommitAllOrNothing commits a transaction that wrote two
// tables while another process keeps committing to the second between
// icesql's validation and its commit: the client gets 1213 and neither
// table has the transaction's rows or files, while every commit of the
// other process stays. A race lost once is retried and the transaction
// commits both tables.
func TestMultiTableCommitAllOrNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	store := &racingStore{Store: storage.LocalStore{}}
	conn := wireConnWith(t, engine.Config{Warehouse: "file://" + dir, Store: store})
	for _, q := range []string{
		"CREATE DATABASE d", "CREATE TABLE d.a (id BIGINT)", "CREATE TABLE d.b (id BIGINT)",
		"INSERT INTO d.a VALUES (1)", "INSERT INTO d.b VALUES (1)",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	aMeta, bMeta := filepath.Join(dir, "d", "a", "metadata"), filepath.Join(dir, "d", "b", "metadata")
	aBefore, bBefore := entries(t, aMeta), entries(t, bMeta)
	count := func(tbl string) int {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, "SELECT COUNT(*) FROM "+tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	transaction := func() error {
		t.Helper()
		for _, q := range []string{"BEGIN", "INSERT INTO d.a VALUES (2)", "INSERT INTO d.b VALUES (2)"} {
			if _, err := conn.ExecContext(ctx, q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
		_, err := conn.ExecContext(ctx, "COMMIT")
		return err
	}

	store.arm("/d/b/metadata/", -1)
	if err := transaction(); errorCode(err) != 1213 {
		t.Fatalf("COMMIT racing another process: got %v, want error 1213", err)
	}
	raced := store.raced
	store.arm("", 0)
	if a, b := count("d.a"), count("d.b"); a != 1 || b != 1 {
		t.Fatalf("after the failed COMMIT d.a has %d rows and d.b %d, want 1 and 1 (nothing of the transaction)", a, b)
	}
	if got := entries(t, aMeta); strings.Join(got, " ") != strings.Join(aBefore, " ") {
		t.Errorf("d.a's metadata folder changed: was %v, now %v", aBefore, got)
	}
	var bAdded []string
	for _, e := range entries(t, bMeta) {
		if !slices.Contains(bBefore, e) {
			bAdded = append(bAdded, e)
			if !metadataVersion.MatchString("/" + e) {
				t.Errorf("d.b's metadata folder keeps %s of the failed attempts", e)
			}
		}
	}
	if len(bAdded) != raced {
		t.Errorf("d.b has %d new metadata files, want the other process's %d commits", len(bAdded), raced)
	}

	store.arm("/d/b/metadata/", 1)
	if err := transaction(); err != nil {
		t.Fatalf("COMMIT after one lost race: %v", err)
	}
	if a, b := count("d.a"), count("d.b"); a != 2 || b != 2 {
		t.Fatalf("after the retried COMMIT d.a has %d rows and d.b %d, want 2 and 2", a, b)
	}
}
