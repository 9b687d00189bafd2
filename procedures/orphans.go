package procedures

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Spark's defaults and guard for remove_orphan_files: files must be three
// days old by default, and deleting files younger than a day is refused,
// since a write in flight (a long transaction, a commit retrying) may own
// them without any metadata naming them yet.
const (
	orphanDefaultAge = 3 * 24 * time.Hour
	orphanMinimumAge = 24 * time.Hour
)

// removeOrphanFiles is Spark's remove_orphan_files: the files under the
// table's folder (or location, inside it) that no metadata of the table
// names and that are older than older_than. Never deleted whatever their
// age: metadata JSON files and version-hint.text (the catalog's own record
// of the table: an older metadata file may be the base a registered table
// is linked to) and anything in an .icesql folder (the embedded catalog's
// links and marks).
func removeOrphanFiles() *Procedure {
	p := &Procedure{
		Name: "remove_orphan_files",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "older_than", Kind: Timestamp},
			{Name: "location", Kind: String},
			{Name: "dry_run", Kind: Bool, Default: false},
			{Name: "max_concurrent_deletes", Kind: Int64},
			{Name: "stream_results", Kind: Bool},
			{Name: "prefix_mismatch_mode", Kind: String},
			{Name: "equal_schemes", Kind: Map},
			{Name: "equal_authorities", Kind: Map},
		},
		Output: []Column{{Name: "orphan_file_location", Kind: String}},
	}
	p.Run = func(ctx context.Context, env Env, args Args) ([][]any, error) {
		ident, err := env.TableIdent("table", args.String("table"))
		if err != nil {
			return nil, err
		}
		dryRun := args.Bool("dry_run")
		cutoff, ok := args.Time("older_than")
		if !ok {
			cutoff = msAgo(orphanDefaultAge)
		}
		if !dryRun && cutoff.After(msAgo(orphanMinimumAge)) {
			return nil, argError(p, "argument 'older_than': %s is less than 24 hours ago; files that young may belong to a write still in flight. Use dry_run => true to list them", cutoff.UTC().Format("2006-01-02 15:04:05")+" UTC")
		}
		workers := 1
		if n, ok := args.Int64("max_concurrent_deletes"); ok {
			if n < 1 {
				return nil, argError(p, "argument 'max_concurrent_deletes' must be at least 1, got %d", n)
			}
			workers = int(min(n, 64))
		}
		if mode, ok := args["prefix_mismatch_mode"].(string); ok {
			// Locations are compared with file:, file:// and plain paths
			// alike; no other prefix differs within one table's folder.
			switch strings.ToUpper(mode) {
			case "ERROR", "IGNORE", "DELETE":
			default:
				return nil, argError(p, "argument 'prefix_mismatch_mode': '%s' is not ERROR, IGNORE or DELETE", mode)
			}
		}
		tbl, err := env.Catalog.LoadTable(ctx, ident)
		if err != nil {
			return nil, err
		}
		home, err := storage.TableRoot(tbl)
		if err != nil {
			return nil, fmt.Errorf("remove_orphan_files %s: %w", dotted(ident), err)
		}
		root := home
		if loc, ok := args["location"].(string); ok {
			fsys, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			// The location as given, or a served bucket's s3:// spelling of it.
			root = loc
			if storage.Inside(home, root, false) != nil {
				root = storage.FileLocation(fsys, loc)
			}
			if err := storage.Inside(home, root, false); err != nil {
				return nil, argError(p, "argument 'location': '%s' is not inside the folder of table %s (%s); other tables' files would look orphaned there", loc, strings.Join(ident, "."), home)
			}
		}
		orphans, err := findOrphans(ctx, tbl, root, cutoff)
		if err != nil {
			return nil, fmt.Errorf("remove_orphan_files %s: %w", dotted(ident), err)
		}
		env.progress("CALL system.remove_orphan_files: %s: %d orphan files older than %s under %s (dry run: %v)", dotted(ident), len(orphans), cutoff.UTC().Format(time.RFC3339), root, dryRun)
		if !dryRun && len(orphans) > 0 {
			fsys, err := tbl.FS(ctx)
			if err != nil {
				return nil, err
			}
			var n int64
			files := make(map[string]*int64, len(orphans))
			for _, o := range orphans {
				files[o] = &n
			}
			if left, err := removeFiles(ctx, fsys, home, files, workers); err != nil {
				return nil, fmt.Errorf("remove_orphan_files %s: %w", dotted(ident), err)
			} else if len(left) > 0 {
				env.warn("remove_orphan_files %s: %d files lead outside the table's folder %s (a symbolic link) and were left: %s", dotted(ident), len(left), home, strings.Join(left, ", "))
			}
		}
		rows := make([][]any, len(orphans))
		for i, o := range orphans {
			rows[i] = []any{o}
		}
		return rows, nil
	}
	return p
}

