package storage

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Appends to one table from many sessions of this process used to commit
// one after another, each writing the whole metadata file (which holds the
// table's history) and waiting for its syncs. Group commit lets the
// appends that arrive while a commit is under way ride on the next one
// together: one metadata file, one set of syncs, for up to maxGroup
// statements.
//
// Each statement stays its own append snapshot, the group's snapshots a
// linear chain in arrival order, each with its own summary: snapshots,
// history and table_changes tell the statements apart with no special
// field, and every snapshot is one a lone append would have made. An
// append that fails while its snapshot is staged (bad files) fails alone:
// the group is staged again without it. A commit that loses a race with
// another process is retried for the whole group, as a lone append is.
//
// The first append to find no group committing leads: it commits the
// appends queued so far (its own first), hands the lead to the next one
// waiting, if any, and returns. A statement waits at most for the group
// ahead of it and its own.

// maxGroup bounds the statements committed in one metadata file.
const maxGroup = 64

// appendGroups holds, per table, the appends waiting to commit.
type appendGroups struct {
	mu     sync.Mutex
	tables map[string]*appendQueue
}

type appendQueue struct {
	waiting []*groupedAppend
	leading bool // an append of this table is committing a group
}

// groupedAppend is one statement's append and its outcome.
type groupedAppend struct {
	files   []iceberg.DataFile
	summary iceberg.Properties
	// turn receives true when this append is to lead the next group, and
	// false when it has been committed (or has failed) in another's.
	turn chan bool
	tbl  *table.Table
	err  error
}

// groupAppend commits files to table ident as one append snapshot, in a
// group with the other appends to the table that are waiting.
func (w *Warehouse) groupAppend(ctx context.Context, ident table.Identifier, files []iceberg.DataFile, summary iceberg.Properties) (*table.Table, error) {
	me := &groupedAppend{files: files, summary: summary, turn: make(chan bool, 1)}
	key := strings.Join(ident, ".")
	g := &w.appends
	g.mu.Lock()
	if g.tables == nil {
		g.tables = map[string]*appendQueue{}
	}
	q := g.tables[key]
	if q == nil {
		q = &appendQueue{}
		g.tables[key] = q
	}
	q.waiting = append(q.waiting, me)
	lead := !q.leading
	q.leading = true
	g.mu.Unlock()
	if !lead && !<-me.turn {
		return me.tbl, me.err
	}

	// Leading: commit the appends waiting, this one first among them.
	g.mu.Lock()
	n := min(len(q.waiting), maxGroup)
	group := slices.Clone(q.waiting[:n])
	q.waiting = q.waiting[n:]
	g.mu.Unlock()
	// The lead passes on and the others learn their outcome even should
	// the commit panic: no statement waits for a group that ended.
	defer w.endGroup(q, key, group)
	// The group carries others' statements: this one's cancellation must
	// not fail theirs.
	w.commitGroup(context.WithoutCancel(ctx), ident, group)
	return me.tbl, me.err
}

// endGroup hands the lead of table key's appends to the first one waiting,
// if any, and wakes the group's other appends to return their outcome.
func (w *Warehouse) endGroup(q *appendQueue, key string, group []*groupedAppend) {
	g := &w.appends
	g.mu.Lock()
	if len(q.waiting) > 0 {
		q.waiting[0].turn <- true
	} else {
		q.leading = false
		delete(g.tables, key)
	}
	g.mu.Unlock()
	for _, a := range group[1:] {
		if a.tbl == nil && a.err == nil {
			a.err = errGroupEnded
		}
		a.turn <- false
	}
}

// errGroupEnded is the outcome of an append whose group's commit ended
// without one (it panicked): whether it committed is unknown.
var errGroupEnded = errors.New("the group commit this append was part of ended abnormally; the statement may or may not have committed")

// badAppend is the failure of the append at index i of a group while
// staging it; the others may still commit.
type badAppend struct {
	i   int
	err error
}

func (b *badAppend) Error() string { return b.err.Error() }
func (b *badAppend) Unwrap() error { return b.err }

// commitGroup commits the appends of group as a chain of append snapshots
// in one metadata file, and sets each one's outcome.
func (w *Warehouse) commitGroup(ctx context.Context, ident table.Identifier, group []*groupedAppend) {
	live := group
	for len(live) > 0 {
		tbl, err := retryCommit(ctx, w, ident, func() (*table.Table, error) {
			if tbl, err := w.fastAppendGroup(ctx, ident, live); !errors.Is(err, errNotFast) {
				return tbl, err // fastappend.go
			}
			tbl, err := w.LoadTable(ctx, ident)
			if err != nil {
				return nil, err
			}
			tbl = mergingAppends(tbl, w)
			tx := tbl.NewTransaction()
			meta := tbl.Metadata()
			for i, a := range live {
				if i > 0 && meta.Version() >= 3 {
					// Row ids continue from the snapshot staged before.
					staged, err := tx.StagedTable()
					if err != nil {
						return nil, err
					}
					meta = staged.Metadata()
				}
				if err := addOwnFiles(ctx, meta, tx, a.files, a.summary); err != nil {
					return nil, &badAppend{i: i, err: err}
				}
			}
			return commitTx(ctx, tbl, tx)
		})
		var bad *badAppend
		if errors.As(err, &bad) && len(live) > 1 {
			live[bad.i].err = bad.err
			live = slices.Delete(slices.Clone(live), bad.i, bad.i+1)
			continue
		}
		if bad != nil {
			err = bad.err
		}
		for _, a := range live {
			a.tbl, a.err = tbl, err
		}
		return
	}
}
