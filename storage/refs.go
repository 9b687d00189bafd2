package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// Branches and tags. iceberg-go v0.7.0 has no ManageSnapshots builder, so the
// ref changes Spark's DDL and procedures make are built here as raw
// set-snapshot-ref / remove-snapshot-ref updates, each guarded by a
// requirement on the ref's current snapshot so that a concurrent change to
// the same ref makes the commit retry from the newest metadata.

// Sentinel errors of ref changes; the error's text is the user's message.
var (
	// ErrRefExists: creating a branch or tag whose name is taken.
	ErrRefExists = errors.New("ref already exists")
	// ErrNoSuchRef: naming a branch or tag the table does not have.
	ErrNoSuchRef = errors.New("no such ref")
	// ErrRefKind: a tag named where a branch is wanted, or the reverse.
	ErrRefKind = errors.New("wrong kind of ref")
	// ErrRefChange: a change Iceberg does not allow (dropping main, an
	// unknown snapshot, a fast-forward that is not one, ...).
	ErrRefChange = errors.New("invalid ref change")
)

// refError is an error whose text is msg and which matches kind.
type refError struct {
	kind error
	msg  string
}

func (e *refError) Error() string { return e.msg }
func (e *refError) Unwrap() error { return e.kind }

func refErr(kind error, format string, args ...any) error {
	return &refError{kind: kind, msg: fmt.Sprintf(format, args...)}
}

// RefRetention is a ref's retention as Spark's DDL sets it. A nil field is
// not set (on a replace: kept as it was).
type RefRetention struct {
	MaxRefAgeMs        *int64
	MaxSnapshotAgeMs   *int64
	MinSnapshotsToKeep *int
}

// RefChange is ALTER TABLE ... CREATE [OR REPLACE] | REPLACE BRANCH|TAG.
type RefChange struct {
	Name        string
	Type        table.RefType // table.BranchRef or table.TagRef
	Create      bool          // CREATE (with Replace: CREATE OR REPLACE)
	Replace     bool
	IfNotExists bool
	// SnapshotID is AS OF VERSION; nil means the current snapshot.
	SnapshotID *int64
	Retention  RefRetention
}

// refKind names a ref type the way Spark's messages do.
func refKind(t table.RefType) string {
	if t == table.TagRef {
		return "Tag"
	}
	return "Branch"
}

func lowerKind(t table.RefType) string {
	if t == table.TagRef {
		return "tag"
	}
	return "branch"
}

// RefNamed returns the ref called name, if the table has it.
func RefNamed(meta table.Metadata, name string) (table.SnapshotRef, bool) {
	for n, r := range meta.Refs() {
		if n == name {
			return r, true
		}
	}
	return table.SnapshotRef{}, false
}

// UpdateRefs commits the ref updates change computes from the table's
// newest metadata, retrying from a reload when another writer commits first.
// A change returning no updates commits nothing.
func UpdateRefs(ctx context.Context, cat catalog.Catalog, ident table.Identifier,
	change func(*table.Table) ([]table.Requirement, []table.Update, error)) (*table.Table, error) {
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		reqs, updates, err := change(tbl)
		if err != nil || len(updates) == 0 {
			return tbl, err
		}
		reqs = append(reqs, table.AssertTableUUID(tbl.Metadata().TableUUID()))
		meta, loc, err := cat.CommitTable(ctx, ident, reqs, updates)
		if err != nil {
			return nil, err
		}
		return table.New(ident, meta, loc, tbl.FS, nil), nil
	})
}

// setRef is the update that points name at id with the given retention, and
// the requirement that name still points where it did (nil: is absent).
func setRef(name string, id int64, typ table.RefType, r RefRetention, was *int64) ([]table.Requirement, []table.Update) {
	var maxRef, maxSnap int64
	var minKeep int
	if r.MaxRefAgeMs != nil {
		maxRef = *r.MaxRefAgeMs
	}
	if r.MaxSnapshotAgeMs != nil {
		maxSnap = *r.MaxSnapshotAgeMs
	}
	if r.MinSnapshotsToKeep != nil {
		minKeep = *r.MinSnapshotsToKeep
	}
	return []table.Requirement{table.AssertRefSnapshotID(name, was)},
		[]table.Update{table.NewSetSnapshotRefUpdate(name, id, typ, maxRef, maxSnap, minKeep)}
}

