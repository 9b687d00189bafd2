package storage

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Replacement is REPLACE TABLE as Spark and Iceberg's Java library do it:
// the same table (uuid, location, snapshots, history) with a new current
// schema, partition spec, sort order and properties, and no current
// snapshot until the new data's. Old snapshots stay readable by time travel.
type Replacement struct {
	// Schema is the new schema, its field ids numbered after LastColumnID.
	Schema *iceberg.Schema
	// Spec and Order are bound to Schema by column name.
	Spec  *iceberg.PartitionSpec
	Order table.SortOrder
	// SetProperties and RemoveProperties change the table's properties.
	SetProperties    iceberg.Properties
	RemoveProperties []string
	// LastColumnID is the table's last assigned column id the new schema's
	// field ids were numbered after; data files written for the replacement
	// carry those ids, so a concurrent schema change makes them invalid.
	LastColumnID int
}

// Apply returns tbl as the replacement leaves it, before any data: the
// table to write the replacement's data files with.
func (r Replacement) Apply(tbl *table.Table) (*table.Table, error) {
	updates, err := r.updates(tbl)
	if err != nil {
		return nil, err
	}
	meta, err := table.UpdateTableMetadata(tbl.Metadata(), updates, tbl.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("replace %s: %w", tbl.Identifier(), err)
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil), nil
}

// updates are the metadata updates of r on tbl, ending with the removal of
// the main branch, which takes the current snapshot away: the replaced
// table starts without data.
//
// A spec or sort order equal to one the table already has is selected by
// its id rather than added again: catalogs (Iceberg's REST server among
// them) reuse the existing one for an add, and then refuse "set the last
// added" for want of one.
func (r Replacement) updates(tbl *table.Table) ([]table.Update, error) {
	base := tbl.Metadata()
	b, err := table.MetadataBuilderFromBase(base, tbl.MetadataLocation())
	if err != nil {
		return nil, err
	}
	order := r.Order
	if err := errors.Join(b.AddSchema(r.Schema), b.SetCurrentSchemaID(-1),
		b.AddPartitionSpec(r.Spec, false), b.SetDefaultSpecID(-1),
		b.AddSortOrder(&order), b.SetDefaultSortOrderID(-1)); err != nil {
		return nil, fmt.Errorf("replace %s: %w", tbl.Identifier(), err)
	}
	meta, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("replace %s: %w", tbl.Identifier(), err)
	}
	updates := []table.Update{table.NewAddSchemaUpdate(r.Schema), table.NewSetCurrentSchemaUpdate(-1)}
	specID := meta.DefaultPartitionSpec()
	if base.PartitionSpecByID(specID) != nil {
		updates = append(updates, table.NewSetDefaultSpecUpdate(specID))
	} else {
		spec := meta.PartitionSpec()
		updates = append(updates, table.NewAddPartitionSpecUpdate(&spec, false), table.NewSetDefaultSpecUpdate(-1))
	}
	orderID := meta.DefaultSortOrder()
	if slices.ContainsFunc(base.SortOrders(), func(o table.SortOrder) bool { return o.OrderID() == orderID }) {
		updates = append(updates, table.NewSetDefaultSortOrderUpdate(orderID))
	} else {
		o := meta.SortOrder()
		updates = append(updates, table.NewAddSortOrderUpdate(&o), table.NewSetDefaultSortOrderUpdate(-1))
	}
	if len(r.SetProperties) > 0 {
		updates = append(updates, table.NewSetPropertiesUpdate(r.SetProperties))
	}
	if len(r.RemoveProperties) > 0 {
		updates = append(updates, table.NewRemovePropertiesUpdate(r.RemoveProperties))
	}
	for name := range base.Refs() {
		if name == table.MainBranch {
			updates = append(updates, table.NewRemoveSnapshotRefUpdate(table.MainBranch))
		}
	}
	return updates, nil
}

// CommitReplacement commits r and, when files are given, a first snapshot
// (an `append` without parent) holding them, in one metadata commit. It
// wins over concurrent data changes, as Spark's REPLACE TABLE does; a
// concurrent schema change that assigned new column ids is a conflict
// (ErrConflict), since files' field ids would then be ambiguous.
func CommitReplacement(ctx context.Context, cat catalog.Catalog, ident table.Identifier, r Replacement, files []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		if last := tbl.Metadata().LastColumnID(); last != r.LastColumnID {
			return nil, fmt.Errorf("%w: the columns of %s changed while REPLACE TABLE ran (last column id %d, was %d)", ErrConflict, ident, last, r.LastColumnID)
		}
		updates, err := r.updates(tbl)
		if err != nil {
			return nil, err
		}
		replaced, err := r.Apply(tbl)
		if err != nil {
			return nil, err
		}
		var tx *table.Transaction
		if len(files) > 0 {
			tx = replaced.NewTransaction()
			// On v3 the rows take new ids from the table's next-row-id,
			// which a replacement keeps.
			files, err := WithFirstRowIDs(replaced.Metadata(), files)
			if err != nil {
				return nil, fmt.Errorf("replace %s: %w", ident, err)
			}
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
		meta, loc, err := commitUpdates(ctx, cat, tbl, reqs, updates)
		if err != nil {
			return nil, err
		}
		if tx != nil {
			tx.MarkCommitted()
		}
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}
