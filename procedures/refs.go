package procedures

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// The procedures of branches and write-audit-publish: fast_forward,
// cherrypick_snapshot and publish_changes, with Spark's parameters and
// output columns. The ref changes themselves are storage's.

// refFailure marks the refusals of a ref change (an unknown ref or
// snapshot, a fast-forward that is not one, a WAP id published twice) as
// argument errors of procedure p, so they reach the client as 1210.
func refFailure(p string, err error) error {
	for _, kind := range []error{storage.ErrNoSuchRef, storage.ErrRefKind, storage.ErrRefChange, storage.ErrRefExists} {
		if errors.Is(err, kind) {
			return fmt.Errorf("%w: procedure system.%s: %w", ErrArgument, p, err)
		}
	}
	return err
}

// loadTable loads the table a procedure's table argument names.
func loadTable(ctx context.Context, env Env, args Args) (table.Identifier, *table.Table, error) {
	ident, err := env.TableIdent("table", args.String("table"))
	if err != nil {
		return nil, nil, err
	}
	tbl, err := env.Catalog.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil, fmt.Errorf("%w: table %s", catalog.ErrNoSuchTable, args.String("table"))
	}
	return ident, tbl, err
}

// fastForward is Spark's fast_forward(table, branch, to): branch moves to
// the snapshot of ref to, which must descend from it; a branch that does not
// exist is created there.
func fastForward() *Procedure {
	p := &Procedure{
		Name: "fast_forward",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "branch", Kind: String, Required: true},
			{Name: "to", Kind: String, Required: true},
		},
		Output: []Column{
			{Name: "branch_updated", Kind: String},
			{Name: "previous_ref", Kind: Int64},
			{Name: "updated_ref", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, _, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		branch := args.String("branch")
		before, after, err := storage.FastForward(ctx, env.Catalog, ident, branch, args.String("to"))
		if err != nil {
			return nil, refFailure(p.Name, err)
		}
		var prev any
		if before != nil {
			prev = *before
		}
		return [][]any{{branch, prev, after}}, nil
	}
	return p
}

// cherrypickSnapshot is Spark's cherrypick_snapshot(table, snapshot_id).
func cherrypickSnapshot() *Procedure {
	p := &Procedure{
		Name: "cherrypick_snapshot",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "snapshot_id", Kind: Int64, Required: true},
		},
		Output: pickOutput,
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, _, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		id, _ := args.Int64("snapshot_id")
		return pick(ctx, env, p.Name, ident, id)
	}
	return p
}

// publishChanges is Spark's publish_changes(table, wap_id): the cherry-pick
// of the snapshot a write with that WAP id staged.
func publishChanges() *Procedure {
	p := &Procedure{
		Name: "publish_changes",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "wap_id", Kind: String, Required: true},
		},
		Output: pickOutput,
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, tbl, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		wapID := args.String("wap_id")
		for _, snap := range tbl.Metadata().Snapshots() {
			if snap.Summary != nil && snap.Summary.Properties[storage.WapIDProperty] == wapID {
				return pick(ctx, env, p.Name, ident, snap.SnapshotID)
			}
		}
		return nil, fmt.Errorf("%w: procedure system.%s: Cannot apply unknown WAP ID '%s'", ErrArgument, p.Name, wapID)
	}
	return p
}

var pickOutput = []Column{
	{Name: "source_snapshot_id", Kind: Int64},
	{Name: "current_snapshot_id", Kind: Int64},
}

func pick(ctx context.Context, env Env, proc string, ident table.Identifier, id int64) ([][]any, error) {
	cur, err := storage.Cherrypick(ctx, env.Catalog, ident, id, nil)
	if err != nil {
		return nil, refFailure(proc, err)
	}
	return [][]any{{id, cur}}, nil
}
