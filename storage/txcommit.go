package storage

import (
	"context"
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// CommitTransaction stages a change on a transaction over the newest
// metadata of a table and commits it (snapshots included), reloading and
// staging again when another writer committed first. stage must decide from
// the table it is given, as UpdateTable's change does.
func CommitTransaction(ctx context.Context, cat catalog.Catalog, ident table.Identifier, stage func(*table.Table, *table.Transaction) error) (*table.Table, error) {
	return CommitWriting(ctx, cat, ident, func(tbl *table.Table, tx *table.Transaction) ([]iceberg.DataFile, error) {
		return nil, stage(tbl, tx)
	})
}

// CommitWriting is CommitTransaction for a change that writes new files in
// each attempt (a rewrite): stage returns the data and delete files it
// wrote, also when it fails. An attempt that commits nothing (stage failed,
// or the commit lost the race) deletes them along with its manifests, so a
// failed or retried procedure leaves no orphans behind.
func CommitWriting(ctx context.Context, cat catalog.Catalog, ident table.Identifier, stage func(*table.Table, *table.Transaction) ([]iceberg.DataFile, error)) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		written, err := stage(tbl, tx)
		if err != nil {
			DeleteWritten(ctx, tbl, written)
			return nil, err
		}
		return CommitWritten(ctx, tbl, tx, written)
	})
}

// CommitWritten commits tx, a transaction on tbl that adds written, files
// this attempt wrote. When the commit loses the race, written are deleted
// with the attempt's manifests; after any other failure the catalog may
// have accepted the commit, and they are kept.
func CommitWritten(ctx context.Context, tbl *table.Table, tx *table.Transaction, written []iceberg.DataFile) (*table.Table, error) {
	out, err := commitTx(ctx, tbl, tx)
	if err != nil && lostRace(err) {
		DeleteWritten(ctx, tbl, written)
	}
	return out, err
}

// DeleteWritten deletes data or delete files that an attempt wrote and no
// commit references (several deletion vectors may share one file). It is
// best effort: a file left behind is an orphan for remove_orphan_files.
func DeleteWritten(ctx context.Context, tbl *table.Table, files []iceberg.DataFile) {
	if len(files) == 0 {
		return
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return
	}
	wfs, ok := fsys.(icebergio.WriteFileIO)
	if !ok {
		return
	}
	done := map[string]bool{}
	for _, f := range files {
		if p := f.FilePath(); !done[p] {
			done[p] = true
			_ = wfs.Remove(p)
		}
	}
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
