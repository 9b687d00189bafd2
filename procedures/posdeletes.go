package procedures

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// rewritePositionDeleteFiles is Spark's rewrite_position_delete_files with
// its binpack strategy. Position delete files all of whose rows name data
// files no longer in the table are removed. The others are grouped by
// partition (spec and tuple); a group is rewritten when it has
// min-input-files files, more than a target file of deletes, or
// rewrite-all: its rows, less those naming data files no longer in the
// table, are sorted by (file_path, pos) and written as target-sized files.
// where limits the rewrite to the partitions of the data files it may
// match. Everything is committed as one replace snapshot.
func rewritePositionDeleteFiles() *Procedure {
	p := &Procedure{
		Name: "rewrite_position_delete_files",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "options", Kind: Map},
			{Name: "where", Kind: String},
		},
		Output: []Column{
			{Name: "rewritten_delete_files_count", Kind: Int64},
			{Name: "added_delete_files_count", Kind: Int64},
			{Name: "rewritten_bytes_count", Kind: Int64},
			{Name: "added_bytes_count", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, tbl, err := loadTable(ctx, env, args)
		if err != nil {
			return nil, err
		}
		opts, err := parsePosDeleteOptions(p, tbl, args.Map("options"))
		if err != nil {
			return nil, err
		}
		if where, ok := args["where"].(string); ok {
			if env.RowFilter == nil {
				return nil, fmt.Errorf("rewrite_position_delete_files: argument 'where' needs the SQL engine: %w", errors.ErrUnsupported)
			}
			if opts.filter, err = env.RowFilter(ctx, ident, where); err != nil {
				return nil, err
			}
		}
		var res posDeleteCounts
		_, err = storage.CommitWriting(ctx, env.Catalog, ident, func(tbl *table.Table, tx *table.Transaction) ([]iceberg.DataFile, error) {
			var err error
			res, err = rewritePositionDeletes(ctx, tbl, tx, opts)
			return res.written, err
		})
		if err != nil {
			return nil, fmt.Errorf("rewrite_position_delete_files %s: %w", dotted(ident), err)
		}
		env.progress("CALL system.rewrite_position_delete_files: %s: %d position delete files rewritten as %d", dotted(ident), res.rewritten, res.added)
		return [][]any{{res.rewritten, res.added, res.rewrittenBytes, res.addedBytes}}, nil
	}
	return p
}

type posDeleteOptions struct {
	target, minSize, maxSize int64
	maxGroupBytes            int64
	minInputFiles            int
	rewriteAll               bool
	// filter (where) limits the rewrite to the partitions of the data
	// files it may match; nil: every partition.
	filter iceberg.BooleanExpression
}

// posDeleteOptionsAccepted are Spark's options that change how the work is
// scheduled, not what is written: icesql rewrites the groups one after
// another and commits once.
var posDeleteOptionsAccepted = map[string]bool{
	"max-concurrent-file-group-rewrites": true,
	"partial-progress.enabled":           true,
	"partial-progress.max-commits":       true,
	"rewrite-job-order":                  true,
	"max-files-to-rewrite":               true,
}

func parsePosDeleteOptions(p *Procedure, tbl *table.Table, opts map[string]string) (posDeleteOptions, error) {
	o := posDeleteOptions{
		target:        int64(tbl.Properties().GetInt("write.delete.target-file-size-bytes", 64*1024*1024)),
		maxGroupBytes: 100 << 30,
		minInputFiles: 5,
	}
	var minSize, maxSize int64 = -1, -1
	for _, key := range sortedKeys(opts) {
		v := strings.TrimSpace(opts[key])
		n, nerr := strconv.ParseInt(v, 10, 64)
		if nerr != nil || n < 0 {
			n = -1
		}
		wantNum := func() error {
			if n < 0 {
				return argError(p, "argument 'options': option '%s' wants a non-negative integer, got '%s'", key, v)
			}
			return nil
		}
		var err error
		switch key {
		case "target-file-size-bytes":
			if err = wantNum(); err == nil && n == 0 {
				err = argError(p, "argument 'options': option 'target-file-size-bytes' must be positive")
			}
			o.target = n
		case "min-file-size-bytes":
			err, minSize = wantNum(), n
		case "max-file-size-bytes":
			err, maxSize = wantNum(), n
		case "max-file-group-size-bytes":
			if err = wantNum(); err == nil && n == 0 {
				err = argError(p, "argument 'options': option 'max-file-group-size-bytes' must be positive")
			}
			o.maxGroupBytes = n
		case "min-input-files":
			if err = wantNum(); err == nil && n < 1 {
				err = argError(p, "argument 'options': option 'min-input-files' must be at least 1")
			}
			o.minInputFiles = int(min(n, math.MaxInt32))
		case "rewrite-all":
			var b bool
			if b, err = strconv.ParseBool(v); err != nil {
				err = argError(p, "argument 'options': option 'rewrite-all' wants true or false, got '%s'", v)
			}
			o.rewriteAll = b
		default:
			if !posDeleteOptionsAccepted[key] {
				return o, argError(p, "argument 'options': unknown option '%s'; the options are target-file-size-bytes, min-file-size-bytes, max-file-size-bytes, min-input-files, rewrite-all, max-file-group-size-bytes, max-files-to-rewrite, max-concurrent-file-group-rewrites, partial-progress.enabled, partial-progress.max-commits, rewrite-job-order", key)
			}
		}
		if err != nil {
			return o, err
		}
	}
	o.minSize, o.maxSize = o.target*3/4, o.target*9/5
	if minSize >= 0 {
		o.minSize = minSize
	}
	if maxSize >= 0 {
		o.maxSize = maxSize
	}
	if o.minSize > o.maxSize {
		return o, argError(p, "argument 'options': min-file-size-bytes %d is above max-file-size-bytes %d", o.minSize, o.maxSize)
	}
	return o, nil
}

