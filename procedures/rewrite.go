package procedures

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/compaction"

	"github.com/icesql/icesql/storage"
)

// rewriteManifests is Spark's rewrite_manifests: small manifests of the
// current snapshot are merged toward commit.manifest.target-size-bytes
// (iceberg-go's RewriteManifests), in one replace snapshot.
func rewriteManifests() *Procedure {
	p := &Procedure{
		Name: "rewrite_manifests",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "use_caching", Kind: Bool},
			{Name: "spec_id", Kind: Int64},
		},
		Output: []Column{
			{Name: "rewritten_manifests_count", Kind: Int64},
			{Name: "added_manifests_count", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, err := env.TableIdent("table", args.String("table"))
		if err != nil {
			return nil, err
		}
		var opts []table.RewriteManifestsOpt
		if id, ok := args.Int64("spec_id"); ok {
			opts = append(opts, table.WithRewriteSpecID(int(id)))
		}
		var res *table.RewriteManifestsResult
		_, err = storage.CommitTransaction(ctx, env.Catalog, ident, func(tbl *table.Table, tx *table.Transaction) error {
			if id, ok := args.Int64("spec_id"); ok {
				if tbl.Metadata().PartitionSpecByID(int(id)) == nil {
					return argError(p, "argument 'spec_id': table %s has no partition spec %d", dotted(ident), id)
				}
			}
			r, err := tx.RewriteManifests(ctx, opts...)
			res = r
			return err
		})
		if err != nil {
			return nil, err
		}
		env.progress("CALL system.rewrite_manifests: %s: %d manifests rewritten into %d", dotted(ident), len(res.RewrittenManifests), len(res.AddedManifests))
		return [][]any{{int64(len(res.RewrittenManifests)), int64(len(res.AddedManifests))}}, nil
	}
	return p
}

// rewriteOptions are rewrite_data_files' options map, as Spark names them.
type rewriteOptions struct {
	cfg            compaction.Config
	rewriteAll     bool
	partial        bool
	maxCommits     int
	minInputFiles  int
	deleteFilesMin int
	// outputTarget is the size of the files written.
	outputTarget int64
}

// acceptedRewriteOptions are Spark options icesql takes but that do not
// change what it does: it rewrites groups one after another, with the
// sequence number Iceberg's rewrite gives, in planning order.
var acceptedRewriteOptions = map[string]bool{
	"max-concurrent-file-group-rewrites":  true,
	"use-starting-sequence-number":        true,
	"rewrite-job-order":                   true,
	"max-file-group-size-bytes":           true,
	"partial-progress.max-failed-commits": true,
	"compression-factor":                  true,
	"shuffle-partitions-per-file":         true,
	"remove-dangling-deletes":             true,
}

