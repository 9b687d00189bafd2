package storage

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// UpdateTable commits a metadata change (schema, partition spec, sort
// order, properties) to a table. change stages the change on a transaction
// over the newest metadata; when another writer commits first, the table is
// reloaded and change runs again on it, so it must decide from the table it
// is given (a column added meanwhile, a spec replaced). An error from change
// ends the attempt and is returned as it is.
//
// change may stage several schema or spec changes one after another.
func UpdateTable(ctx context.Context, cat catalog.Catalog, ident table.Identifier, change func(*table.Table, *table.Transaction) error) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		if err := change(tbl, tx); err != nil {
			return nil, err
		}
		tc, err := tx.TableCommit()
		if err != nil {
			return nil, fmt.Errorf("update %s: %w", ident, err)
		}
		if len(tc.Updates) == 0 {
			return tbl, nil
		}
		meta, loc, err := commitUpdates(ctx, cat, tbl, baseRequirements(tc.Requirements), tc.Updates)
		if err != nil {
			return nil, err
		}
		tx.MarkCommitted()
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}

// baseRequirements keeps, of each requirement on the table's current
// schema, spec, sort order and assigned ids, the first: it asserts the state
// the transaction started from. iceberg-go's transaction adds one per staged
// change, each asserting the state the previous change staged, which the
// catalog's metadata never had; the catalog would refuse the commit forever.
func baseRequirements(reqs []table.Requirement) []table.Requirement {
	once := map[string]bool{
		"assert-current-schema-id":          true,
		"assert-default-spec-id":            true,
		"assert-default-sort-order-id":      true,
		"assert-last-assigned-field-id":     true,
		"assert-last-assigned-partition-id": true,
	}
	seen := map[string]bool{}
	out := make([]table.Requirement, 0, len(reqs))
	for _, r := range reqs {
		if once[r.GetType()] {
			if seen[r.GetType()] {
				continue
			}
			seen[r.GetType()] = true
		}
		out = append(out, r)
	}
	return out
}
