package procedures

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"golang.org/x/sync/errgroup"

	"github.com/icesql/icesql/storage"
)

// expireSnapshots is Spark's expire_snapshots. The snapshots to remove are
// chosen by iceberg-go's retention rules (older_than, retain_last, the
// refs' and table's history.expire.* properties) plus any snapshot_ids;
// after the commit, the files only removed snapshots reached are deleted
// and counted by kind.
func expireSnapshots() *Procedure {
	p := &Procedure{
		Name: "expire_snapshots",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "older_than", Kind: Timestamp},
			{Name: "retain_last", Kind: Int64},
			{Name: "max_concurrent_deletes", Kind: Int64},
			{Name: "stream_results", Kind: Bool},
			{Name: "snapshot_ids", Kind: Int64List},
			{Name: "clean_expired_metadata", Kind: Bool, Default: false},
		},
		Output: []Column{
			{Name: "deleted_data_files_count", Kind: Int64},
			{Name: "deleted_position_delete_files_count", Kind: Int64},
			{Name: "deleted_equality_delete_files_count", Kind: Int64},
			{Name: "deleted_manifest_files_count", Kind: Int64},
			{Name: "deleted_manifest_lists_count", Kind: Int64},
			{Name: "deleted_statistics_files_count", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, err := env.TableIdent("table", args.String("table"))
		if err != nil {
			return nil, err
		}
		var opts []table.ExpireSnapshotsOpt
		if t, ok := args.Time("older_than"); ok {
			opts = append(opts, table.WithOlderThan(max(time.Since(t), 0)))
		}
		if n, ok := args.Int64("retain_last"); ok {
			if n < 1 {
				return nil, argError(p, "argument 'retain_last' must be at least 1, got %d", n)
			}
			opts = append(opts, table.WithRetainLast(int(n)))
		}
		workers := 1
		if n, ok := args.Int64("max_concurrent_deletes"); ok {
			if n < 1 {
				return nil, argError(p, "argument 'max_concurrent_deletes' must be at least 1, got %d", n)
			}
			workers = int(min(n, 64))
		}
		explicit := args.Int64List("snapshot_ids")
		clean := args.Bool("clean_expired_metadata")

		tbl, err := env.Catalog.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		// Only files in the table's own folder are ever deleted; a table
		// without one is refused before anything is committed.
		home, err := storage.TableRoot(tbl)
		if err != nil {
			return nil, fmt.Errorf("expire_snapshots %s: %w", dotted(ident), err)
		}
		var before *table.Table
		after, err := storage.CommitUpdates(ctx, env.Catalog, ident, func(tbl *table.Table) ([]table.Requirement, []table.Update, error) {
			before = tbl
			return planExpiry(p, tbl, opts, explicit, clean)
		})
		if err != nil {
			return nil, err
		}
		removed := removedSnapshots(before, after)
		env.progress("CALL system.expire_snapshots: %s: %d snapshots expired; deleting the files only they reached", dotted(ident), len(removed))
		// The snapshots are expired from here on, whatever happens to their
		// files: a failure to delete them is a warning on a statement that
		// succeeded, never an error on one that changed the table.
		counts, left, err := deleteExpiredFiles(ctx, before, after, removed, home, workers)
		if err != nil {
			env.warn("expire_snapshots %s: the snapshots are expired, but deleting their files failed (remove_orphan_files deletes what is left): %v", dotted(ident), err)
		}
		if len(left) > 0 {
			env.warn("expire_snapshots %s: %d files outside the table's folder %s were left in place (files added from elsewhere belong to whoever wrote them): %s", dotted(ident), len(left), home, strings.Join(left, ", "))
		}
		env.progress("CALL system.expire_snapshots: %s: deleted %d data, %d position delete, %d equality delete, %d manifest, %d manifest list and %d statistics files",
			dotted(ident), counts.data, counts.posDeletes, counts.eqDeletes, counts.manifests, counts.manifestLists, counts.statistics)
		return [][]any{{counts.data, counts.posDeletes, counts.eqDeletes, counts.manifests, counts.manifestLists, counts.statistics}}, nil
	}
	return p
}

