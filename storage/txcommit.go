package storage

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// CommitTransaction stages a change on a transaction over the newest
// metadata of a table and commits it (snapshots included), reloading and
// staging again when another writer committed first. stage must decide from
// the table it is given, as UpdateTable's change does.
func CommitTransaction(ctx context.Context, cat catalog.Catalog, ident table.Identifier, stage func(*table.Table, *table.Transaction) error) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		if err := stage(tbl, tx); err != nil {
			return nil, err
		}
		return commitTx(ctx, tbl, tx)
	})
}

// CommitUpdates commits metadata updates that no transaction method stages
// (setting main to any snapshot, removing chosen snapshots). build derives
// the requirements and updates from the newest metadata; it runs again on a
// reloaded table after a lost race. No updates means nothing to commit: the
// table is returned as loaded.
func CommitUpdates(ctx context.Context, cat catalog.Catalog, ident table.Identifier, build func(*table.Table) ([]table.Requirement, []table.Update, error)) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		reqs, updates, err := build(tbl)
		if err != nil {
			return nil, err
		}
		if len(updates) == 0 {
			return tbl, nil
		}
		meta, loc, err := commitUpdates(ctx, cat, tbl, reqs, updates)
		if err != nil {
			return nil, fmt.Errorf("commit %s: %w", ident, err)
		}
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}
