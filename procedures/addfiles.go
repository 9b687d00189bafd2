package procedures

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// addFiles is Spark's add_files for Parquet files: source_table names them
// as Spark does, `parquet`.`/path/to/file-or-folder`; a folder is read
// recursively, and partition_filter keeps the files under key=value folders.
// The files are added where they are, not copied, in one append snapshot;
// their partition values come from their column statistics.
func addFiles() *Procedure {
	p := &Procedure{
		Name: "add_files",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "source_table", Kind: String, Required: true},
			{Name: "partition_filter", Kind: Map},
			{Name: "check_duplicate_files", Kind: Bool, Default: true},
			{Name: "parallelism", Kind: Int64},
		},
		Output: []Column{
			{Name: "added_files_count", Kind: Int64},
			{Name: "changed_partition_count", Kind: Int64},
		},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, err := env.TableIdent("table", args.String("table"))
		if err != nil {
			return nil, err
		}
		src := args.String("source_table")
		parts, err := splitName(src)
		if err != nil || len(parts) != 2 || !strings.Contains(src, "`") {
			return nil, argError(p, "argument 'source_table': '%s' is not of the form `parquet`.`/path/to/files`; adding the files of another table is not supported", src)
		}
		if !strings.EqualFold(parts[0], "parquet") {
			return nil, fmt.Errorf("add_files: source_table '%s': only Parquet files can be added, not %s: %w", src, parts[0], errors.ErrUnsupported)
		}
		root := parts[1]
		if strings.HasPrefix(root, "/") {
			root = "file://" + root
		}
		// Files are read on the server, so only where a client may put
		// them: in the warehouse (its server-side file area included).
		if env.Root == "" {
			return nil, argError(p, "argument 'source_table': the catalog has no warehouse folder on this server, so no server-side files can be added")
		}
		if err := storage.Inside(env.Root, root, false); err != nil {
			return nil, argError(p, "argument 'source_table': %s is not inside the warehouse %s; add_files reads server-side files from the warehouse only", parts[1], env.Root)
		}
		var opts []table.AddFilesOption
		if n, ok := args.Int64("parallelism"); ok {
			if n < 1 {
				return nil, argError(p, "argument 'parallelism' must be at least 1, got %d", n)
			}
			opts = append(opts, table.WithAddFilesConcurrency(int(n)))
		}
		filter := args.Map("partition_filter")
		var files []string
		tbl, err := storage.CommitTransaction(ctx, env.Catalog, ident, func(tbl *table.Table, tx *table.Transaction) error {
			if files == nil {
				if files, err = parquetFiles(ctx, tbl, env.Root, root, filter); err != nil {
					return err
				}
				if len(files) == 0 {
					return argError(p, "argument 'source_table': no Parquet files under %s%s", parts[1], filterText(filter))
				}
			}
			return tx.AddFiles(ctx, files, nil, !args.Bool("check_duplicate_files"), opts...)
		})
		if err != nil {
			return nil, err
		}
		env.progress("CALL system.add_files: %s: %d Parquet files added from %s", dotted(ident), len(files), parts[1])
		changed := any(nil)
		if s := tbl.CurrentSnapshot(); s != nil {
			changed = summaryCount(s, "changed-partition-count")
		}
		return [][]any{{int64(len(files)), changed}}, nil
	}
	return p
}

func filterText(filter map[string]string) string {
	if len(filter) == 0 {
		return ""
	}
	var parts []string
	for _, k := range sortedKeys(filter) {
		parts = append(parts, k+"="+filter[k])
	}
	return " in partition " + strings.Join(parts, "/")
}

// parquetFiles lists the Parquet files at root (a file or a folder), leaving
// out hidden and marker files (.crc, _SUCCESS) as Spark does, and those not
// under every key=value folder of filter.
func parquetFiles(ctx context.Context, tbl *table.Table, warehouse, root string, filter map[string]string) ([]string, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	lister, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("add_files: the file IO %T cannot list folders: %w", fsys, errors.ErrUnsupported)
	}
	var out []string
	err = lister.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) && !strings.Contains(name, "=") {
				return fs.SkipDir
			}
			return nil
		}
		if strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || !strings.HasSuffix(strings.ToLower(name), ".parquet") {
			return nil
		}
		if !inPartition(p, filter) {
			return nil
		}
		if err := storage.Inside(warehouse, locationOf(root, p), false); err != nil {
			return fmt.Errorf("%w: argument 'source_table': %s leads outside the warehouse (a symbolic link)", ErrArgument, p)
		}
		out = append(out, locationOf(root, p))
		return nil
	})
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: argument 'source_table': %s does not exist", ErrArgument, root)
		}
		return nil, fmt.Errorf("%w: argument 'source_table': cannot list %s: %v", ErrArgument, root, err)
	}
	sort.Strings(out)
	return out, nil
}

// inPartition says a file's folders include key=value for every entry of
// filter.
func inPartition(p string, filter map[string]string) bool {
	if len(filter) == 0 {
		return true
	}
	dirs := map[string]bool{}
	for _, d := range strings.Split(path.Dir(p), "/") {
		dirs[d] = true
	}
	for k, v := range filter {
		if !dirs[k+"="+v] {
			return false
		}
	}
	return true
}
