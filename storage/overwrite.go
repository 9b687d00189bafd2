package storage

import (
	"context"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// FileChange is a commit that removes whole data files from a table and adds
// new ones in one snapshot: INSERT OVERWRITE, TRUNCATE TABLE.
type FileChange struct {
	// Base is the snapshot the change was decided on; nil for a table that
	// had none.
	Base *int64
	// Removed are data files of Base that the change drops; Added are new
	// data files written for it.
	Removed, Added []iceberg.DataFile
	// Overlaps reports whether a data file another writer committed after
	// Base falls inside what the change replaces. Such a file makes the
	// commit a conflict: the change would either keep rows it was meant to
	// replace or remove rows it never saw (serializable isolation). Nil
	// accepts every concurrent append.
	Overlaps func(iceberg.DataFile) bool
	Summary  iceberg.Properties
}

// CommitFileChange commits ch as one snapshot: `delete` when it only removes
// every file of the table, else `overwrite` when it removes files, else
// `append`. On a lost race it reloads the table and checks what the other
// writers committed since ch.Base: a removed file that is gone, or an added
// file ch.Overlaps, fails with ErrConflict; anything else is re-applied.
func CommitFileChange(ctx context.Context, cat catalog.Catalog, ident table.Identifier, ch FileChange) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		if err := checkConcurrent(ctx, tbl, ch); err != nil {
			return nil, err
		}
		tx := tbl.NewTransaction()
		switch {
		case len(ch.Added) == 0 && removesEverything(tbl, ch.Removed):
			// Only Delete names the snapshot `delete`, as Spark's TRUNCATE does.
			// With the concurrent files checked above, the table holds
			// exactly ch.Removed, so deleting everything removes just them.
			err = tx.Delete(ctx, iceberg.AlwaysTrue{}, ch.Summary)
		default:
			err = ReplaceDataFiles(ctx, tbl, tx, ch.Removed, ch.Added, ch.Summary) // dv.go
		}
		if err != nil {
			return nil, fmt.Errorf("stage the change of %s: %w", ident, err)
		}
		return commitTx(ctx, tbl, tx)
	})
}

// removesEverything reports whether files are all the data files of the
// table's current snapshot, by count: the caller has checked that each of
// them is still in it.
func removesEverything(tbl *table.Table, files []iceberg.DataFile) bool {
	snap := tbl.CurrentSnapshot()
	if snap == nil || snap.Summary == nil || len(files) == 0 {
		return false
	}
	props := snap.Summary.Properties
	n, err := strconv.Atoi(props["total-data-files"])
	if err != nil || n != len(files) {
		return false
	}
	return props["total-delete-files"] == "0"
}

// checkConcurrent fails with ErrConflict when a snapshot committed after
// ch.Base removed one of ch.Removed or added a file ch.Overlaps.
func checkConcurrent(ctx context.Context, tbl *table.Table, ch FileChange) error {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		if ch.Base != nil {
			return fmt.Errorf("%w: %s no longer has the snapshot the statement read", ErrConflict, tbl.Identifier())
		}
		return nil
	}
	if ch.Base != nil && cur.SnapshotID == *ch.Base {
		return nil
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return err
	}
	removed := make(map[string]bool, len(ch.Removed))
	for _, f := range ch.Removed {
		removed[f.FilePath()] = true
	}
	meta := tbl.Metadata()
	for snap := cur; ; {
		manifests, err := snap.Manifests(fs)
		if err != nil {
			return fmt.Errorf("read snapshot %d of %s: %w", snap.SnapshotID, tbl.Identifier(), err)
		}
		for _, m := range manifests {
			if m.SnapshotID() != snap.SnapshotID {
				continue // carried over from an older snapshot
			}
			//lint:ignore SA1019 the whole manifest at once through ReadManifest, the reader the legacy-manifest and codec tests cover; Entries streams through another decoder
			entries, err := m.FetchEntries(fs, false)
			if err != nil {
				return fmt.Errorf("read manifest %s of %s: %w", m.FilePath(), tbl.Identifier(), err)
			}
			for _, e := range entries {
				df := e.DataFile()
				if e.SnapshotID() != snap.SnapshotID || df.ContentType() != iceberg.EntryContentData {
					continue
				}
				switch {
				case e.Status() == iceberg.EntryStatusDELETED && removed[df.FilePath()]:
					return fmt.Errorf("%w: snapshot %d of %s removed %s, which this statement also replaces", ErrConflict, snap.SnapshotID, tbl.Identifier(), df.FilePath())
				case e.Status() == iceberg.EntryStatusADDED && ch.Overlaps != nil && ch.Overlaps(df):
					return fmt.Errorf("%w: snapshot %d of %s added rows to data this statement overwrites", ErrConflict, snap.SnapshotID, tbl.Identifier())
				}
			}
		}
		if snap.ParentSnapshotID == nil {
			if ch.Base != nil {
				return fmt.Errorf("%w: the snapshot the statement read is no longer an ancestor of %s's current snapshot", ErrConflict, tbl.Identifier())
			}
			return nil
		}
		if ch.Base != nil && *snap.ParentSnapshotID == *ch.Base {
			return nil
		}
		if snap = meta.SnapshotByID(*snap.ParentSnapshotID); snap == nil {
			return fmt.Errorf("%w: the history of %s was expired while the statement ran", ErrConflict, tbl.Identifier())
		}
	}
}