func parseRewriteOptions(p *Procedure, tbl *table.Table, opts map[string]string) (rewriteOptions, error) {
	target := tbl.Properties().GetInt(table.WriteTargetFileSizeBytesKey, table.WriteTargetFileSizeBytesDefault)
	o := rewriteOptions{cfg: compaction.DefaultConfig(), maxCommits: 10, minInputFiles: 5, deleteFilesMin: math.MaxInt32}
	o.cfg.TargetFileSizeBytes = int64(target)
	var minSize, maxSize int64 = -1, -1
	num := func(key, v string) (int64, error) {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n < 0 {
			return 0, argError(p, "argument 'options': option '%s' wants a non-negative integer, got '%s'", key, v)
		}
		return n, nil
	}
	boolean := func(key, v string) (bool, error) {
		b, err := strconv.ParseBool(strings.TrimSpace(v))
		if err != nil {
			return false, argError(p, "argument 'options': option '%s' wants true or false, got '%s'", key, v)
		}
		return b, nil
	}
	for _, key := range sortedKeys(opts) {
		v := opts[key]
		var err error
		var n int64
		switch key {
		case "target-file-size-bytes":
			if n, err = num(key, v); err == nil {
				if n == 0 {
					return o, argError(p, "argument 'options': option 'target-file-size-bytes' must be positive")
				}
				o.cfg.TargetFileSizeBytes = n
			}
		case "min-file-size-bytes":
			minSize, err = num(key, v)
		case "max-file-size-bytes":
			maxSize, err = num(key, v)
		case "min-input-files":
			if n, err = num(key, v); err == nil {
				if n < 1 {
					return o, argError(p, "argument 'options': option 'min-input-files' must be at least 1")
				}
				o.minInputFiles = int(min(n, math.MaxInt32))
			}
		case "delete-file-threshold":
			if n, err = num(key, v); err == nil {
				o.deleteFilesMin = int(min(max(n, 1), math.MaxInt32))
			}
		case "delete-ratio-threshold":
			f, perr := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if perr != nil || f < 0 || f > 1 {
				return o, argError(p, "argument 'options': option 'delete-ratio-threshold' wants a number from 0 to 1, got '%s'", v)
			}
			o.cfg.DeleteRatioThreshold = f
		case "rewrite-all":
			o.rewriteAll, err = boolean(key, v)
		case "partial-progress.enabled":
			o.partial, err = boolean(key, v)
		case "partial-progress.max-commits":
			if n, err = num(key, v); err == nil {
				o.maxCommits = int(min(max(n, 1), 1000))
			}
		default:
			if !acceptedRewriteOptions[key] {
				return o, argError(p, "argument 'options': unknown option '%s'; the options are target-file-size-bytes, min-file-size-bytes, max-file-size-bytes, min-input-files, delete-file-threshold, delete-ratio-threshold, rewrite-all, partial-progress.enabled, partial-progress.max-commits", key)
			}
		}
		if err != nil {
			return o, err
		}
	}
	o.outputTarget = o.cfg.TargetFileSizeBytes
	o.cfg.MinFileSizeBytes = o.cfg.TargetFileSizeBytes * 3 / 4
	o.cfg.MaxFileSizeBytes = o.cfg.TargetFileSizeBytes * 9 / 5
	if minSize >= 0 {
		o.cfg.MinFileSizeBytes = minSize
	}
	if maxSize >= 0 {
		o.cfg.MaxFileSizeBytes = maxSize
	}
	// The planner below applies Spark's group rules; iceberg-go's packer
	// only bins the candidates.
	o.cfg.MinInputFiles = 1
	o.cfg.DeleteFileThreshold = o.deleteFilesMin
	if o.rewriteAll {
		// Every file undersized, and one bin per partition: the packing
		// target is not the output file size (WriteRecords keeps that).
		o.cfg.TargetFileSizeBytes = math.MaxInt64 - 1
		o.cfg.MinFileSizeBytes, o.cfg.MaxFileSizeBytes = math.MaxInt64-2, math.MaxInt64
	}
	if err := o.cfg.Validate(); err != nil {
		return o, argError(p, "argument 'options': %v", err)
	}
	return o, nil
}

// rewriteDataFiles is Spark's rewrite_data_files with the binpack and sort
// strategies. Files are chosen as Spark chooses them: too small, too large,
// or with at least delete-file-threshold delete files (or too high a
// deleted-row ratio), limited to those the where predicate may match; a
// group of them is rewritten when it has min-input-files files, deletes to
// drop, or more data than one target file. The rewrite reads the files
// with their deletes applied and commits one replace snapshot (or one per
// chunk with partial-progress.enabled).
func rewriteDataFiles() *Procedure {
	p := &Procedure{
		Name: "rewrite_data_files",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "strategy", Kind: String, Default: "binpack"},
			{Name: "sort_order", Kind: String},
			{Name: "options", Kind: Map},
			{Name: "where", Kind: String},
		},
		Output: []Column{
			{Name: "rewritten_data_files_count", Kind: Int64},
			{Name: "added_data_files_count", Kind: Int64},
			{Name: "rewritten_bytes_count", Kind: Int64},
			{Name: "failed_data_files_count", Kind: Int64},
			{Name: "removed_delete_files_count", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, tbl, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		opts, err := parseRewriteOptions(p, tbl, args.Map("options"))
		if err != nil {
			return nil, err
		}
		order, err := rewriteOrder(p, env, tbl, strings.ToLower(args.String("strategy")), args["sort_order"])
		if err != nil {
			return nil, err
		}
		filter := iceberg.BooleanExpression(iceberg.AlwaysTrue{})
		if where, ok := args["where"].(string); ok {
			if env.RowFilter == nil {
				return nil, fmt.Errorf("rewrite_data_files: argument 'where' needs the SQL engine: %w", errors.ErrUnsupported)
			}
			if filter, err = env.RowFilter(ctx, ident, where); err != nil {
				return nil, err
			}
		}
		groups, err := planRewrite(ctx, tbl, filter, opts)
		if err != nil {
			return nil, fmt.Errorf("rewrite_data_files %s: plan: %w", dotted(ident), err)
		}
		env.progress("CALL system.rewrite_data_files: %s: %d file groups to rewrite", dotted(ident), len(groups))
		res, err := runRewrite(ctx, env, ident, tbl, order, groups, opts)
		if err != nil {
			return nil, fmt.Errorf("rewrite_data_files %s: %w", dotted(ident), err)
		}
		return [][]any{{res.rewritten, res.added, res.bytes, res.failed, res.removedDeletes}}, nil
	}
	return p
}

