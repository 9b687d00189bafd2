package storage

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// Summary properties of write-audit-publish, as Java's SnapshotSummary
// names them.
const (
	// WapIDProperty marks a snapshot staged by a write with a WAP id.
	WapIDProperty = "wap.id"
	// PublishedWapIDProperty marks the snapshot that published a WAP id.
	PublishedWapIDProperty = "published-wap-id"
	// SourceSnapshotProperty names the snapshot a cherry-pick copied.
	SourceSnapshotProperty = "source-snapshot-id"
)

// AppendFilesToBranch is AppendFiles on branch: the new snapshot's parent is
// the branch's head and only the branch moves. A branch that does not exist
// yet starts from the current snapshot of main, as in Java.
func AppendFilesToBranch(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch string, files []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	if branch == "" || branch == table.MainBranch {
		return AppendFiles(ctx, cat, ident, files, summary)
	}
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		tbl = mergingAppends(tbl, cat)
		tx, err := tbl.NewTransactionOnBranchWithError(branch)
		if err != nil {
			return nil, refErr(ErrRefKind, "Cannot write to %s of %s: %v", branch, ident, err)
		}
		if err := addOwnFiles(ctx, tbl.Metadata(), tx, files, summary); err != nil {
			return nil, err
		}
		return commitTx(ctx, tbl, tx)
	})
}

// StageFiles commits files as a snapshot that no branch points at (Java's
// stageOnly), the write half of write-audit-publish with a WAP id: the
// snapshot's parent is main's current snapshot and its summary carries
// wap.id, so publish_changes can find and cherry-pick it. It returns the
// staged snapshot's id.
func StageFiles(ctx context.Context, cat catalog.Catalog, ident table.Identifier, files []iceberg.DataFile, summary iceberg.Properties) (int64, error) {
	var staged int64
	_, err := UpdateRefs(ctx, cat, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		// The snapshot producer always moves a branch; stage on a branch
		// nobody has and commit everything but that branch's ref.
		tmp := "icesql-stage-" + uuid.NewString()
		tx, err := mergingAppends(tbl, cat).NewTransactionOnBranchWithError(tmp)
		if err != nil {
			return nil, nil, err
		}
		if err := addOwnFiles(ctx, tbl.Metadata(), tx, files, summary); err != nil {
			return nil, nil, err
		}
		st, err := tx.StagedTable()
		if err != nil {
			return nil, nil, err
		}
		snap := st.Metadata().SnapshotByName(tmp)
		if snap == nil {
			return nil, nil, fmt.Errorf("stage snapshot of %s: no snapshot was staged", ident)
		}
		staged = snap.SnapshotID
		tc, err := tx.TableCommit()
		if err != nil {
			return nil, nil, err
		}
		// The new snapshot's sequence number follows main's; a commit to
		// main meanwhile must make this one start over.
		var head *int64
		if cur := tbl.CurrentSnapshot(); cur != nil {
			head = &cur.SnapshotID
		}
		reqs := append(tc.Requirements, table.AssertRefSnapshotID(table.MainBranch, head))
		return reqs, withoutRefUpdates(tc.Updates), nil
	})
	return staged, err
}

// emptyRecords is a reader of no rows with the table's columns.
func emptyRecords(tbl *table.Table) (array.RecordReader, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("arrow schema of %s: %w", tbl.Identifier(), err)
	}
	return array.NewRecordReader(sc, nil)
}
