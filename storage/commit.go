package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

func newID() string { return uuid.NewString()[:8] }

// CommitTable applies updates to the table's newest metadata if the
// requirements hold, and publishes the result as the next
// v<N>.metadata.json with a create-if-absent write. Commits from this process
// queue per table; a commit that loses the race to another process, or whose
// requirements no longer hold, fails with table.ErrCommitFailed so the caller
// can reload and retry.
func (w *Warehouse) CommitTable(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	p, unlock, err := w.prepareCommit(ctx, ident, reqs, updates)
	if err != nil {
		return nil, "", err
	}
	defer unlock()
	written, err := w.publish(ctx, p)
	if err != nil {
		return nil, "", err
	}
	return w.served(written), p.next, nil
}

// preparedCommit is a commit validated against the table's newest metadata
// and applied to it, not yet published.
type preparedCommit struct {
	ident   table.Identifier
	link    link
	base    string // the metadata file the commit was validated against
	next    string // the metadata file publishing creates
	version int    // the Hadoop layout version of base (0 for a registered table)
	meta    table.Metadata
	updates []table.Update
}

// prepareCommit validates updates against the table's newest metadata and
// applies them, holding the table's commit lock, which unlock releases.
func (w *Warehouse) prepareCommit(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (p preparedCommit, unlock func(), err error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return p, nil, err
	}
	l, ok, err := w.lookup(ctx, ns, name)
	if err != nil {
		return p, nil, err
	}
	if !ok {
		return p, nil, fmt.Errorf("%w: %s.%s", catalog.ErrNoSuchTable, ns, name)
	}
	lock := w.lockFor(l.commitLockKey())
	lock.Lock()
	defer func() {
		if err != nil {
			lock.Unlock()
		}
	}()
	cur, err := w.loadLink(ctx, l)
	base, baseLoc, version := cur.meta, cur.file, cur.version
	if err != nil {
		return p, nil, fmt.Errorf("commit %s.%s: %w", ns, name, err)
	}
	for _, r := range reqs {
		if err := r.Validate(base); err != nil {
			return p, nil, fmt.Errorf("%w: %s.%s changed underneath: %v", table.ErrCommitFailed, ns, name, err)
		}
	}
	if err := staleSequence(base, updates); err != nil {
		return p, nil, fmt.Errorf("%w: %s.%s changed underneath: %v", table.ErrCommitFailed, ns, name, err)
	}
	updates = w.storedUpdates(updates)
	detachAddedSnapshots(updates)
	stampAfterParents(base, updates)
	updated, err := table.UpdateTableMetadata(share(base), updates, baseLoc)
	if err != nil {
		return p, nil, fmt.Errorf("commit %s.%s: %w", ns, name, err)
	}
	updated = share(updated)
	if updated.Location() != base.Location() {
		return p, nil, fmt.Errorf("commit %s.%s: a table's location cannot change", ns, name)
	}
	return preparedCommit{ident: table.Identifier{ns, name}, link: l, base: baseLoc, next: cur.next,
		version: version, meta: updated, updates: updates}, lock.Unlock, nil
}

// commitLockKey names the in-process lock of commits to the table a link
// leads to.
func (l link) commitLockKey() string { return l.Location + "#" + l.Metadata }

// publish creates the prepared commit's metadata file: the commit itself.
// It returns the metadata as written (see writeMetadata).
func (w *Warehouse) publish(ctx context.Context, p preparedCommit) (table.Metadata, error) {
	// The version hint names the new file once it exists, while the
	// file's name is made durable: the hint itself is never synced
	// (hint.go), and a reader that sees it finds the file.
	var hint func()
	if p.link.Metadata == "" {
		hint = func() { w.writeVersionHint(ctx, p.link.Location, p.version+1) }
	}
	written, err := w.writeMetadataThen(ctx, p.next, p.meta, hint)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: another writer committed %s of %s first", table.ErrCommitFailed, p.next, strings.Join(p.ident, "."))
		}
		return nil, fmt.Errorf("commit %s: %w", strings.Join(p.ident, "."), err)
	}
	if p.link.Metadata == "" {
		w.remember(ctx, p.link.Location, p.version+1, p.next, written)
	}
	return written, nil
}

// queueCommit takes the in-process queue of commits to table ident and
// returns its release. It is not the lock CommitTable takes, which it
// encloses.
func (w *Warehouse) queueCommit(ident table.Identifier) func() {
	l := w.lockFor("queue\x00" + strings.Join(ident, "."))
	l.Lock()
	return l.Unlock
}

// Retry limits for commits that lose a race. Appends never conflict with
// other changes, so they may retry until the budget runs out.
const (
	commitAttempts = 50
	commitBudget   = 2 * time.Minute
)

// ErrConflict is returned when a commit kept losing races until the retry
// budget ran out; the caller may retry the whole statement.
var ErrConflict = errors.New("commit conflict")

// AppendFiles commits already written data files to a table as one append
// snapshot. On a lost race it reloads the table and tries again: an append
// never conflicts with what others committed meanwhile.
//
// On the embedded warehouse, appends to one table from sessions of this
// process commit in groups (groupcommit.go).
func AppendFiles(ctx context.Context, cat catalog.Catalog, ident table.Identifier, files []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	if w, ok := cat.(*Warehouse); ok {
		return w.groupAppend(ctx, ident, files, summary)
	}
	return retryCommit(ctx, cat, ident, func() (*table.Table, error) {
		tbl, err := cat.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		tbl = mergingAppends(tbl, cat)
		tx := tbl.NewTransaction()
		if err := addOwnFiles(ctx, tbl.Metadata(), tx, files, summary); err != nil {
			return nil, err
		}
		return commitTx(ctx, tbl, tx)
	})
}

// addOwnFiles adds data files this process wrote to tx, with row ids on
// format-version 3 from meta (the metadata tx stages the append on). They
// have fresh UUID names and field ids, so neither the duplicate scan (which
// reads every manifest) nor a name mapping is needed.
func addOwnFiles(ctx context.Context, meta table.Metadata, tx *table.Transaction, files []iceberg.DataFile, summary iceberg.Properties) error {
	add, err := WithFirstRowIDs(meta, files)
	if err != nil {
		return err
	}
	return tx.AddDataFiles(ctx, add, summary, table.WithoutDuplicateCheck(), table.WithoutAutoNameMapping())
}

// retryCommit runs attempt until it succeeds, fails for a reason other than
// a lost race, or the retry budget is spent. Waits grow exponentially with
// jitter so racing writers spread out. Each attempt (reload, validate,
// stage, commit) holds the table's in-process commit queue when the catalog
// has one, so that sessions of this process never race each other: under
// contention each commit then validates and writes its manifests once,
// instead of once per lost race.
func retryCommit(ctx context.Context, cat catalog.Catalog, ident table.Identifier, attempt func() (*table.Table, error)) (*table.Table, error) {
	if q, ok := cat.(interface{ queueCommit(table.Identifier) func() }); ok {
		inner := attempt
		attempt = func() (*table.Table, error) {
			defer q.queueCommit(ident)()
			return inner()
		}
	}
	deadline := time.Now().Add(commitBudget)
	wait := 2 * time.Millisecond
	for i := 1; ; i++ {
		tbl, err := attempt()
		if err == nil || !errors.Is(err, table.ErrCommitFailed) {
			return tbl, err
		}
		if i >= commitAttempts || time.Now().After(deadline) {
			return nil, fmt.Errorf("%w after %d attempts: %v", ErrConflict, i, err)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait/2 + rand.N(wait/2+1)):
		}
		wait = min(2*wait, 500*time.Millisecond)
	}
}
