package procedures

import (
	"context"
	"strings"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// The snapshot-management procedures move the table's main branch. Each is
// one metadata commit whose set-snapshot-ref update the metadata builder
// records in the snapshot log, so the history table shows the move and
// is_current_ancestor follows the new head.

var snapshotMoveOutput = []Column{
	{Name: "previous_snapshot_id", Kind: Int64},
	{Name: "current_snapshot_id", Kind: Int64},
}

// rollbackToSnapshot is Spark's rollback_to_snapshot(table, snapshot_id):
// the snapshot must be an ancestor of the current one.
func rollbackToSnapshot() *Procedure {
	p := &Procedure{
		Name: "rollback_to_snapshot",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "snapshot_id", Kind: Int64, Required: true},
		},
		Output: snapshotMoveOutput,
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		id, _ := args.Int64("snapshot_id")
		return moveMain(ctx, env, p, args.String("table"), func(tbl *table.Table) (int64, error) {
			if tbl.Metadata().SnapshotByID(id) == nil {
				return 0, argError(p, "argument 'snapshot_id': table %s has no snapshot %d", tableName(tbl), id)
			}
			if !isCurrentAncestor(tbl, id) {
				return 0, argError(p, "argument 'snapshot_id': snapshot %d is not an ancestor of the current snapshot of %s; use set_current_snapshot to move to any snapshot", id, tableName(tbl))
			}
			return id, nil
		})
	}
	return p
}

// rollbackToTimestamp is Spark's rollback_to_timestamp(table, timestamp):
// back to the newest ancestor of the current snapshot committed strictly
// before the timestamp, as Iceberg's rollbackToTime does.
func rollbackToTimestamp() *Procedure {
	p := &Procedure{
		Name: "rollback_to_timestamp",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "timestamp", Kind: Timestamp, Required: true},
		},
		Output: snapshotMoveOutput,
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		at, _ := args.Time("timestamp")
		return moveMain(ctx, env, p, args.String("table"), func(tbl *table.Table) (int64, error) {
			var best *table.Snapshot
			for _, s := range ancestry(tbl, currentID(tbl)) {
				if s.TimestampMs < at.UnixMilli() && (best == nil || s.TimestampMs > best.TimestampMs) {
					best = s
				}
			}
			if best == nil {
				return 0, argError(p, "argument 'timestamp': table %s has no snapshot older than %s", tableName(tbl), at.UTC().Format("2006-01-02 15:04:05.000")+" UTC")
			}
			return best.SnapshotID, nil
		})
	}
	return p
}

// setCurrentSnapshot is Spark's set_current_snapshot(table, snapshot_id |
// ref): any snapshot of the table, ancestor or not.
func setCurrentSnapshot() *Procedure {
	p := &Procedure{
		Name: "set_current_snapshot",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "snapshot_id", Kind: Int64},
			{Name: "ref", Kind: String},
		},
		Output: snapshotMoveOutput,
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		id, hasID := args.Int64("snapshot_id")
		ref, hasRef := args["ref"].(string)
		if hasID == hasRef {
			return nil, argError(p, "give either argument 'snapshot_id' or argument 'ref', not both and not neither")
		}
		return moveMain(ctx, env, p, args.String("table"), func(tbl *table.Table) (int64, error) {
			if hasRef {
				r, ok := refByName(tbl, ref)
				if !ok {
					return 0, argError(p, "argument 'ref': table %s has no branch or tag '%s'", tableName(tbl), ref)
				}
				return r.SnapshotID, nil
			}
			if tbl.Metadata().SnapshotByID(id) == nil {
				return 0, argError(p, "argument 'snapshot_id': table %s has no snapshot %d", tableName(tbl), id)
			}
			return id, nil
		})
	}
	return p
}

// refByName finds a branch or tag by its exact name, else ignoring case.
func refByName(tbl *table.Table, name string) (table.SnapshotRef, bool) {
	var folded *table.SnapshotRef
	for n, r := range tbl.Metadata().Refs() {
		if n == name {
			return r, true
		}
		if strings.EqualFold(n, name) && folded == nil {
			folded = &r
		}
	}
	if folded != nil {
		return *folded, true
	}
	return table.SnapshotRef{}, false
}