// merged is old's retention with the values r sets replacing old ones.
func (r RefRetention) merged(old table.SnapshotRef) RefRetention {
	out := RefRetention{MaxRefAgeMs: old.MaxRefAgeMs, MaxSnapshotAgeMs: old.MaxSnapshotAgeMs, MinSnapshotsToKeep: old.MinSnapshotsToKeep}
	if r.MaxRefAgeMs != nil {
		out.MaxRefAgeMs = r.MaxRefAgeMs
	}
	if r.MaxSnapshotAgeMs != nil {
		out.MaxSnapshotAgeMs = r.MaxSnapshotAgeMs
	}
	if r.MinSnapshotsToKeep != nil {
		out.MinSnapshotsToKeep = r.MinSnapshotsToKeep
	}
	return out
}

// ChangeRef runs CREATE [OR REPLACE] / REPLACE BRANCH|TAG as Spark does:
// the ref points at c.SnapshotID, else at the current snapshot; a branch
// created on a table without snapshots gets an empty snapshot of its own;
// REPLACE keeps the retention it does not set.
func ChangeRef(ctx context.Context, cat catalog.Catalog, ident table.Identifier, c RefChange) error {
	name := ident[len(ident)-1]
	_, err := UpdateRefs(ctx, cat, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		meta := tbl.Metadata()
		var target *int64
		if c.SnapshotID != nil {
			if meta.SnapshotByID(*c.SnapshotID) == nil {
				return nil, nil, refErr(ErrRefChange, "Cannot set %s to unknown snapshot: %d", c.Name, *c.SnapshotID)
			}
			target = c.SnapshotID
		} else if cur := meta.CurrentSnapshot(); cur != nil {
			target = &cur.SnapshotID
		}
		old, exists := RefNamed(meta, c.Name)
		replace := c.Replace && (exists || !c.Create)
		switch {
		case replace && target == nil:
			return nil, nil, refErr(ErrRefChange, "Cannot complete replace %s operation on %s, main has no snapshot", lowerKind(c.Type), name)
		case replace && !exists:
			return nil, nil, refErr(ErrNoSuchRef, "%s does not exist: %s", refKind(c.Type), c.Name)
		case replace && old.SnapshotRefType != c.Type:
			return nil, nil, refErr(ErrRefKind, "Ref %s is a %s not a %s", c.Name, lowerKind(old.SnapshotRefType), lowerKind(c.Type))
		case replace:
			reqs, ups := setRef(c.Name, *target, c.Type, c.Retention.merged(old), &old.SnapshotID)
			return reqs, ups, nil
		case exists && c.IfNotExists:
			return nil, nil, nil
		case exists:
			return nil, nil, refErr(ErrRefExists, "Ref %s already exists", c.Name)
		case target == nil && c.Type == table.TagRef:
			return nil, nil, refErr(ErrRefChange, "Cannot complete create or replace tag operation on %s, main has no snapshot", name)
		case target == nil:
			return emptyBranch(ctx, tbl, c.Name, c.Retention)
		}
		reqs, ups := setRef(c.Name, *target, c.Type, c.Retention, nil)
		return reqs, ups, nil
	})
	return err
}

// emptyBranch is the commit that creates branch name on a table without
// snapshots: an append of nothing on that branch (as Java's createBranch
// does), with the ref's retention set.
func emptyBranch(ctx context.Context, tbl *table.Table, name string, r RefRetention) ([]table.Requirement, []table.Update, error) {
	tx, err := tbl.NewTransactionOnBranchWithError(name)
	if err != nil {
		return nil, nil, err
	}
	rr, err := emptyRecords(tbl)
	if err != nil {
		return nil, nil, err
	}
	defer rr.Release()
	if err := tx.Append(ctx, rr, nil); err != nil {
		return nil, nil, fmt.Errorf("create branch %s: %w", name, err)
	}
	staged, err := tx.StagedTable()
	if err != nil {
		return nil, nil, err
	}
	snap := staged.Metadata().SnapshotByName(name)
	if snap == nil {
		return nil, nil, fmt.Errorf("create branch %s: the empty snapshot was not staged", name)
	}
	tc, err := tx.TableCommit()
	if err != nil {
		return nil, nil, err
	}
	reqs, ref := setRef(name, snap.SnapshotID, table.BranchRef, r, nil)
	return append(tc.Requirements, reqs...), append(withoutRefUpdates(tc.Updates), ref...), nil
}