// planExpiry stages iceberg-go's expiry on tbl and adds the explicitly named
// snapshots, which Iceberg removes whatever their age unless a branch or
// tag still points at them.
func planExpiry(p *Procedure, tbl *table.Table, opts []table.ExpireSnapshotsOpt, explicit []int64, clean bool) ([]table.Requirement, []table.Update, error) {
	tx := tbl.NewTransaction()
	if err := tx.ExpireSnapshots(append(opts, table.WithPostCommit(false))...); err != nil {
		if errors.Is(err, iceberg.ErrInvalidArgument) {
			return nil, nil, argError(p, "%v", err)
		}
		return nil, nil, fmt.Errorf("expire snapshots of %s: %w", tableName(tbl), err)
	}
	tc, err := tx.TableCommit()
	if err != nil {
		return nil, nil, fmt.Errorf("expire snapshots of %s: %w", tableName(tbl), err)
	}
	reqs, updates := tc.Requirements, tc.Updates
	meta := tbl.Metadata()
	next, err := table.UpdateTableMetadata(meta, updates, tbl.MetadataLocation())
	if err != nil {
		return nil, nil, fmt.Errorf("expire snapshots of %s: %w", tableName(tbl), err)
	}
	var extra []int64
	for _, id := range explicit {
		if meta.SnapshotByID(id) == nil {
			return nil, nil, argError(p, "argument 'snapshot_ids': table %s has no snapshot %d", tableName(tbl), id)
		}
		for name, r := range next.Refs() {
			if r.SnapshotID == id {
				return nil, nil, argError(p, "argument 'snapshot_ids': snapshot %d cannot be expired: the %s '%s' points at it", id, r.SnapshotRefType, name)
			}
		}
		if next.SnapshotByID(id) != nil {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		updates = append(updates, table.NewRemoveSnapshotsUpdate(extra, false))
		if next, err = table.UpdateTableMetadata(meta, updates, tbl.MetadataLocation()); err != nil {
			return nil, nil, fmt.Errorf("expire snapshots of %s: %w", tableName(tbl), err)
		}
	}
	if clean {
		more, err := unusedSpecsAndSchemas(tbl, next)
		if err != nil {
			return nil, nil, err
		}
		updates = append(updates, more...)
	}
	return reqs, updates, nil
}

// unusedSpecsAndSchemas removes the partition specs and schemas that
// neither the table's defaults nor any remaining snapshot use
// (clean_expired_metadata).
func unusedSpecsAndSchemas(tbl *table.Table, next table.Metadata) ([]table.Update, error) {
	fsys, err := tbl.FS(context.Background())
	if err != nil {
		return nil, err
	}
	usedSpecs := map[int]bool{next.DefaultPartitionSpec(): true}
	usedSchemas := map[int]bool{next.CurrentSchema().ID: true}
	for _, s := range next.Snapshots() {
		if s.SchemaID != nil {
			usedSchemas[*s.SchemaID] = true
		}
		mans, err := s.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("read manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			usedSpecs[int(m.PartitionSpecID())] = true
		}
	}
	var specs, schemas []int
	for _, sp := range next.PartitionSpecs() {
		if !usedSpecs[sp.ID()] {
			specs = append(specs, sp.ID())
		}
	}
	for _, sc := range next.Schemas() {
		if !usedSchemas[sc.ID] {
			schemas = append(schemas, sc.ID)
		}
	}
	var out []table.Update
	if len(specs) > 0 {
		out = append(out, table.NewRemoveSpecUpdate(specs))
	}
	if len(schemas) > 0 {
		out = append(out, table.NewRemoveSchemasUpdate(schemas))
	}
	return out, nil
}

// removedSnapshots lists the snapshots of before that after no longer has.
func removedSnapshots(before, after *table.Table) []table.Snapshot {
	var out []table.Snapshot
	for _, s := range before.Metadata().Snapshots() {
		if after.Metadata().SnapshotByID(s.SnapshotID) == nil {
			out = append(out, s)
		}
	}
	return out
}

// expiredCounts are expire_snapshots' output columns.
type expiredCounts struct {
	data, posDeletes, eqDeletes, manifests, manifestLists, statistics int64
}

// deleteExpiredFiles deletes the manifest lists, manifests, data and delete
// files and statistics files that the removed snapshots reached and no
// remaining snapshot does. A file live in a remaining snapshot's manifest
// stays whichever snapshot added it. Files are named in the map removeFiles
// gets by their storage.FileLocation.
func deleteExpiredFiles(ctx context.Context, before, after *table.Table, removed []table.Snapshot, home string, workers int) (expiredCounts, []string, error) {
	var counts expiredCounts
	if len(removed) == 0 {
		return counts, nil, nil
	}
	fsys, err := before.FS(ctx)
	if err != nil {
		return counts, nil, err
	}
	// Files are compared by one spelling: a served warehouse names one
	// file file://<folder>/KEY or s3://BUCKET/KEY (storage.FileLocation).
	loc := func(p string) string { return storage.FileLocation(fsys, p) }
	keepManifests := map[string]bool{}
	keepLists := map[string]bool{}
	var kept []iceberg.ManifestFile
	for _, s := range after.Metadata().Snapshots() {
		keepLists[loc(s.ManifestList)] = true
		mans, err := s.Manifests(fsys)
		if err != nil {
			return counts, nil, fmt.Errorf("read manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			if !keepManifests[loc(m.FilePath())] {
				keepManifests[loc(m.FilePath())] = true
				kept = append(kept, m)
			}
		}
	}
	// path → the counter it adds to once deleted
	doomed := map[string]*int64{}
	seen := map[string]bool{}
	for _, s := range removed {
		if s.ManifestList != "" && !keepLists[loc(s.ManifestList)] {
			doomed[loc(s.ManifestList)] = &counts.manifestLists
		}
		mans, err := s.Manifests(fsys)
		if err != nil {
			return counts, nil, fmt.Errorf("read manifests of expired snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			if keepManifests[loc(m.FilePath())] || seen[loc(m.FilePath())] {
				continue
			}
			seen[loc(m.FilePath())] = true
			doomed[loc(m.FilePath())] = &counts.manifests
			for entry, err := range m.Entries(fsys, false) {
				if err != nil {
					return counts, nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
				}
				df := entry.DataFile()
				switch df.ContentType() {
				case iceberg.EntryContentPosDeletes:
					doomed[loc(df.FilePath())] = &counts.posDeletes
				case iceberg.EntryContentEqDeletes:
					doomed[loc(df.FilePath())] = &counts.eqDeletes
				default:
					doomed[loc(df.FilePath())] = &counts.data
				}
			}
		}
	}
	for _, m := range kept {
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return counts, nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			delete(doomed, loc(entry.DataFile().FilePath()))
		}
	}
	expired := map[int64]bool{}
	for _, s := range removed {
		expired[s.SnapshotID] = true
	}
	for sf := range before.Metadata().Statistics() {
		if expired[sf.SnapshotID] && sf.StatisticsPath != "" {
			doomed[loc(sf.StatisticsPath)] = &counts.statistics
		}
	}
	for psf := range before.Metadata().PartitionStatistics() {
		if expired[psf.SnapshotID] && psf.StatisticsPath != "" {
			doomed[loc(psf.StatisticsPath)] = &counts.statistics
		}
	}
	for sf := range after.Metadata().Statistics() {
		delete(doomed, loc(sf.StatisticsPath))
	}
	for psf := range after.Metadata().PartitionStatistics() {
		delete(doomed, loc(psf.StatisticsPath))
	}
	left, err := removeFiles(ctx, fsys, home, doomed, workers)
	return counts, left, err
}

// removeFiles deletes each file and adds one to its counter; a file
// already gone counts as deleted (a retried call finishing the job). Files
// not inside home (decoded, links resolved: storage.Inside) are not touched;
// they are returned, sorted.
func removeFiles(ctx context.Context, fsys icebergio.IO, home string, files map[string]*int64, workers int) ([]string, error) {
	var left []string
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	results := make(chan *int64, len(files))
	for path, counter := range files {
		if storage.Inside(home, path, true) != nil {
			left = append(left, path)
			continue
		}
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			err := fsys.Remove(path)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("delete %s: %w", path, err)
			}
			results <- counter
			return nil
		})
	}
	err := g.Wait()
	close(results)
	for counter := range results {
		*counter++
	}
	slices.Sort(left)
	return left, err
}