// moveMain points the main branch at the snapshot target picks from the
// newest metadata, keeping main's retention settings; target runs again
// if another writer commits first.
func moveMain(ctx context.Context, env Env, p *Procedure, name string, target func(*table.Table) (int64, error)) ([][]any, error) {
	ident, err := env.TableIdent("table", name)
	if err != nil {
		return nil, err
	}
	var prev any
	var to int64
	_, err = storage.CommitUpdates(ctx, env.Catalog, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
		id, err := target(tbl)
		if err != nil {
			return nil, nil, err
		}
		to, prev = id, nil
		var maxRef, maxSnap int64
		var minKeep int
		var cur *int64
		if r, ok := refByName(tbl, table.MainBranch); ok && r.SnapshotRefType == table.BranchRef {
			c := r.SnapshotID
			cur, prev = &c, c
			if r.MaxRefAgeMs != nil {
				maxRef = *r.MaxRefAgeMs
			}
			if r.MaxSnapshotAgeMs != nil {
				maxSnap = *r.MaxSnapshotAgeMs
			}
			if r.MinSnapshotsToKeep != nil {
				minKeep = *r.MinSnapshotsToKeep
			}
		}
		if cur != nil && *cur == id {
			return nil, nil, nil // already there: nothing to commit, nothing to log
		}
		reqs := []table.Requirement{table.AssertRefSnapshotID(table.MainBranch, cur)}
		upd := table.NewSetSnapshotRefUpdate(table.MainBranch, id, table.BranchRef, maxRef, maxSnap, minKeep)
		return reqs, []table.Update{upd}, nil
	})
	if err != nil {
		return nil, err
	}
	env.progress("CALL system.%s: %s main branch moved from %v to %d", p.Name, dotted(ident), prev, to)
	return [][]any{{prev, to}}, nil
}

// ancestorsOf is Spark's ancestors_of(table[, snapshot_id]): the snapshot
// and its ancestors, newest first, with their commit times in milliseconds.
func ancestorsOf() *Procedure {
	p := &Procedure{
		Name: "ancestors_of",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "snapshot_id", Kind: Int64},
		},
		Output: []Column{
			{Name: "snapshot_id", Kind: Int64},
			{Name: "timestamp", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		_, tbl, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		id, given := args.Int64("snapshot_id")
		if !given {
			id = currentID(tbl)
		} else if tbl.Metadata().SnapshotByID(id) == nil {
			return nil, argError(p, "argument 'snapshot_id': table %s has no snapshot %d", tableName(tbl), id)
		}
		var rows [][]any
		for _, s := range ancestry(tbl, id) {
			rows = append(rows, []any{s.SnapshotID, s.TimestampMs})
		}
		return rows, nil
	}
	return p
}

// currentID is the current snapshot's id, or -1 for a table without one.
func currentID(tbl *table.Table) int64 {
	if s := tbl.CurrentSnapshot(); s != nil {
		return s.SnapshotID
	}
	return -1
}

// ancestry lists the snapshot id and its ancestors still in the metadata,
// newest first.
func ancestry(tbl *table.Table, id int64) []*table.Snapshot {
	var out []*table.Snapshot
	meta := tbl.Metadata()
	for s := meta.SnapshotByID(id); s != nil; {
		out = append(out, s)
		if s.ParentSnapshotID == nil {
			break
		}
		s = meta.SnapshotByID(*s.ParentSnapshotID)
	}
	return out
}

func isCurrentAncestor(tbl *table.Table, id int64) bool {
	for _, s := range ancestry(tbl, currentID(tbl)) {
		if s.SnapshotID == id {
			return true
		}
	}
	return false
}

func tableName(tbl *table.Table) string { return dotted(tbl.Identifier()) }

// dotted writes a table identifier as db.table for messages.
func dotted(ident table.Identifier) string { return strings.Join(ident, ".") }

// msAgo is the instant d before now, for defaults such as "5 days ago".
func msAgo(d time.Duration) time.Time { return time.Now().Add(-d) }
