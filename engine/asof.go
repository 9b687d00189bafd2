package engine

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/metatables"
	"github.com/icesql/icesql/pushdown"
)

var _ sql.VersionedDatabase = (*Database)(nil)

// GetTableInsensitiveAsOf implements sql.VersionedDatabase: the table as it
// was at a snapshot, named by asOf (see snapshotAsOf). go-mysql-server
// passes a string for AS OF <literal> and a time.Time for AS OF <datetime
// expression>; the planner turns Spark's VERSION AS OF / TIMESTAMP AS OF and
// Trino's FOR VERSION / FOR TIMESTAMP AS OF into these.
func (d *Database) GetTableInsensitiveAsOf(ctx *sql.Context, name string, asOf any) (sql.Table, bool, error) {
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		if _, ref, _, isRef := splitRefName(name); isRef {
			return nil, false, errAsOf("%s.%s names ref %s already; it cannot be read AS OF as well", d.name, name, ref)
		}
		return d.metadataTableAsOf(ctx, name, asOf)
	}
	tbl, err := sessionOf(ctx).pinnedTable(ctx, d.e.catalog, d.ident(real))
	if err != nil {
		return nil, false, mysqlerr.CatalogError(err, name)
	}
	var t *Table
	if branch, ok := branchAsOf(tbl, asOf); ok {
		t = d.branchTable(ctx, real, tbl, branch)
	} else {
		snap, err := snapshotAsOf(ctx, d.name+"."+real, tbl, asOf)
		if err != nil {
			return nil, false, err
		}
		t = newTableAsOf(d, real, tbl, snap)
	}
	sessionOf(ctx).noteScan(ctx, t) // scanmetrics.go
	return t, true, nil
}

// metadataTableAsOf is a metadata table (db.t.files) read at the snapshot
// asOf names in its base table.
func (d *Database) metadataTableAsOf(ctx *sql.Context, name string, asOf any) (sql.Table, bool, error) {
	t, ok, err := d.metadataTableAt(ctx, name, asOf)
	if errors.Is(err, metatables.ErrNotAtSnapshot) {
		return nil, false, mysqlerr.NotSupported("%s.%s lists the table's whole history; it has no AS OF form", d.name, name)
	}
	return t, ok, err
}

// GetTableNamesAsOf implements sql.VersionedDatabase. Iceberg versions
// tables, not namespaces, so the names are today's.
func (d *Database) GetTableNamesAsOf(ctx *sql.Context, _ any) ([]string, error) {
	return d.tableNames(ctx)
}

// errAsOf is the error of an AS OF that names no snapshot of the table.
func errAsOf(format string, args ...any) error {
	return mysqlerr.New(mysql.ERWrongArguments, "AS OF: "+format, args...)
}

// snapshotAsOf resolves asOf as Spark does: all digits is a snapshot id,
// else the name of a branch or tag, else a timestamp in the session time
// zone, meaning the snapshot current at that time (at or before it).
func snapshotAsOf(ctx *sql.Context, name string, tbl *table.Table, asOf any) (*table.Snapshot, error) {
	switch v := asOf.(type) {
	case time.Time:
		return snapshotAt(ctx, name, tbl, v)
	case string:
		s := strings.TrimSpace(v)
		if s != "" && strings.Trim(s, "0123456789") == "" {
			id, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, errAsOf("snapshot id %s is out of range", s)
			}
			if snap := tbl.Metadata().SnapshotByID(id); snap != nil {
				return snap, nil
			}
			return nil, errAsOf("table %s has no snapshot %d", name, id)
		}
		if snap := tbl.Metadata().SnapshotByName(s); snap != nil {
			return snap, nil
		}
		if ts, text, ok := pushdown.ParseDatetime(s); ok && !text.Offset {
			return snapshotAt(ctx, name, tbl, ts)
		}
		return nil, errAsOf("'%s' is not a snapshot id, a branch or tag of %s, or a timestamp", s, name)
	}
	return nil, errAsOf("want a snapshot id, a branch or tag name, or a timestamp; got %v (%T)", asOf, asOf)
}

// snapshotAt finds the snapshot current at wall-clock time wall in the
// session time zone.
func snapshotAt(ctx *sql.Context, name string, tbl *table.Table, wall time.Time) (*table.Snapshot, error) {
	at, tz, err := sessionMillis(ctx, wall)
	if err != nil {
		return nil, err
	}
	if id, ok := pushdown.SnapshotAsOf(tbl, at); ok {
		if snap := tbl.Metadata().SnapshotByID(id); snap != nil {
			return snap, nil
		}
	}
	first := "it has no snapshot"
	for entry := range tbl.Metadata().SnapshotLogs() {
		first = "its first snapshot is at " + time.UnixMilli(entry.TimestampMs).UTC().Format("2006-01-02 15:04:05.000") + " UTC"
		break
	}
	return nil, errAsOf("table %s has no snapshot at or before %s (time zone %s): %s",
		name, wall.Format("2006-01-02 15:04:05.999999"), tz, first)
}

// sessionMillis reads a wall-clock time in the session time zone as Unix
// milliseconds, the unit of snapshot timestamps; it also returns the zone.
func sessionMillis(ctx *sql.Context, wall time.Time) (int64, string, error) {
	tz, err := function.SessionTimeZone(ctx)
	if err != nil {
		return 0, "", err
	}
	at, err := sql.ConvertTimeToLocation(wall, tz)
	if err != nil {
		return 0, "", err
	}
	return at.UnixMilli(), tz, nil
}

// newTableAsOf is the table at an old snapshot, with the columns of that
// snapshot's schema. It sees no staged writes: a transaction's own inserts
// are not part of any past snapshot.
func newTableAsOf(db *Database, name string, tbl *table.Table, snap *table.Snapshot) *Table {
	t := newTable(db, name, tbl, nil)
	id := snap.SnapshotID
	t.snapshotID = &id
	if snap.SchemaID != nil {
		for _, sc := range tbl.Metadata().Schemas() {
			if sc.ID == *snap.SchemaID {
				t.schema = sqlColumns(sqlval.SchemaOf(sc, tbl.Properties(), db.name, name), sc)
				t.names = icebergNames(sc)
			}
		}
	}
	return t
}

// String describes the snapshot a time-travel table reads, for EXPLAIN.
func (t *Table) asOfString() string {
	if t.snapshotID == nil {
		return t.refString()
	}
	return fmt.Sprintf(" AS OF %d", *t.snapshotID) + t.refString()
}

// Snapshot is the Snapshot the table reads.
func (t *Table) Snapshot() *table.Snapshot {
	if t.snapshotID != nil {
		return t.tbl.Metadata().SnapshotByID(*t.snapshotID)
	}
	if t.branch != "" {
		return t.tbl.Metadata().SnapshotByName(t.branch)
	}
	return t.tbl.CurrentSnapshot()
}