// rewriteOrder is the order the sort strategy writes in: sort_order, else
// the table's; nil for binpack.
func rewriteOrder(p *Procedure, env Env, tbl *table.Table, strategy string, sortArg any) (*table.SortOrder, error) {
	text, hasOrder := sortArg.(string)
	switch strategy {
	case "binpack":
		if hasOrder {
			return nil, argError(p, "argument 'sort_order' needs strategy => 'sort'")
		}
		return nil, nil
	case "sort":
	default:
		return nil, argError(p, "argument 'strategy': unknown strategy '%s'; it is 'binpack' or 'sort'", strategy)
	}
	order := tbl.SortOrder()
	if hasOrder {
		if strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "zorder") {
			return nil, fmt.Errorf("rewrite_data_files: sort_order '%s': z-order is not supported; give columns, e.g. 'id DESC NULLS LAST, name': %w", text, errors.ErrUnsupported)
		}
		if env.SortOrder == nil {
			return nil, fmt.Errorf("rewrite_data_files: argument 'sort_order' needs the SQL engine: %w", errors.ErrUnsupported)
		}
		var err error
		if order, err = env.SortOrder(tbl, text); err != nil {
			return nil, err
		}
	}
	if order.IsUnsorted() {
		return nil, argError(p, "strategy 'sort' needs argument 'sort_order' or a table with a sort order (ALTER TABLE ... WRITE ORDERED BY)")
	}
	return &order, nil
}

// sortedCopy is tbl with order as its default sort order, to write the
// rewritten rows through: iceberg-go sorts what it writes by the table's
// sort order. Nothing commits through the copy.
func sortedCopy(tbl *table.Table, order table.SortOrder) (*table.Table, error) {
	meta, err := table.UpdateTableMetadata(tbl.Metadata(), []table.Update{
		table.NewAddSortOrderUpdate(&order), table.NewSetDefaultSortOrderUpdate(-1),
	}, tbl.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("sort order: %w", err)
	}
	return table.New(tbl.Identifier(), meta, tbl.MetadataLocation(), tbl.FS, nil), nil
}

// planRewrite chooses the file groups to rewrite.
func planRewrite(ctx context.Context, tbl *table.Table, filter iceberg.BooleanExpression, o rewriteOptions) ([]table.CompactionTaskGroup, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return nil, err
	}
	// Whole files, all rows: the filter chose the files, it must not drop
	// rows from them; a file split into several tasks is read once.
	seen := map[string]bool{}
	whole := tasks[:0]
	for _, t := range tasks {
		if seen[t.File.FilePath()] {
			continue
		}
		seen[t.File.FilePath()] = true
		t.Start, t.Length, t.Residual = 0, t.File.FileSizeBytes(), nil
		whole = append(whole, t)
	}
	plan, err := o.cfg.PlanCompaction(whole)
	if err != nil {
		return nil, err
	}
	var groups []table.CompactionTaskGroup
	for _, g := range plan.Groups {
		if !worthRewriting(g, o) {
			continue
		}
		groups = append(groups, table.CompactionTaskGroup{PartitionKey: g.PartitionKey, Tasks: g.Tasks, TotalSizeBytes: g.TotalSizeBytes})
	}
	return groups, nil
}

