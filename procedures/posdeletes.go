package procedures

import (
	"context"
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// rewritePositionDeleteFiles is Spark's rewrite_position_delete_files as far
// as dangling deletes go: a position delete file all of whose rows name data
// files no longer in the table is removed in a replace snapshot. Position
// delete files that still apply are left as they are (icesql does not yet
// merge small ones); options are checked and accepted.
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
		ident, err := env.TableIdent("table", args.String("table"))
		if err != nil {
			return nil, err
		}
		if _, ok := args["where"].(string); ok {
			return nil, fmt.Errorf("rewrite_position_delete_files: argument 'where' is not supported yet; call it without where: %w", errors.ErrUnsupported)
		}
		for _, k := range sortedKeys(args.Map("options")) {
			switch k {
			case "max-concurrent-file-group-rewrites", "partial-progress.enabled", "partial-progress.max-commits",
				"rewrite-job-order", "target-file-size-bytes", "min-file-size-bytes", "max-file-size-bytes",
				"min-input-files", "rewrite-all", "max-file-group-size-bytes", "max-files-to-rewrite":
			default:
				return nil, argError(p, "argument 'options': unknown option '%s'", k)
			}
		}
		var removed []iceberg.DataFile
		_, err = storage.CommitTransaction(ctx, env.Catalog, ident, func(tbl *table.Table, tx *table.Transaction) error {
			if removed, err = danglingPositionDeletes(ctx, tbl); err != nil || len(removed) == 0 {
				return err
			}
			rw := tx.NewRewrite(nil)
			for _, df := range removed {
				rw.DeleteFile(df)
			}
			return rw.Commit(ctx)
		})
		if err != nil {
			return nil, fmt.Errorf("rewrite_position_delete_files %s: %w", dotted(ident), err)
		}
		var bytes int64
		for _, df := range removed {
			bytes += df.FileSizeBytes()
		}
		env.progress("CALL system.rewrite_position_delete_files: %s: %d dangling position delete files removed", dotted(ident), len(removed))
		return [][]any{{int64(len(removed)), int64(0), bytes, int64(0)}}, nil
	}
	return p
}

// danglingPositionDeletes lists the position delete files (deletion vectors
// aside) of the current snapshot that name no live data file.
func danglingPositionDeletes(ctx context.Context, tbl *table.Table) ([]iceberg.DataFile, error) {
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	live := map[string]bool{}
	var deletes []iceberg.DataFile
	for _, m := range mans {
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			df := entry.DataFile()
			switch {
			case df.ContentType() == iceberg.EntryContentData:
				live[normalPath(df.FilePath())] = true
			case df.ContentType() == iceberg.EntryContentPosDeletes && df.FileFormat() == iceberg.ParquetFile:
				deletes = append(deletes, df)
			}
		}
	}
	var out []iceberg.DataFile
	for _, df := range deletes {
		named, err := positionDeleteTargets(ctx, fsys, df)
		if err != nil {
			return nil, err
		}
		dangling := true
		for p := range named {
			if live[normalPath(p)] {
				dangling = false
				break
			}
		}
		if dangling {
			out = append(out, df)
		}
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
	r, err := fsys.Open(df.FilePath())
	if err != nil {
		return nil, fmt.Errorf("open position delete file %s: %w", df.FilePath(), err)
	}
	defer r.Close()
	pr, err := file.NewParquetReader(r)
	if err != nil {
		return nil, fmt.Errorf("read position delete file %s: %w", df.FilePath(), err)
	}
	defer pr.Close()
	idx := pr.MetaData().Schema.ColumnIndexByName("file_path")
	if idx < 0 {
		return nil, fmt.Errorf("position delete file %s has no file_path column", df.FilePath())
	}
	fr, err := pqarrow.NewFileReader(pr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		return nil, err
	}
	groups := make([]int, pr.NumRowGroups())
	for i := range groups {
		groups[i] = i
	}
	t, err := fr.ReadRowGroups(ctx, []int{idx}, groups)
	if err != nil {
		return nil, fmt.Errorf("read file_path of position delete file %s: %w", df.FilePath(), err)
	}
	defer t.Release()
	names := map[string]bool{}
	for _, chunk := range t.Column(0).Data().Chunks() {
		for i := 0; i < chunk.Len(); i++ {
			if !chunk.IsNull(i) {
				names[chunk.ValueStr(i)] = true
			}
		}
	}
	return names, nil
}
