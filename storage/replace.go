package storage

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Replacement is REPLACE TABLE as Spark and Iceberg's Java library do it:
// the same table (uuid, location, snapshots, history) with a new current
// schema, partition spec, sort order and properties, and no current
// snapshot until the new data's. Old snapshots stay readable by time travel.
type Replacement struct {
	// Updates add and select the new schema, spec and sort order and set
	// the properties, in that order (the spec and order bind to the schema
	// current when they are added).
	Updates []table.Update
	// LastColumnID is the table's last assigned column id the new schema's
	// field ids were numbered after; data files written for the replacement
	// carry those ids, so a concurrent schema change makes them invalid.
	LastColumnID int
}

// Apply returns tbl as the replacement leaves it, before any data: the
// table to write the replacement's data files with.
func (r Replacement) Apply(tbl *table.Table) (*table.Table, error) {
	meta, err := table.UpdateTableMetadata(tbl.Metadata(), r.updates(tbl), tbl.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("replace %s: %w", tbl.Identifier(), err)
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil), nil
}

// updates are r.Updates, then the removal of the main branch, which takes
// the current snapshot away: the replaced table starts without data.
func (r Replacement) updates(tbl *table.Table) []table.Update {
	out := append([]table.Update{}, r.Updates...)
	for name := range tbl.Metadata().Refs() {
		if name == table.MainBranch {
			out = append(out, table.NewRemoveSnapshotRefUpdate(table.MainBranch))
		}
	}
	return out
}

// CommitReplacement commits r and, when files are given, a first snapshot
// (an `append` without parent) holding them, in one metadata commit. It
// wins over concurrent data changes, as Spark's REPLACE TABLE does; a
// concurrent schema change that assigned new column ids is a conflict
// (ErrConflict), since files' field ids would then be ambiguous.
func CommitReplacement(ctx context.Context, cat catalog.Catalog, ident table.Identifier, r Replacement, files []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	return retryCommit(ctx, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		if last := tbl.Metadata().LastColumnID(); last != r.LastColumnID {
			return nil, fmt.Errorf("%w: the columns of %s changed while REPLACE TABLE ran (last column id %d, was %d)", ErrConflict, ident, last, r.LastColumnID)
		}
		updates := r.updates(tbl)
		replaced, err := r.Apply(tbl)
		if err != nil {
			return nil, err
		}
		var tx *table.Transaction
		if len(files) > 0 {
			tx = replaced.NewTransaction()
			if err := tx.AddDataFiles(ctx, files, summary, table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping()); err != nil {
				return nil, fmt.Errorf("replace %s: add data files: %w", ident, err)
			}
			tc, err := tx.TableCommit()
			if err != nil {
				return nil, fmt.Errorf("replace %s: %w", ident, err)
			}
			// tc's requirements describe the replaced metadata, which the
			// catalog has not seen; the ones below describe the catalog's.
			updates = append(updates, tc.Updates...)
		}
		reqs := []table.Requirement{
			table.AssertTableUUID(tbl.Metadata().TableUUID()),
			table.AssertLastAssignedFieldID(r.LastColumnID),
			table.AssertCurrentSchemaID(tbl.Metadata().CurrentSchema().ID),
		}
		meta, loc, err := cat.CommitTable(ctx, ident, reqs, updates)
		if err != nil {
			return nil, err
		}
		if tx != nil {
			tx.MarkCommitted()
		}
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}