// worthRewriting is Spark's test of a file group: enough files, too much
// data for one file, or deletes to apply.
func worthRewriting(g compaction.Group, o rewriteOptions) bool {
	if o.rewriteAll {
		return true
	}
	if len(g.Tasks) >= 2 && (len(g.Tasks) >= o.minInputFiles || g.TotalSizeBytes > o.cfg.TargetFileSizeBytes) {
		return true
	}
	for _, t := range g.Tasks {
		if len(t.DeleteFiles)+len(t.EqualityDeleteFiles)+len(t.DeletionVectorFiles) > 0 {
			return true
		}
		if t.File.FileSizeBytes() > o.cfg.MaxFileSizeBytes {
			return true
		}
	}
	return false
}

type rewriteCounts struct {
	rewritten, added, bytes, failed, removedDeletes int64
}

// runRewrite rewrites the groups and commits them: all in one snapshot, or
// with partial progress in up to max-commits chunks, each committed on its
// own (a failed chunk counts its files as failed and the rest go on).
func runRewrite(ctx context.Context, env Env, ident table.Identifier, tbl *table.Table, order *table.SortOrder, groups []table.CompactionTaskGroup, o rewriteOptions) (rewriteCounts, error) {
	var c rewriteCounts
	if len(groups) == 0 {
		return c, nil
	}
	chunks := [][]table.CompactionTaskGroup{groups}
	if o.partial {
		size := (len(groups) + o.maxCommits - 1) / o.maxCommits
		chunks = nil
		for i := 0; i < len(groups); i += size {
			chunks = append(chunks, groups[i:min(i+size, len(groups))])
		}
	}
	done := 0
	for _, chunk := range chunks {
		cc, err := rewriteChunk(ctx, env, ident, tbl, order, o.outputTarget, chunk, &done, len(groups))
		if err != nil {
			if !o.partial || ctx.Err() != nil {
				return c, err
			}
			env.progress("CALL system.rewrite_data_files: %s: a chunk of %d groups failed: %v", dotted(ident), len(chunk), err)
			for _, g := range chunk {
				c.failed += int64(len(g.Tasks))
			}
			continue
		}
		c.rewritten += cc.rewritten
		c.added += cc.added
		c.bytes += cc.bytes
		c.removedDeletes += cc.removedDeletes
		if o.partial {
			// Later chunks build on this commit.
			if tbl, err = env.Catalog.LoadTable(ctx, ident); err != nil {
				return c, err
			}
		}
	}
	return c, nil
}

// rewriteChunk rewrites groups into new files and commits them as one
// replace snapshot of tbl.
func rewriteChunk(ctx context.Context, env Env, ident table.Identifier, tbl *table.Table, order *table.SortOrder, target int64, groups []table.CompactionTaskGroup, done *int, total int) (rewriteCounts, error) {
	var c rewriteCounts
	var err error
	var sorted *table.Table
	if order != nil {
		if sorted, err = sortedCopy(tbl, *order); err != nil {
			return c, err
		}
	}
	tx := tbl.NewTransaction()
	rw := tx.NewRewrite(nil)
	// written are the files this chunk wrote: if it commits nothing they
	// are deleted, not left for remove_orphan_files.
	var written []iceberg.DataFile
	for _, g := range groups {
		var gr table.CompactionGroupResult
		switch current := currentSpec(tbl, g); {
		case sorted != nil:
			gr, err = sortGroup(ctx, tbl, sorted, target, g, current)
		case !current:
			// iceberg-go's clustered writer takes a group for one partition
			// of the current spec; rows of an older spec's partition can
			// land in several.
			gr, err = sortGroup(ctx, tbl, tbl, target, g, false)
		default:
			gr, err = table.ExecuteCompactionGroup(ctx, tbl, g, table.WithCompactionTargetFileSize(target))
		}
		written = append(written, gr.NewDataFiles...)
		if err != nil {
			storage.DeleteWritten(ctx, tbl, written)
			return c, fmt.Errorf("rewrite group %q: %w", g.PartitionKey, err)
		}
		rw.ApplyResult(gr)
		c.rewritten += int64(len(gr.OldDataFiles))
		c.added += int64(len(gr.NewDataFiles))
		c.bytes += gr.BytesBefore
		c.removedDeletes += int64(len(gr.SafePosDeletes) + len(gr.SafeDeletionVectors))
		*done++
		env.progress("CALL system.rewrite_data_files: %s: group %d of %d: %d files (%d bytes) rewritten into %d",
			dotted(ident), *done, total, len(gr.OldDataFiles), gr.BytesBefore, len(gr.NewDataFiles))
	}
	if err := rw.Commit(ctx); err != nil {
		storage.DeleteWritten(ctx, tbl, written)
		return c, fmt.Errorf("stage the rewrite: %w", err)
	}
	if _, err := storage.CommitWritten(ctx, tbl, tx, written); err != nil {
		if errors.Is(err, table.ErrCommitFailed) {
			return c, fmt.Errorf("%w: another writer changed the table during the rewrite; run it again: %v", storage.ErrConflict, err)
		}
		return c, fmt.Errorf("commit the rewrite: %w", err)
	}
	return c, nil
}

