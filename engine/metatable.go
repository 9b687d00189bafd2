package engine

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/metatables"
)

// metaTable presents one of package metatables' Arrow readers as a
// read-only SQL table. It is what `t$snapshots` (and db.t.snapshots, which
// the planner rewrites to it) resolves to.
type metaTable struct {
	name     string // as the statement wrote it: t$snapshots
	db       string
	kind     metatables.Kind
	tbl      *table.Table
	snapshot *int64 // nil: the current snapshot
	schema   sql.Schema

	// The reader opened to learn the schema serves the first scan, so a
	// table whose reader does its work up front (partitions) is not read
	// twice for one SELECT.
	mu    sync.Mutex
	first array.RecordReader
}

var (
	_ sql.Table          = (*metaTable)(nil)
	_ sql.CommentedTable = (*metaTable)(nil)
)

// metadataTable resolves a name of the form table$kind in database d, or
// reports that the name is no metadata table.
func (d *Database) metadataTable(ctx *sql.Context, name string) (sql.Table, bool, error) {
	return d.metadataTableAt(ctx, name, nil)
}

// metadataTableAt is metadataTable read at the snapshot asOf names in the
// base table (see snapshotAsOf; nil: the current one), for time travel:
// db.t.files VERSION AS OF 123. Metadata tables of the whole history
// (snapshots, history, refs, all_*) refuse a snapshot with
// metatables.ErrNotAtSnapshot.
func (d *Database) metadataTableAt(ctx *sql.Context, name string, asOf any) (sql.Table, bool, error) {
	base, kind, ok := metatables.Split(name)
	if !ok {
		return nil, false, nil
	}
	real, ok, err := d.resolveTable(ctx, base)
	if err != nil || !ok {
		return nil, false, err
	}
	tbl, err := sessionOf(ctx).pinnedTable(ctx, d.e.catalog, d.ident(real))
	if err != nil {
		return nil, false, mysqlerr.CatalogError(err, base)
	}
	var snapshot *int64
	if asOf != nil {
		snap, err := snapshotAsOf(ctx, d.name+"."+real, tbl, asOf)
		if err != nil {
			return nil, false, err
		}
		snapshot = &snap.SnapshotID
	}
	t, err := newMetaTable(ctx, d.name, name, kind, tbl, snapshot)
	if err != nil {
		return nil, false, err
	}
	return t, true, nil
}

// newMetaTable makes metadata table kind of tbl, read at snapshot (nil: the
// current one). Time travel on a metadata table passes the snapshot here.
func newMetaTable(ctx *sql.Context, db, name string, kind metatables.Kind, tbl *table.Table, snapshot *int64) (*metaTable, error) {
	rr, err := metatables.Open(ctx, kind, tbl, snapshot)
	if err != nil {
		return nil, err
	}
	sch, err := metaSchema(rr.Schema(), db, name)
	if err != nil {
		rr.Release()
		return nil, err
	}
	return &metaTable{name: name, db: db, kind: kind, tbl: tbl, snapshot: snapshot, schema: sch, first: rr}, nil
}

// metaSchema is the SQL schema of a metadata table's Arrow schema, through
// the Iceberg types so that its columns show the SQL types every other
// table's do. Field ids do not matter here (and some nested fields of the
// readers carry none), so fresh ones are assigned.
func metaSchema(sc *arrow.Schema, db, name string) (sql.Schema, error) {
	isc, err := table.ArrowSchemaToIcebergWithFreshIDs(sc, false)
	if err != nil {
		return nil, fmt.Errorf("schema of metadata table %s: %w", name, err)
	}
	return sqlval.SchemaOf(isc, nil, db, name), nil
}

func (t *metaTable) Name() string                   { return t.name }
func (t *metaTable) String() string                 { return t.db + "." + t.name }
func (t *metaTable) Schema(*sql.Context) sql.Schema { return t.schema }
func (t *metaTable) Collation() sql.CollationID     { return sql.Collation_Default }
func (t *metaTable) Comment() string                { return "Iceberg metadata table " + string(t.kind) }
func (t *metaTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return sql.PartitionsToPartitionIter(scanPartition{}), nil
}

// PartitionRows implements sql.Table.
func (t *metaTable) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	t.mu.Lock()
	rr := t.first
	t.first = nil
	t.mu.Unlock()
	if rr == nil {
		var err error
		if rr, err = metatables.Open(ctx, t.kind, t.tbl, t.snapshot); err != nil {
			return nil, err
		}
	}
	return &recordRowIter{rr: rr}, nil
}

// recordRowIter turns the batches of an Arrow record reader into rows.
type recordRowIter struct {
	rr      array.RecordReader
	rec     arrow.RecordBatch
	row     int
	zone    *time.Location // the session's, for timestamptz (sqlval/timezone.go)
	started bool
}

func (r *recordRowIter) Next(ctx *sql.Context) (sql.Row, error) {
	if !r.started {
		r.zone, r.started = sqlval.SessionZone(ctx), true
	}
	for r.rec == nil || r.row >= int(r.rec.NumRows()) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !r.rr.Next() {
			if err := r.rr.Err(); err != nil {
				return nil, err
			}
			return nil, io.EOF
		}
		r.rec, r.row = r.rr.RecordBatch(), 0
	}
	row := make(sql.Row, r.rec.NumCols())
	for i, col := range r.rec.Columns() {
		v, err := sqlval.RowValue(col, r.row)
		if err != nil {
			return nil, err
		}
		row[i] = sqlval.Zoned(col, v, r.zone)
	}
	r.row++
	return row, nil
}

func (r *recordRowIter) Close(*sql.Context) error {
	r.rr.Release()
	return nil
}
