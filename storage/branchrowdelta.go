package storage

import "github.com/apache/iceberg-go/table"

// Row-level changes to a branch (RowDelta.Branch): the commit builds on the
// branch's head and moves only the branch, and validation walks the
// branch's ancestry, so main and other branches are untouched.

// onMain reports whether branch names main ("" is main).
func onMain(branch string) bool { return branch == "" || branch == table.MainBranch }

// headOf is the snapshot a commit to branch builds on: the branch's head,
// or main's current snapshot for main and for a branch that does not exist
// yet, which starts there (as in Java's SnapshotUtil.latestSnapshot).
func headOf(tbl *table.Table, branch string) *table.Snapshot {
	if !onMain(branch) {
		if r, ok := RefNamed(tbl.Metadata(), branch); ok {
			return tbl.Metadata().SnapshotByID(r.SnapshotID)
		}
	}
	return tbl.CurrentSnapshot()
}

// newTransactionOn is a transaction whose snapshots go to branch.
func newTransactionOn(tbl *table.Table, branch string) (*table.Transaction, error) {
	if onMain(branch) {
		return tbl.NewTransaction(), nil
	}
	tx, err := tbl.NewTransactionOnBranchWithError(branch)
	if err != nil {
		return nil, refErr(ErrRefKind, "Cannot write to %s of %s: %v", branch, tbl.Identifier(), err)
	}
	return tx, nil
}
