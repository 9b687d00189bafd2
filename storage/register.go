package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// Registered tables (CALL system.register_table) live wherever their writer
// put them. The warehouse keeps only a link from the name to the metadata
// file they were registered with:
//
//	<root>/<namespace>/.icesql/links/<name>.json  {"location": "<table location>", "metadata": "<dir>/<file>"}
//
// Nothing is copied. A commit to such a table writes the next metadata file
// next to the registered one, with a name derived from it so that the
// create-if-absent write arbitrates between racing writers exactly as in the
// Hadoop layout:
//
//	<dir>/<stem>.metadata.json              the registered file
//	<dir>/<stem>.icesql-<k>.metadata.json   the k-th commit made through icesql
//
// The successors never take a name another engine would write (vN or
// NNNNN-uuid), so registering an older metadata file on purpose is honoured
// even when the folder holds newer ones. Dropping a registered table removes
// the link only: its files belong to whoever wrote them.

// current is the newest metadata of a table and where its next commit goes.
type current struct {
	meta    table.Metadata
	file    string // the metadata file meta was read from
	next    string // the metadata file the next commit creates
	version int    // Hadoop layout version; 0 for a registered table
}

// loadLink reads the newest metadata a link leads to. meta is nil for a
// Hadoop-layout folder without metadata.
func (w *Warehouse) loadLink(ctx context.Context, l link) (current, error) {
	if l.Metadata == "" {
		meta, file, version, err := w.loadCurrent(ctx, l.Location)
		return current{meta: meta, file: file, next: metadataFileFor(l.Location, version+1, gzipCodec(meta)), version: version}, err
	}
	dir, base := path.Split(l.Metadata)
	stem := strings.TrimSuffix(base, ".metadata.json")
	entries, err := w.store.List(ctx, dir)
	if err != nil {
		return current{}, fmt.Errorf("list %s: %w", dir, err)
	}
	k := 0
	for _, e := range entries {
		rest, ok := strings.CutPrefix(e.Name, stem+".icesql-")
		if !ok {
			continue
		}
		if n, err := strconv.Atoi(strings.TrimSuffix(rest, ".metadata.json")); err == nil && n > k {
			k = n
		}
	}
	file := l.Metadata
	if k > 0 {
		file = successor(dir, stem, k)
	}
	meta, err := w.readMetadata(ctx, file)
	if err != nil {
		return current{}, err
	}
	return current{meta: meta, file: file, next: successor(dir, stem, k+1)}, nil
}

func successor(dir, stem string, k int) string {
	return dir + fmt.Sprintf("%s.icesql-%d.metadata.json", stem, k)
}

// readMetadata reads and parses one metadata file; the error says which file
// and why it is not table metadata.
func (w *Warehouse) readMetadata(ctx context.Context, file string) (table.Metadata, error) {
	data, err := w.store.ReadFile(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", file, err)
	}
	if err := checkFormatVersion(data); err != nil {
		return nil, fmt.Errorf("%s is not valid Iceberg table metadata: %w", file, err)
	}
	meta, err := ParseMetadata(data)
	if err != nil {
		return nil, fmt.Errorf("%s is not valid Iceberg table metadata: %w", file, err)
	}
	return withNameMapping(meta, data)
}

// checkFormatVersion names an unsupported format version, which iceberg-go
// reports only as "invalid or missing format-version".
func checkFormatVersion(data []byte) error {
	var head struct {
		FormatVersion *int `json:"format-version"`
	}
	if json.Unmarshal(data, &head) != nil || head.FormatVersion == nil {
		return nil // iceberg-go says what is wrong
	}
	if v := *head.FormatVersion; v < 1 || v > 3 {
		return fmt.Errorf("unsupported format version %d: icesql reads Iceberg format versions 1 to 3", v)
	}
	return nil
}