// findOrphans walks root and returns, sorted, the files older than cutoff
// that no metadata of tbl reaches and that are not the catalog's own.
func findOrphans(ctx context.Context, tbl *table.Table, root string, cutoff time.Time) ([]string, error) {
	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	lister, ok := fsys.(icebergio.ListableIO)
	if !ok {
		return nil, fmt.Errorf("the table's file IO %T cannot list folders: %w", fsys, errors.ErrUnsupported)
	}
	referenced, err := referencedFiles(ctx, tbl, fsys)
	if err != nil {
		return nil, err
	}
	var orphans []string
	err = lister.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == ".icesql" {
				return fs.SkipDir
			}
			return nil
		}
		if owner := checksummed(p); catalogOwned(owner) || referenced[storage.FileLocation(fsys, locationOf(root, owner))] {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // deleted while we walked
			}
			return err
		}
		if !info.ModTime().Before(cutoff) {
			return nil
		}
		orphans = append(orphans, locationOf(root, p))
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	sort.Strings(orphans)
	return orphans, nil
}

// checksummed is the file a Hadoop checksum file (.name.crc, which Java
// catalogs leave beside what they write and Hadoop's listing hides) belongs
// to; any other file stands for itself. A checksum file is an orphan only
// when the file it checks is one.
func checksummed(p string) string {
	dir, base := path.Split(p)
	if name, ok := strings.CutSuffix(strings.TrimPrefix(base, "."), ".crc"); ok && strings.HasPrefix(base, ".") && name != "" {
		return dir + name
	}
	return p
}

// catalogOwned says a file is the catalog's record of the table rather
// than a file a snapshot names.
func catalogOwned(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".metadata.json") || base == "version-hint.text" ||
		strings.Contains(p, "/.icesql/")
}

// referencedFiles is every file the table's metadata reaches: metadata
// files, statistics, and for every snapshot its manifest list, manifests
// and the live files they list (a deletion vector's data file included).
// Keys are storage.FileLocation forms: a served warehouse names one file
// file://<folder>/KEY or s3://BUCKET/KEY (the names other engines write
// through the S3 API), and both must count.
func referencedFiles(ctx context.Context, tbl *table.Table, fsys icebergio.IO) (map[string]bool, error) {
	loc := func(p string) string { return storage.FileLocation(fsys, p) }
	meta := tbl.Metadata()
	ref := map[string]bool{loc(tbl.MetadataLocation()): true}
	for e := range meta.PreviousFiles() {
		ref[loc(e.MetadataFile)] = true
	}
	for sf := range meta.Statistics() {
		ref[loc(sf.StatisticsPath)] = true
	}
	for psf := range meta.PartitionStatistics() {
		ref[loc(psf.StatisticsPath)] = true
	}
	manifests := map[string]iceberg.ManifestFile{}
	for _, s := range meta.Snapshots() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ref[loc(s.ManifestList)] = true
		mans, err := s.Manifests(fsys)
		if err != nil {
			return nil, fmt.Errorf("read manifests of snapshot %d: %w", s.SnapshotID, err)
		}
		for _, m := range mans {
			manifests[m.FilePath()] = m
		}
	}
	for p, m := range manifests {
		ref[loc(p)] = true
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", p, err)
			}
			df := entry.DataFile()
			ref[loc(df.FilePath())] = true
			if r := df.ReferencedDataFile(); r != nil {
				ref[loc(*r)] = true
			}
		}
	}
	return ref, nil
}

// locationOf writes a walked path as a location in the form the table's
// root is written (a local walk yields plain paths under a file:// root).
func locationOf(root, p string) string {
	if strings.HasPrefix(root, "file://") && strings.HasPrefix(p, "/") {
		return "file://" + p
	}
	return p
}
