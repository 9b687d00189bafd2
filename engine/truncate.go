package engine

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

var _ sql.TruncateableTable = (*Table)(nil)

// Truncate implements sql.TruncateableTable: TRUNCATE TABLE, and DELETE
// without WHERE, which go-mysql-server turns into it. As in Spark, it is a
// change of metadata only: one `delete` snapshot that drops every data file
// of the snapshot the statement read; nothing is rewritten. An empty table
// gets no snapshot.
//
// Files other writers commit meanwhile survive, as if they came after the
// TRUNCATE; a file of the snapshot that someone else removed or rewrote
// meanwhile makes the commit a conflict (filechange.go).
//
// TRUNCATE is DDL, so go-mysql-server commits the open transaction with it,
// as MySQL does; rows the transaction had inserted into the table go too.
func (t *Table) Truncate(ctx *sql.Context) (int, error) {
	if t.snapshotID != nil {
		return 0, mysqlerr.NotSupported("TRUNCATE TABLE %s: a table read AS OF a snapshot cannot be changed", t)
	}
	snap := t.tbl.CurrentSnapshot()
	files, err := liveDataFiles(ctx, t.tbl, snap)
	if err != nil {
		return 0, fmt.Errorf("truncate %s: list data files: %w", t, err)
	}
	var rows int64
	for _, f := range files {
		rows += f.Count()
	}
	for _, f := range t.staged {
		rows += f.Count()
	}
	var base *int64
	if snap != nil {
		id := snap.SnapshotID
		base = &id
	}
	sessionOf(ctx).stageFileChange(t.db.ident(t.name), files, nil, &fileChange{base: base})
	return int(rows), nil
}