type posDeleteCounts struct {
	rewritten, added, rewrittenBytes, addedBytes int64
	// written are the delete files the attempt wrote: an attempt that
	// commits nothing deletes them (storage.CommitWriting).
	written []iceberg.DataFile
}

// posDeleteFile is a live position delete file with the data sequence
// number of its manifest entry.
type posDeleteFile struct {
	df  iceberg.DataFile
	seq int64
}

// rewritePositionDeletes stages the rewrite on tx, a transaction on tbl.
// Nothing to rewrite stages nothing.
func rewritePositionDeletes(ctx context.Context, tbl *table.Table, tx *table.Transaction, o posDeleteOptions) (posDeleteCounts, error) {
	var res posDeleteCounts
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return res, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return res, err
	}
	live, deletes, err := liveFiles(fsys, snap)
	if err != nil {
		return res, err
	}
	var within map[string]bool
	if o.filter != nil {
		if within, err = filteredPartitions(ctx, tbl, o.filter); err != nil {
			return res, err
		}
	}
	var rw *table.RewriteFiles
	remove := func(f posDeleteFile) {
		if rw == nil {
			rw = tx.NewRewrite(nil)
		}
		rw.DeleteFile(f.df)
		res.rewritten++
		res.rewrittenBytes += f.df.FileSizeBytes()
	}
	var keys []string
	groups := map[string][]posDeleteFile{}
	for _, f := range deletes {
		k := partitionKey(f.df)
		if within != nil && !within[k] {
			continue
		}
		named, err := positionDeleteTargets(ctx, fsys, f.df)
		if err != nil {
			return res, err
		}
		if !namesAny(fsys, named, live) {
			remove(f)
			continue
		}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	slices.Sort(keys)
	merge := mergePositionDeletes
	if tbl.Metadata().Version() >= 3 {
		merge = dvMerger(snap) // rewrite_v3.go
	}
	for _, k := range keys {
		for _, chunk := range o.selectGroup(groups[k]) {
			added, err := merge(ctx, tbl, fsys, live, chunk, o.target)
			res.written = append(res.written, added...)
			if err != nil {
				return res, err
			}
			seq := int64(0)
			for _, f := range chunk {
				remove(f)
				seq = max(seq, f.seq)
			}
			for _, df := range added {
				rw.AddDeleteFileWithDataSequenceNumber(df, seq)
				res.added++
				res.addedBytes += df.FileSizeBytes()
			}
		}
	}
	if rw == nil {
		return res, nil
	}
	return res, rw.Commit(ctx)
}

func partitionKey(df iceberg.DataFile) string {
	return fmt.Sprintf("%d/%v", df.SpecID(), df.Partition())
}

// filteredPartitions is the set of partitions (partitionKey) holding a data
// file that filter may match, as the scan planner prunes them: by
// partition, then by column metrics. It is narrower than Spark's partition
// projection of where when metrics exclude every file of a partition,
// whose delete files then stay as they are.
func filteredPartitions(ctx context.Context, tbl *table.Table, filter iceberg.BooleanExpression) (map[string]bool, error) {
	tasks, err := tbl.Scan(table.WithRowFilter(filter)).PlanFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("plan where: %w", err)
	}
	out := map[string]bool{}
	for _, t := range tasks {
		out[partitionKey(t.File)] = true
	}
	return out, nil
}

