package storage

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// A transaction that wrote several tables of the embedded warehouse
// commits them all or none, in two phases. First every table's commit is
// prepared through a Deferred: validated, its manifests written and its new
// metadata computed, but not published. Then Publish takes the in-process
// commit locks of all the tables, checks that none changed since its commit
// was prepared, and only then creates their new metadata files. Commits of
// this process cannot come between the check and the creations.
//
// Another process committing to the same warehouse can: each metadata file
// is created if absent, so a commit of another process that lands after the
// check makes the creation fail. Publish then deletes the metadata files it
// had already created (the previous versions are current again) and deletes
// what the attempt wrote; the caller gets a conflict and nothing of the
// transaction stays. Until that roll-back, which follows at once, a reader in
// another process may see the first tables' new versions. Should another
// process already have committed on top of one of them, that table's commit
// cannot be withdrawn without losing the other's: it stays, and the error
// names it.

// ErrChangedBeforePublish is what Publish reports (with table.ErrCommitFailed)
// when a table changed after its commit was prepared and nothing was
// published: the caller may prepare the commits again.
var ErrChangedBeforePublish = errors.New("a table changed while the transaction committed")

// Deferred is the embedded warehouse with its table commits held back until
// Publish. Tables it loads commit through it. It is for one transaction's
// commit at a time, not for concurrent use.
type Deferred struct {
	*Warehouse
	pending []preparedCommit
	// clientFiles says the commits' manifests are a client's (the REST
	// catalog's transactions): a client may commit them again after a
	// conflict, so a withdrawn commit leaves them in place.
	clientFiles bool
}

// Deferred returns a view of the warehouse whose commits wait for Publish.
func (w *Warehouse) Deferred() *Deferred { return &Deferred{Warehouse: w} }

// DeferredClientCommits is Deferred for commits whose files a client wrote
// and may commit again: what they wrote is never deleted.
func (w *Warehouse) DeferredClientCommits() *Deferred {
	return &Deferred{Warehouse: w, clientFiles: true}
}

// discardPrepared deletes what a held-back commit wrote, unless a client
// wrote it.
func (d *Deferred) discardPrepared(ctx context.Context, p preparedCommit) {
	if !d.clientFiles {
		d.Warehouse.discardPrepared(ctx, p)
	}
}

// LoadTable loads the table bound to d, so that its commits are held back.
// A table with a commit waiting in d is loaded as that commit leaves it (a
// transaction commits a table's main branch and its other branches one
// after another).
func (d *Deferred) LoadTable(ctx context.Context, ident table.Identifier) (*table.Table, error) {
	tbl, err := d.Warehouse.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	if p := d.waiting(ident); p != nil {
		return table.New(tbl.Identifier(), p.meta, p.base, tbl.FS, d), nil
	}
	return table.New(tbl.Identifier(), tbl.Metadata(), tbl.MetadataLocation(), tbl.FS, d), nil
}

// waiting is the commit waiting in d for the table ident, or nil.
func (d *Deferred) waiting(ident table.Identifier) *preparedCommit {
	for i, p := range d.pending {
		if len(ident) == 2 && p.ident[0] == ident[0] && p.ident[1] == ident[1] {
			return &d.pending[i]
		}
	}
	return nil
}

// CommitTable prepares the commit and holds it back: the table's newest
// metadata is not changed until Publish. A table with a commit waiting
// has the updates applied on top of it: Publish creates one metadata file
// per table.
func (d *Deferred) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if p := d.waiting(ident); p != nil {
		name := strings.Join(p.ident, ".")
		for _, r := range reqs {
			if err := r.Validate(p.meta); err != nil {
				return nil, "", fmt.Errorf("%w: %s changed underneath: %v", table.ErrCommitFailed, name, err)
			}
		}
		if err := staleSequence(p.meta, updates); err != nil {
			return nil, "", fmt.Errorf("%w: %s changed underneath: %v", table.ErrCommitFailed, name, err)
		}
		updates = d.storedUpdates(updates)
		detachAddedSnapshots(updates)
		// No metadata log entry: the waiting metadata is never a file.
		updated, err := table.UpdateTableMetadata(share(p.meta), updates, "")
		if err != nil {
			return nil, "", fmt.Errorf("commit %s: %w", name, err)
		}
		p.meta = share(updated)
		p.updates = append(p.updates, updates...)
		return d.served(p.meta), p.next, nil
	}
	p, unlock, err := d.prepareCommit(ctx, ident, reqs, updates)
	if err != nil {
		return nil, "", err
	}
	unlock()
	d.pending = append(d.pending, p)
	return d.served(p.meta), p.next, nil
}

