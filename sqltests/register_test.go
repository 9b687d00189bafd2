package sqltests

import (
	"context"
	gosql "database/sql"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/icesql/icesql/engine"
)

// TestRegisterTableRoundTrip registers a table another warehouse holds,
// reads it, writes to it, and checks that the commit went next to the
// registered metadata file while the other warehouse's own history stayed
// as it was.
func TestRegisterTableRoundTrip(t *testing.T) {
	ctx := context.Background()
	srcDir := t.TempDir()
	src, err := engine.Open(ctx, engine.Config{Warehouse: srcDir})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	a := pinnedConn(t, gosql.OpenDB(src.Connector()))
	mustExec(t, a, "CREATE DATABASE db")
	mustExec(t, a, "CREATE TABLE db.t (id BIGINT, name STRING)")
	mustExec(t, a, "INSERT INTO db.t VALUES (1, 'a'), (2, 'b')")

	b := pinnedConn(t, gosql.OpenDB(openEngine(t).Connector()))
	mustExec(t, b, "CREATE DATABASE other")
	folder := filepath.Join(srcDir, "db", "t")
	var snap, records, files gosql.NullInt64
	if err := b.QueryRowContext(ctx, "CALL icesql.system.register_table(table => 'other.t', metadata_file => ?)", folder).
		Scan(&snap, &records, &files); err != nil {
		t.Fatal(err)
	}
	if !snap.Valid || records.Int64 != 2 || files.Int64 != 1 {
		t.Errorf("register_table returned (%v, %v, %v), want a snapshot, 2 records, 1 data file", snap, records, files)
	}
	mustExec(t, b, "INSERT INTO other.t VALUES (3, 'c')")
	var n int
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM other.t").Scan(&n); err != nil || n != 3 {
		t.Errorf("registered table after insert: %d rows, %v; want 3", n, err)
	}
	if err := b.QueryRowContext(ctx, "SELECT count(*) FROM other.t VERSION AS OF "+strconv.FormatInt(snap.Int64, 10)).Scan(&n); err != nil || n != 2 {
		t.Errorf("registered table at its registered snapshot: %d rows, %v; want 2", n, err)
	}
	if _, err := os.Stat(filepath.Join(folder, "metadata", "v2.icesql-1.metadata.json")); err != nil {
		t.Errorf("the commit did not write next to the registered metadata file: %v", err)
	}
	if err := a.QueryRowContext(ctx, "SELECT count(*) FROM db.t").Scan(&n); err != nil || n != 2 {
		t.Errorf("the source warehouse's table: %d rows, %v; want its own 2", n, err)
	}
	// DROP TABLE forgets the registration and leaves the files.
	mustExec(t, b, "DROP TABLE other.t")
	if err := a.QueryRowContext(ctx, "SELECT count(*) FROM db.t").Scan(&n); err != nil || n != 2 {
		t.Errorf("after dropping the registration: %d rows, %v; want 2", n, err)
	}
}