// liveFiles reads the current snapshot's manifests: the data files (by
// storage.FileLocation) and the Parquet position delete files (deletion vectors are
// not rewritten here).
func liveFiles(fsys icebergio.IO, snap *table.Snapshot) (map[string]bool, []posDeleteFile, error) {
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, nil, err
	}
	live := map[string]bool{}
	var deletes []posDeleteFile
	for _, m := range mans {
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			df := entry.DataFile()
			switch {
			case df.ContentType() == iceberg.EntryContentData:
				live[storage.FileLocation(fsys, df.FilePath())] = true
			case df.ContentType() == iceberg.EntryContentPosDeletes && df.FileFormat() == iceberg.ParquetFile:
				deletes = append(deletes, posDeleteFile{df: df, seq: entry.SequenceNum()})
			}
		}
	}
	return live, deletes, nil
}

func namesAny(fsys icebergio.IO, named, live map[string]bool) bool {
	for p := range named {
		if live[storage.FileLocation(fsys, p)] {
			return true
		}
	}
	return false
}

// selectGroup applies Spark's size-based rules to one partition's files:
// the files outside [min-file-size-bytes, max-file-size-bytes] (every file
// with rewrite-all) are rewritten when there are at least min-input-files
// of them, more than a target file of them, or one too large; they are
// split into chunks of at most max-file-group-size-bytes.
func (o posDeleteOptions) selectGroup(files []posDeleteFile) [][]posDeleteFile {
	var picked []posDeleteFile
	var total int64
	for _, f := range files {
		if size := f.df.FileSizeBytes(); o.rewriteAll || size < o.minSize || size > o.maxSize {
			picked = append(picked, f)
			total += size
		}
	}
	n := len(picked)
	switch {
	case n == 0:
		return nil
	case o.rewriteAll:
	case n > 1 && n >= o.minInputFiles:
	case n > 1 && total > o.target:
	case total > o.maxSize:
	default:
		return nil
	}
	var chunks [][]posDeleteFile
	var cur []posDeleteFile
	var size int64
	for _, f := range picked {
		if len(cur) > 0 && size+f.df.FileSizeBytes() > o.maxGroupBytes {
			chunks = append(chunks, cur)
			cur, size = nil, 0
		}
		cur = append(cur, f)
		size += f.df.FileSizeBytes()
	}
	return append(chunks, cur)
}

// mergePositionDeletes reads the rows of files, drops those naming data
// files no longer live, and writes the rest sorted by (file_path, pos) in
// about input-size/target files of the files' partition. No live row
// writes no file.
func mergePositionDeletes(ctx context.Context, tbl *table.Table, fsys icebergio.IO, live map[string]bool, files []posDeleteFile, target int64) ([]iceberg.DataFile, error) {
	var rows []storage.PositionDelete
	var inBytes int64
	for _, f := range files {
		got, err := storage.ReadPositionDeletes(ctx, fsys, f.df.FilePath())
		if err != nil {
			return nil, err
		}
		for _, r := range got {
			if live[storage.FileLocation(fsys, r.Path)] {
				rows = append(rows, r)
			}
		}
		inBytes += f.df.FileSizeBytes()
	}
	if len(rows) == 0 {
		return nil, nil
	}
	slices.SortFunc(rows, storage.ComparePositionDeletes)
	rows = slices.Compact(rows)
	parts := int(min(max((inBytes+target-1)/target, 1), int64(len(rows))))
	per := (len(rows) + parts - 1) / parts
	first := files[0].df
	var out []iceberg.DataFile
	for start := 0; start < len(rows); start += per {
		df, err := storage.WritePositionDeleteRows(ctx, tbl, first.SpecID(), first.Partition(), rows[start:min(start+per, len(rows))])
		if err != nil {
			return out, err // the files written so far, for the caller to delete
		}
		out = append(out, df)
	}
	return out, nil
}

// positionDeleteTargets is the set of data files a position delete file
// names: from its metadata when it names one, else from its file_path column.
func positionDeleteTargets(ctx context.Context, fsys icebergio.IO, df iceberg.DataFile) (map[string]bool, error) {
	if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
		return map[string]bool{*ref: true}, nil
	}
	f, _ := iceberg.PositionalDeleteSchema.FindFieldByName("file_path")
	if lo, hi := df.LowerBoundValues()[f.ID], df.UpperBoundValues()[f.ID]; len(lo) > 0 && string(lo) == string(hi) {
		return map[string]bool{string(lo): true}, nil
	}
	return storage.PositionDeleteFilePaths(ctx, fsys, df.FilePath())
}