// withoutRefUpdates drops the set-snapshot-ref updates of a transaction's
// commit, keeping the snapshots it adds.
func withoutRefUpdates(updates []table.Update) []table.Update {
	out := make([]table.Update, 0, len(updates))
	for _, u := range updates {
		if u.Action() != table.UpdateSetSnapshotRef {
			out = append(out, u)
		}
	}
	return out
}

// DropRef runs DROP BRANCH|TAG [IF EXISTS].
func DropRef(ctx context.Context, cat catalog.Catalog, ident table.Identifier, name string, typ table.RefType, ifExists bool) error {
	if typ == table.BranchRef && name == table.MainBranch {
		return refErr(ErrRefChange, "Cannot remove main branch")
	}
	_, err := UpdateRefs(ctx, cat, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		old, ok := RefNamed(tbl.Metadata(), name)
		switch {
		case !ok && ifExists:
			return nil, nil, nil
		case !ok:
			return nil, nil, refErr(ErrNoSuchRef, "%s does not exist: %s", refKind(typ), name)
		case old.SnapshotRefType != typ:
			return nil, nil, refErr(ErrRefKind, "Ref %s is a %s not a %s", name, lowerKind(old.SnapshotRefType), lowerKind(typ))
		}
		return []table.Requirement{table.AssertRefSnapshotID(name, &old.SnapshotID)},
			[]table.Update{table.NewRemoveSnapshotRefUpdate(name)}, nil
	})
	return err
}

// IsAncestor reports whether snapshot ancestor is id or one of its parents.
func IsAncestor(meta table.Metadata, ancestor, id int64) bool {
	for snap := meta.SnapshotByID(id); snap != nil; {
		if snap.SnapshotID == ancestor {
			return true
		}
		if snap.ParentSnapshotID == nil {
			return false
		}
		snap = meta.SnapshotByID(*snap.ParentSnapshotID)
	}
	return false
}

// FastForward moves branch to the snapshot of ref to, which must descend
// from the branch's snapshot; a branch that does not exist yet is created
// there (as Spark's fast_forward does). It returns the branch's snapshot
// before (nil when it did not exist) and after.
func FastForward(ctx context.Context, cat catalog.Catalog, ident table.Identifier, branch, to string) (*int64, int64, error) {
	var before *int64
	var after int64
	_, err := UpdateRefs(ctx, cat, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		meta := tbl.Metadata()
		target, ok := RefNamed(meta, to)
		if !ok {
			return nil, nil, refErr(ErrNoSuchRef, "Ref does not exist: %s", to)
		}
		before, after = nil, target.SnapshotID
		old, exists := RefNamed(meta, branch)
		if !exists {
			reqs, ups := setRef(branch, target.SnapshotID, table.BranchRef, RefRetention{}, nil)
			return reqs, ups, nil
		}
		if old.SnapshotRefType != table.BranchRef {
			return nil, nil, refErr(ErrRefKind, "Ref %s is a tag not a branch", branch)
		}
		id := old.SnapshotID
		before = &id
		if old.SnapshotID == target.SnapshotID {
			return nil, nil, nil
		}
		if !IsAncestor(meta, old.SnapshotID, target.SnapshotID) {
			return nil, nil, refErr(ErrRefChange, "Cannot fast-forward: %s is not an ancestor of %s", branch, to)
		}
		reqs, ups := setRef(branch, target.SnapshotID, table.BranchRef, RefRetention{}.merged(old), &id)
		return reqs, ups, nil
	})
	if err != nil {
		return nil, 0, err
	}
	return before, after, nil
}