// withNameMapping gives a registered table without a name mapping the one
// its current schema implies. Tables migrated from Hive (and BigQuery's)
// have data files without Parquet field ids; Java Iceberg then falls back to
// matching columns, and iceberg-go v0.7.0 reads such files only through
// schema.name-mapping.default ("cannot convert <column> to Iceberg field,
// missing field_id" otherwise). iceberg-go writes the same mapping itself
// when it adds files; a commit through icesql keeps it.
func withNameMapping(meta table.Metadata, data []byte) (table.Metadata, error) {
	if _, ok := meta.Properties()[table.DefaultNameMappingKey]; ok || meta.CurrentSchema() == nil {
		return meta, nil
	}
	mapping, err := json.Marshal(meta.CurrentSchema().NameMapping())
	if err != nil {
		return nil, fmt.Errorf("derive name mapping: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	props := map[string]string{}
	if raw, ok := doc["properties"]; ok {
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, err
		}
	}
	props[table.DefaultNameMappingKey] = string(mapping)
	if doc["properties"], err = json.Marshal(props); err != nil {
		return nil, err
	}
	if data, err = json.Marshal(doc); err != nil {
		return nil, err
	}
	return ParseMetadata(data)
}

// ErrNoMetadata is returned when a folder given to RegisterTable holds no
// metadata file.
var ErrNoMetadata = errors.New("no Iceberg metadata file found")

// RegisterTable binds ident to an existing table without copying it.
// location is a metadata file (…/x.metadata.json) or a table folder, in
// which case the newest metadata file under <folder>/metadata (or the folder
// itself) is chosen by NewestMetadataFile.
func (w *Warehouse) RegisterTable(ctx context.Context, ident table.Identifier, location string) (*table.Table, error) {
	ns, name, err := splitIdent(ident)
	if err != nil {
		return nil, err
	}
	if err := w.checkNewName(ctx, ns, name); err != nil {
		return nil, err
	}
	file := strings.TrimRight(location, "/")
	if file == "" {
		file = location // the root folder
	}
	if err := w.checkForeign(file); err != nil {
		return nil, fmt.Errorf("register %s.%s: %w", ns, name, err)
	}
	if !strings.HasSuffix(file, ".json") {
		if file, err = w.NewestMetadataFile(ctx, file); err != nil {
			return nil, err
		}
	}
	if err := w.checkForeign(file); err != nil {
		return nil, fmt.Errorf("register %s.%s: %w", ns, name, err)
	}
	meta, err := w.readMetadata(ctx, file)
	if err != nil {
		return nil, fmt.Errorf("register %s.%s: %w", ns, name, err)
	}
	if err := w.checkForeign(meta.Location()); err != nil {
		return nil, fmt.Errorf("register %s.%s: the table's location: %w", ns, name, err)
	}
	if err := w.bindLink(ctx, ns, name, link{Location: meta.Location(), Metadata: file}); err != nil {
		return nil, err
	}
	return w.newTable(ident, meta, file), nil
}

// checkForeign refuses to register a location inside the warehouse or
// holding it. Tables in the warehouse are found by their folder, and
// everything else there is the catalog's or the server-side file area's
// (where a client may write files with SELECT ... INTO DUMPFILE): a table
// registered there would let maintenance (remove_orphan_files,
// expire_snapshots) delete other tables' files.
func (w *Warehouse) checkForeign(location string) error {
	if Inside(w.root, location, false) == nil {
		return fmt.Errorf("%w: %s is inside the warehouse %s; only tables outside it are registered", ErrOutside, location, w.root)
	}
	if Inside(location, w.root, false) == nil {
		return fmt.Errorf("%w: %s holds the warehouse %s", ErrOutside, location, w.root)
	}
	return nil
}

var (
	hadoopName  = regexp.MustCompile(`^v(\d+)\.`)
	catalogName = regexp.MustCompile(`^(\d+)-`)
)

// metadataVersion is the version a metadata file's name gives: N of
// vN.metadata.json (Hadoop catalog) and of NNNNN-<uuid>.metadata.json (every
// other catalog); ok is false for other names (vfinal.metadata.json).
func metadataVersion(name string) (int, bool) {
	for _, re := range []*regexp.Regexp{hadoopName, catalogName} {
		if m := re.FindStringSubmatch(name); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil {
				return v, true
			}
		}
	}
	return 0, false
}

// NewestMetadataFile picks the newest metadata file of a table folder. It
// never reads version-hint.text, which writers leave empty, stale, missing
// or misnamed. When every name carries a version the highest wins; when
// some do not (vfinal.metadata.json), the files are read and the one updated
// last wins, ties going to the higher version.
func (w *Warehouse) NewestMetadataFile(ctx context.Context, folder string) (string, error) {
	var dir string
	var names []string
	for _, d := range []string{Join(folder, "metadata"), folder} {
		entries, err := w.store.List(ctx, d)
		if err != nil {
			return "", fmt.Errorf("list %s: %w", d, err)
		}
		for _, e := range entries {
			if !e.IsDir && strings.HasSuffix(e.Name, ".metadata.json") && !strings.HasPrefix(e.Name, ".") {
				names = append(names, e.Name)
			}
		}
		if len(names) > 0 {
			dir = d
			break
		}
	}
	if len(names) == 0 {
		return "", fmt.Errorf("%w in %s or %s", ErrNoMetadata, folder, Join(folder, "metadata"))
	}
	type candidate struct {
		name    string
		version int
		updated int64
	}
	cands := make([]candidate, 0, len(names))
	allNumbered := true
	for _, n := range names {
		v, ok := metadataVersion(n)
		allNumbered = allNumbered && ok
		cands = append(cands, candidate{name: n, version: v})
	}
	if !allNumbered {
		for i := range cands {
			data, err := w.store.ReadFile(ctx, Join(dir, cands[i].name))
			if err != nil {
				return "", fmt.Errorf("read %s: %w", Join(dir, cands[i].name), err)
			}
			var head struct {
				LastUpdatedMs int64 `json:"last-updated-ms"`
			}
			// A file that is not JSON loses to every file that is.
			if json.Unmarshal(data, &head) == nil {
				cands[i].updated = head.LastUpdatedMs
			}
		}
	}
	sort.Slice(cands, func(i, j int) bool {
		if cands[i].updated != cands[j].updated {
			return cands[i].updated > cands[j].updated
		}
		if cands[i].version != cands[j].version {
			return cands[i].version > cands[j].version
		}
		return cands[i].name > cands[j].name
	})
	return Join(dir, cands[0].name), nil
}