// Discard drops the held-back commits and deletes what they wrote.
func (d *Deferred) Discard(ctx context.Context) {
	for _, p := range d.pending {
		d.discardPrepared(ctx, p)
	}
	d.pending = nil
}

func (w *Warehouse) discardPrepared(ctx context.Context, p preparedCommit) {
	discardAttempt(ctx, w.newTable(p.ident, p.meta, p.next), p.updates, manifestLists(p.updates))
}

// Publish creates the new metadata files of every held-back commit, or
// none (see the comment at the top of this file for what another process
// can see). When a table changed since its commit was prepared, nothing is
// published and the error matches ErrChangedBeforePublish and
// table.ErrCommitFailed; the held-back commits are discarded either way.
func (d *Deferred) Publish(ctx context.Context) error {
	ps := slices.Clone(d.pending)
	d.pending = nil
	slices.SortFunc(ps, func(a, b preparedCommit) int {
		return cmp.Compare(strings.Join(a.ident, "."), strings.Join(b.ident, "."))
	})
	// The queue of each table, then its commit lock, all in one order: a
	// single-table commit takes its table's queue, then its lock.
	var locked []func()
	defer func() {
		for _, unlock := range slices.Backward(locked) {
			unlock()
		}
	}()
	for _, p := range ps {
		locked = append(locked, d.queueCommit(p.ident))
	}
	for _, p := range ps {
		l := d.lockFor(p.link.commitLockKey())
		l.Lock()
		locked = append(locked, l.Unlock)
	}
	discard := func(ps []preparedCommit) {
		for _, p := range ps {
			d.discardPrepared(ctx, p)
		}
	}
	for _, p := range ps {
		if err := d.unchanged(ctx, p); err != nil {
			discard(ps)
			return err
		}
	}
	for i, p := range ps {
		_, err := d.publish(ctx, p)
		if err == nil {
			continue
		}
		var kept []string
		for _, q := range slices.Backward(ps[:i]) {
			if !d.withdraw(ctx, q) {
				kept = append(kept, strings.Join(q.ident, "."))
				continue
			}
			d.discardPrepared(ctx, q)
		}
		discard(ps[i:])
		if len(kept) > 0 {
			slices.Sort(kept)
			return fmt.Errorf("%w (%s stayed committed: another process committed on top of it before it could be withdrawn)", err, strings.Join(kept, ", "))
		}
		if errors.Is(err, table.ErrCommitFailed) {
			return fmt.Errorf("%w: %w", ErrChangedBeforePublish, err)
		}
		return err
	}
	return nil
}

// unchanged checks that p's table still is what its commit was prepared
// on: the same folder, the same newest metadata file.
func (d *Deferred) unchanged(ctx context.Context, p preparedCommit) error {
	name := strings.Join(p.ident, ".")
	l, ok, err := d.lookup(ctx, p.ident[0], p.ident[1])
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	if !ok || l != p.link {
		return fmt.Errorf("%w: %w: %s was dropped or replaced", ErrChangedBeforePublish, table.ErrCommitFailed, name)
	}
	cur, err := d.loadLink(ctx, l)
	if err != nil {
		return fmt.Errorf("commit %s: %w", name, err)
	}
	if cur.file != p.base {
		return fmt.Errorf("%w: %w: %s has a newer commit (%s)", ErrChangedBeforePublish, table.ErrCommitFailed, name, cur.file)
	}
	return nil
}

// withdraw deletes the metadata file p published, so that the version
// before it is current again, unless a commit was made on top of it; it
// says whether p is withdrawn.
func (d *Deferred) withdraw(ctx context.Context, p preparedCommit) bool {
	if cur, err := d.loadLink(ctx, p.link); err != nil || cur.file != p.next {
		return false
	}
	if err := d.store.Remove(ctx, p.next); err != nil {
		return false
	}
	d.metas.forget(p.link.Location)
	if cur, err := d.loadLink(ctx, p.link); err != nil || cur.file != p.base {
		// Another process committed on top between the check and the
		// removal: put the file back, or its commit would lose its parent.
		if _, err := d.writeMetadata(ctx, p.next, p.meta); err != nil && !errors.Is(err, fs.ErrExist) {
			return false
		}
		d.metas.forget(p.link.Location)
		return false
	}
	if p.link.Metadata == "" {
		d.writeVersionHint(ctx, p.link.Location, p.version)
	}
	return true
}
