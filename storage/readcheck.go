package storage

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Reads that a transaction must see unchanged until it commits (locking
// reads, SELECT ... FOR UPDATE / FOR SHARE, and every read under
// SERIALIZABLE) are validated at table granularity: the transaction read
// the table at some metadata, and any change of its rows committed since
// (a new snapshot on any ref, or a ref moved to another snapshot) is a
// conflict. Only snapshots that cannot change rows are allowed: compaction
// (`replace`). This never misses a conflicting change, at the price of
// false conflicts with changes to rows the transaction did not read.

// ChangedSince describes the first change of rows committed to cur since
// read, the metadata a transaction read the table at; "" when there is none.
func ChangedSince(read, cur table.Metadata) string {
	if read == nil || cur == nil {
		return ""
	}
	if read.TableUUID() != cur.TableUUID() {
		return "the table was dropped and created again"
	}
	for name, r := range read.Refs() {
		if now, ok := RefNamed(cur, name); !ok {
			return fmt.Sprintf("ref %s was removed", name)
		} else if now.SnapshotID != r.SnapshotID && changesRows(read, cur, now.SnapshotID, r.SnapshotID) {
			return fmt.Sprintf("ref %s moved from snapshot %d to %d", name, r.SnapshotID, now.SnapshotID)
		}
	}
	for name, r := range cur.Refs() {
		if _, ok := RefNamed(read, name); !ok && r.SnapshotRefType == table.BranchRef && read.SnapshotByID(r.SnapshotID) == nil {
			return fmt.Sprintf("branch %s was created with new snapshot %d", name, r.SnapshotID)
		}
	}
	return ""
}

// changesRows reports whether moving a ref from snapshot from to snapshot to
// can change the rows it shows: unless to descends from from through
// snapshots that only rewrite files (`replace`), it can.
func changesRows(read, cur table.Metadata, to, from int64) bool {
	for id := to; id != from; {
		s := cur.SnapshotByID(id)
		if s == nil || read.SnapshotByID(id) != nil || s.Summary == nil || s.Summary.Operation != table.OpReplace || s.ParentSnapshotID == nil {
			return true
		}
		id = *s.ParentSnapshotID
	}
	return false
}

// ValidateRead fails with ErrRowConflict when a change of rows was committed
// to the table since read, the metadata the transaction read it at.
func ValidateRead(ctx context.Context, cat catalog.Catalog, ident table.Identifier, read table.Metadata) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return err
	}
	return checkRead(tbl, ident, read)
}

func checkRead(tbl *table.Table, ident table.Identifier, read table.Metadata) error {
	if change := ChangedSince(read, tbl.Metadata()); change != "" {
		return fmt.Errorf("%w: the transaction read %s with FOR UPDATE, FOR SHARE or SERIALIZABLE, and since then %s", ErrRowConflict, strings.Join(ident, "."), change)
	}
	return nil
}