// currentSpec reports whether every file of g was written with tbl's
// current partition spec, so that g's rows fall in one partition of it.
func currentSpec(tbl *table.Table, g table.CompactionTaskGroup) bool {
	spec := tbl.Spec()
	for _, t := range g.Tasks {
		if int(t.File.SpecID()) != spec.ID() {
			return false
		}
	}
	return true
}

// sortGroup rewrites one group sorted as a whole: its rows (deletes
// applied) are read into one batch, which iceberg-go sorts by writeTbl's
// sort order as it writes. The group is held in memory; groups are bounded
// by the target file size. clustered says the rows fall in one partition
// of the current spec; else they are fanned out to the partitions they
// fall in.
func sortGroup(ctx context.Context, tbl, writeTbl *table.Table, target int64, g table.CompactionTaskGroup, clustered bool) (table.CompactionGroupResult, error) {
	gr := table.CompactionGroupResult{PartitionKey: g.PartitionKey}
	schema, batches, err := sortScan(tbl).ReadTasks(ctx, g.Tasks) // rewrite_v3.go
	if err != nil {
		return gr, err
	}
	var recs []arrow.RecordBatch
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for rec, err := range batches {
		if err != nil {
			return gr, err
		}
		rec.Retain()
		recs = append(recs, rec)
	}
	one, err := concatRecords(schema, recs)
	if err != nil {
		return gr, err
	}
	defer one.Release()
	var input iter.Seq2[arrow.RecordBatch, error] = func(yield func(arrow.RecordBatch, error) bool) { yield(one, nil) }
	schema, lineage, err := sortWrite(tbl, schema)
	if err != nil {
		return gr, err
	}
	opts := append([]table.WriteRecordOption{table.WithTargetFileSize(target)}, lineage...)
	if clustered {
		opts = append(opts, table.WithClusteredWrite())
	}
	for df, err := range table.WriteRecords(ctx, writeTbl, schema, input, opts...) {
		if err != nil {
			return gr, err
		}
		gr.NewDataFiles = append(gr.NewDataFiles, df)
		gr.BytesAfter += df.FileSizeBytes()
	}
	rewritten := map[string]struct{}{}
	for _, t := range g.Tasks {
		gr.OldDataFiles = append(gr.OldDataFiles, t.File)
		gr.BytesBefore += t.File.FileSizeBytes()
		gr.SafeDeletionVectors = append(gr.SafeDeletionVectors, t.DeletionVectorFiles...)
		rewritten[t.File.FilePath()] = struct{}{}
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return gr, err
	}
	// Position delete files that name only rewritten files go with them.
	gr.SafePosDeletes, err = table.CollectDeadPositionDeletes(ctx, fsys, tbl.CurrentSnapshot(), rewritten)
	return gr, err
}

// concatRecords joins record batches of one schema into one.
func concatRecords(schema *arrow.Schema, recs []arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	for i := range cols {
		parts := make([]arrow.Array, len(recs))
		for j, r := range recs {
			parts[j] = r.Column(i)
		}
		if len(parts) == 0 {
			b := array.NewBuilder(memory.DefaultAllocator, schema.Field(i).Type)
			cols[i] = b.NewArray()
			b.Release()
			continue
		}
		c, err := array.Concatenate(parts, memory.DefaultAllocator)
		if err != nil {
			return nil, fmt.Errorf("join the group's rows: %w", err)
		}
		cols[i] = c
	}
	rec := array.NewRecordBatch(schema, cols, rows)
	for _, c := range cols {
		c.Release()
	}
	return rec, nil
}
