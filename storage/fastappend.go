package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// A single-row INSERT through iceberg-go's append cost about 9 ms of CPU:
// its manifest and manifest list writers parse their Avro schema and
// allocate a compressor per file, the new manifest list is decoded again
// (emptybounds.go), the parent's manifest list is read and decoded from
// disk, and the commit goes through a transaction that builds the table's
// metadata one more time. The fast append does what that append does for
// the statements of a group commit, and nothing else:
//
//   - one manifest per statement (its data files, status ADDED, sequence
//     numbers inherited), and a manifest list of that manifest followed by
//     the parent's manifests, the data ones first when merging is on, as
//     iceberg-go's merge append orders them;
//   - when the data manifests are due to merge (commit.manifest.min-count-
//     to-merge of them, all within commit.manifest.target-size-bytes: one
//     bin), one manifest instead holding the statement's files as added
//     and every live file of the others as existing, as iceberg-go's merge
//     writes it;
//   - the parent's manifest list entries, and the entries of its data
//     manifests, kept in memory from the list this warehouse wrote last
//     (read once otherwise), never read back;
//   - the snapshot summary iceberg-go computes (added and total counts, the
//     statement's own properties), the snapshot chained on the branch head,
//     committed with the same updates and requirements through CommitTable.
//
// It takes only the case it does exactly like iceberg-go: format version 2
// or 3, files and every manifest carried forward of unpartitioned specs,
// data manifests of one spec that fit one merge bin. Anything else goes the
// iceberg-go way. TestFastAppendAsIcebergGo compares the two.

// errNotFast says the fast append does not take this commit.
var errNotFast = errors.New("not a fast append")

// keptLists remembers, per table, the entries of the manifest list the
// warehouse wrote last, so the next append carries them forward without
// reading the file.
type keptLists struct {
	mu    sync.Mutex
	m     map[uuid.UUID]keptManifestList
	files int // data file entries kept, of all tables
}

// Bounds of what keptLists holds: the data file entries (about a kilobyte
// each, statistics included) of one table and of all, and the tables. A
// table past the first keeps its list but not its entries: its merges read
// them, as iceberg-go's do.
const (
	keptFilesPerTable = 8192
	keptFiles         = 65536
	keptTables        = 1024
)

type keptManifestList struct {
	path    string
	entries []manifestRecord
	// files holds the entries of the list's data manifests that the
	// warehouse wrote or read, by manifest path, for merging them.
	files map[string][]keptEntry
}

// keptEntry is an entry of a data manifest.
type keptEntry struct {
	deleted      bool
	snapshot     int64
	seq, fileSeq int64
	file         iceberg.DataFile
}

func (k *keptLists) get(table uuid.UUID, path string) (keptManifestList, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	kept, ok := k.m[table]
	if !ok || kept.path != path {
		return keptManifestList{}, false
	}
	return kept, true
}

// put keeps list as the table's last list, with the entries of files
// that belong to its manifests.
func (k *keptLists) put(table uuid.UUID, list keptManifestList, files map[string][]keptEntry) {
	list.files = map[string][]keptEntry{}
	n := 0
	for _, m := range list.entries {
		if es, ok := files[m.path]; ok {
			list.files[m.path] = es
			n += len(es)
		}
	}
	if n > keptFilesPerTable {
		list.files, n = nil, 0
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if old, ok := k.m[table]; ok {
		k.files -= old.fileCount()
	}
	if k.m == nil || len(k.m) >= keptTables || k.files+n > keptFiles {
		k.m, k.files = map[uuid.UUID]keptManifestList{}, 0
	}
	k.m[table] = list
	k.files += n
}

// fileCount is the number of data file entries l keeps.
func (l keptManifestList) fileCount() int {
	n := 0
	for _, es := range l.files {
		n += len(es)
	}
	return n
}

// manifestRecord is one entry of a manifest list, as written.
type manifestRecord struct {
	path                                 string
	length                               int64
	specID                               int32
	content                              iceberg.ManifestContent
	seq, minSeq                          int64
	addedSnapshot                        int64
	addedFiles, existingFiles, deleted   int32
	addedRows, existingRows, deletedRows int64
	partitions                           []iceberg.FieldSummary
	keyMetadata                          []byte
	firstRowID                           *int64
	version                              int
}

func recordOf(m iceberg.ManifestFile) manifestRecord {
	return manifestRecord{
		path: m.FilePath(), length: m.Length(), specID: m.PartitionSpecID(), content: m.ManifestContent(),
		seq: m.SequenceNum(), minSeq: m.MinSequenceNum(), addedSnapshot: m.SnapshotID(),
		addedFiles: m.AddedDataFiles(), existingFiles: m.ExistingDataFiles(), deleted: m.DeletedDataFiles(),
		addedRows: m.AddedRows(), existingRows: m.ExistingRows(), deletedRows: m.DeletedRows(),
		partitions: m.Partitions(), keyMetadata: m.KeyMetadata(), firstRowID: m.FirstRowID(), version: m.Version(),
	}
}

// field gives the record's fields by their names in iceberg-go's manifest
// list schema.
func (r *manifestRecord) field(name string) (any, error) {
	switch name {
	case "manifest_path":
		return r.path, nil
	case "manifest_length":
		return r.length, nil
	case "partition_spec_id":
		return r.specID, nil
	case "content":
		return int(r.content), nil
	case "sequence_number":
		return r.seq, nil
	case "min_sequence_number":
		return r.minSeq, nil
	case "added_snapshot_id":
		return r.addedSnapshot, nil
	case "added_files_count":
		return r.addedFiles, nil
	case "existing_files_count":
		return r.existingFiles, nil
	case "deleted_files_count":
		return r.deleted, nil
	case "added_rows_count":
		return r.addedRows, nil
	case "existing_rows_count":
		return r.existingRows, nil
	case "deleted_rows_count":
		return r.deletedRows, nil
	case "partitions":
		if r.partitions == nil {
			return []iceberg.FieldSummary{}, nil
		}
		return r.partitions, nil
	case "key_metadata":
		if r.keyMetadata == nil {
			return nil, nil
		}
		return r.keyMetadata, nil
	case "first_row_id":
		if r.firstRowID == nil {
			return nil, nil
		}
		return *r.firstRowID, nil
	}
	return nil, fmt.Errorf("manifest list field %q", name)
}

// entryField gives the fields of a manifest entry that adds df in
// snapshot, by their names in iceberg-go's manifest schema.
func entryField(snapshot int64, df iceberg.DataFile) recordValue {
	return func(name string) (any, error) {
		switch name {
		case "status":
			return int(iceberg.EntryStatusADDED), nil
		case "snapshot_id":
			return snapshot, nil
		case "sequence_number", "file_sequence_number":
			return nil, nil // inherited from the manifest list
		case "data_file":
			return dataFileField(df), nil
		}
		return nil, fmt.Errorf("manifest entry field %q", name)
	}
}

// existingEntryField gives the fields of e carried into a merged manifest
// as an existing entry.
func existingEntryField(e keptEntry) recordValue {
	return func(name string) (any, error) {
		switch name {
		case "status":
			return int(iceberg.EntryStatusEXISTING), nil
		case "snapshot_id":
			return e.snapshot, nil
		case "sequence_number":
			return e.seq, nil
		case "file_sequence_number":
			return e.fileSeq, nil
		case "data_file":
			return dataFileField(e.file), nil
		}
		return nil, fmt.Errorf("manifest entry field %q", name)
	}
}

func dataFileField(df iceberg.DataFile) recordValue {
	counts := func(m map[int]int64) any {
		if m == nil {
			return nil
		}
		return m
	}
	bounds := func(m map[int][]byte) any {
		if m == nil {
			return nil
		}
		return m
	}
	return func(name string) (any, error) {
		switch name {
		case "content":
			return int(df.ContentType()), nil
		case "file_path":
			return df.FilePath(), nil
		case "file_format":
			return string(df.FileFormat()), nil
		case "partition":
			return recordValue(func(name string) (any, error) {
				return nil, fmt.Errorf("partition field %q", name)
			}), nil
		case "record_count":
			return df.Count(), nil
		case "file_size_in_bytes":
			return df.FileSizeBytes(), nil
		case "column_sizes":
			return counts(df.ColumnSizes()), nil
		case "value_counts":
			return counts(df.ValueCounts()), nil
		case "null_value_counts":
			return counts(df.NullValueCounts()), nil
		case "nan_value_counts":
			return counts(df.NaNValueCounts()), nil
		case "lower_bounds":
			return bounds(df.LowerBoundValues()), nil
		case "upper_bounds":
			return bounds(df.UpperBoundValues()), nil
		case "key_metadata":
			if k := df.KeyMetadata(); k != nil {
				return k, nil
			}
			return nil, nil
		case "split_offsets":
			if s := df.SplitOffsets(); s != nil {
				return s, nil
			}
			return nil, nil
		case "equality_ids":
			if ids := df.EqualityFieldIDs(); ids != nil {
				return ids, nil
			}
			return nil, nil
		case "sort_order_id":
			if id := df.SortOrderID(); id != nil {
				return *id, nil
			}
			return nil, nil
		case "first_row_id":
			if id := df.FirstRowID(); id != nil {
				return *id, nil
			}
			return nil, nil
		case "referenced_data_file":
			if ref := df.ReferencedDataFile(); ref != nil {
				return *ref, nil
			}
			return nil, nil
		case "content_offset":
			if v := df.ContentOffset(); v != nil {
				return *v, nil
			}
			return nil, nil
		case "content_size_in_bytes":
			if v := df.ContentSizeInBytes(); v != nil {
				return *v, nil
			}
			return nil, nil
		}
		return nil, fmt.Errorf("data file field %q", name)
	}
}

// manifestSchema is the schema iceberg-go writes data manifests of an
// unpartitioned spec with, for format version v.
func (w *Warehouse) manifestSchema(v int) (parsedSchema, error) {
	return w.avro.get("manifest/"+strconv.Itoa(v), func() (map[string][]byte, error) {
		var buf bytesWriter
		sc := iceberg.NewSchema(0)
		mw, err := iceberg.NewManifestWriter(v, &buf, *iceberg.UnpartitionedSpec, sc, 1)
		if err != nil {
			return nil, err
		}
		if err := mw.Close(); err != nil && !errors.Is(err, iceberg.ErrEmptyManifest) {
			return nil, err
		}
		return fileMetadata(buf.b)
	})
}

// manifestListSchema is the schema iceberg-go writes manifest lists with,
// for format version v (2 or 3).
func (w *Warehouse) manifestListSchema(v int) (parsedSchema, error) {
	return w.avro.get("list/"+strconv.Itoa(v), func() (map[string][]byte, error) {
		var buf bytesWriter
		var lw *iceberg.ManifestListWriter
		var err error
		switch v {
		case 2:
			lw, err = iceberg.NewManifestListWriterV2(&buf, 1, 1, nil)
		case 3:
			lw, err = iceberg.NewManifestListWriterV3(&buf, 1, 1, 0, nil)
		default:
			err = fmt.Errorf("manifest list version %d", v)
		}
		if err != nil {
			return nil, err
		}
		if err := lw.Close(); err != nil {
			return nil, err
		}
		return fileMetadata(buf.b)
	})
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// fastAppendGroup commits appends, in order, as a chain of append snapshots
// on table ident's main branch, the way commitGroup's iceberg-go
// transaction would. It returns errNotFast, having changed nothing, when
// the table or the appends are not a case it takes; a *badAppend when one
// append's files cannot be added.
func (w *Warehouse) fastAppendGroup(ctx context.Context, ident table.Identifier, appends []*groupedAppend) (*table.Table, error) {
	if w.slowAppends {
		return nil, errNotFast
	}
	tbl, err := w.LoadTable(ctx, ident)
	if err != nil {
		return nil, err
	}
	meta := tbl.Metadata()
	version := meta.Version()
	props := mergingAppends(tbl, w).Properties()
	if version < 2 || version > 3 || props.GetBool(table.MetadataDeleteAfterCommitEnabledKey, table.MetadataDeleteAfterCommitEnabledDefault) {
		return nil, errNotFast
	}
	for _, spec := range meta.PartitionSpecs() {
		if !spec.IsUnpartitioned() {
			return nil, errNotFast
		}
	}
	merge := props.GetBool(table.ManifestMergeEnabledKey, table.ManifestMergeEnabledDefault)
	target := int64(props.GetInt(table.ManifestTargetSizeBytesKey, table.ManifestTargetSizeBytesDefault))
	minCount := props.GetInt(table.ManifestMinMergeCountKey, table.ManifestMinMergeCountDefault)

	fsys, err := tbl.FS(ctx)
	if err != nil {
		return nil, err
	}
	wfs, ok := withoutRepair(fsys).(icebergio.WriteFileIO)
	if !ok {
		return nil, errNotFast
	}
	locations, err := tbl.LocationProvider()
	if err != nil {
		return nil, err
	}
	parent := meta.SnapshotByName(table.MainBranch)
	var manifests []manifestRecord
	entriesOf := map[string][]keptEntry{}
	if parent != nil {
		kept, err := w.parentManifests(meta.TableUUID(), parent, fsys)
		if err != nil {
			return nil, err
		}
		manifests, entriesOf = kept.entries, maps.Clone(kept.files)
		if entriesOf == nil {
			entriesOf = map[string][]keptEntry{}
		}
		for _, m := range manifests {
			if len(m.partitions) > 0 || m.version > version || (version == 3 && m.content == iceberg.ManifestContentData && m.firstRowID == nil) {
				return nil, errNotFast
			}
		}
	}
	entrySchema, err := w.manifestSchema(version)
	if err != nil {
		return nil, err
	}
	listSchema, err := w.manifestListSchema(version)
	if err != nil {
		return nil, err
	}
	schemaJSON, err := json.Marshal(meta.CurrentSchema())
	if err != nil {
		return nil, err
	}

	var written []string
	done := false
	defer func() {
		if !done {
			for _, p := range written {
				_ = wfs.Remove(p)
			}
		}
	}()
	write := func(path string, data []byte) error {
		f, err := wfs.Create(path)
		if err != nil {
			return err
		}
		written = append(written, path)
		if _, err := f.Write(data); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	}

	var updates []table.Update
	seq := meta.LastSequenceNumber()
	nextRowID := meta.NextRowID()
	var parentID *int64
	var parentTS int64
	var parentSummary iceberg.Properties
	if parent != nil {
		parentID, parentTS = &parent.SnapshotID, parent.TimestampMs
		if parent.Summary != nil {
			parentSummary = parent.Summary.Properties
		}
	}
	var lastList string
	for i, a := range appends {
		files := a.files
		paths := make(map[string]bool, len(files))
		for _, f := range files {
			if f == nil || f.ContentType() != iceberg.EntryContentData || len(f.Partition()) > 0 ||
				meta.PartitionSpecByID(int(f.SpecID())) == nil || f.FilePath() == "" || paths[f.FilePath()] {
				return nil, errNotFast // iceberg-go's checks say what is wrong
			}
			switch f.FileFormat() {
			case iceberg.ParquetFile, iceberg.OrcFile, iceberg.AvroFile:
			default:
				return nil, errNotFast
			}
			paths[f.FilePath()] = true
		}
		if version == 3 {
			if files, err = firstRowIDsFrom(meta, nextRowID, files); err != nil {
				return nil, &badAppend{i: i, err: err}
			}
		}
		snapshotID := w.newSnapshotID(meta)
		commit := uuid.New()
		seq++

		// The manifest of the statement's files.
		var enc avroEnc
		for _, f := range files {
			if err := enc.value(entrySchema.root, entryField(snapshotID, f)); err != nil {
				return nil, errNotFast
			}
		}
		specID := meta.DefaultPartitionSpec()
		manifestMeta := map[string][]byte{
			"avro.schema":       []byte(entrySchema.text),
			"schema":            schemaJSON,
			"schema-id":         []byte(strconv.Itoa(meta.CurrentSchema().ID)),
			"partition-spec":    []byte("[]"),
			"partition-spec-id": []byte(strconv.Itoa(specID)),
			"format-version":    []byte(strconv.Itoa(version)),
			"content":           []byte(iceberg.ManifestContentData.String()),
		}
		addedEntries := enc.buf
		data, err := ocfFile(manifestMeta, len(files), addedEntries)
		if err != nil {
			return nil, err
		}
		manifestPath := locations.NewMetadataLocation(fmt.Sprintf("%s-m1.avro", commit))
		added := manifestRecord{path: manifestPath, length: int64(len(data)), specID: int32(specID),
			content: iceberg.ManifestContentData, seq: seq, minSeq: seq, addedSnapshot: snapshotID, version: version}
		var addedSize, addedRecords int64
		for _, f := range files {
			added.addedFiles++
			added.addedRows += f.Count()
			addedSize += f.FileSizeBytes()
		}
		addedRecords = added.addedRows
		var addedRows int64
		if version == 3 {
			first := nextRowID
			added.firstRowID = &first
			addedRows = added.addedRows
		}

		// The manifest list: iceberg-go's order, unless it would merge.
		var dataManifests, deleteManifests []manifestRecord
		dataManifests = append(dataManifests, added)
		var dataSize int64 = added.length
		for _, m := range manifests {
			if m.content == iceberg.ManifestContentData || !merge {
				dataManifests = append(dataManifests, m)
				if m.content == iceberg.ManifestContentData {
					dataSize += m.length
					if m.specID != added.specID && merge {
						return nil, errNotFast
					}
				}
			} else {
				deleteManifests = append(deleteManifests, m)
			}
		}
		if merge && len(dataManifests) > 1 && (dataSize > target || target <= 0) {
			return nil, errNotFast // more than one bin: iceberg-go packs them
		}
		kept := make([]keptEntry, len(files))
		for j, f := range files {
			kept[j] = keptEntry{snapshot: snapshotID, seq: seq, fileSeq: seq, file: f}
		}
		if merge && len(dataManifests) > 1 && len(dataManifests) >= minCount {
			// One bin of every data manifest, due to merge: rewritten as
			// one, the statement's files added, the others' live files
			// existing.
			if entriesOf, err = manifestEntries(parent, manifests, entriesOf, fsys); err != nil {
				return nil, err
			}
			merged := manifestRecord{path: manifestPath, specID: added.specID, content: iceberg.ManifestContentData,
				seq: seq, minSeq: -1, addedSnapshot: snapshotID, version: version,
				addedFiles: added.addedFiles, addedRows: added.addedRows}
			count := len(files)
			for _, m := range dataManifests[1:] {
				for _, e := range entriesOf[m.path] {
					if e.deleted {
						continue
					}
					if e.seq < 0 || e.fileSeq < 0 {
						return nil, errNotFast
					}
					if err := enc.value(entrySchema.root, existingEntryField(e)); err != nil {
						return nil, errNotFast
					}
					count++
					merged.existingFiles++
					merged.existingRows += e.file.Count()
					if merged.minSeq < 0 || e.seq < merged.minSeq {
						merged.minSeq = e.seq
					}
					kept = append(kept, e)
				}
			}
			if merged.minSeq < 0 {
				merged.minSeq = seq
			}
			if data, err = ocfFile(manifestMeta, count, enc.buf); err != nil {
				return nil, err
			}
			merged.length = int64(len(data))
			if version == 3 {
				first := nextRowID
				merged.firstRowID = &first
				addedRows = merged.addedRows + merged.existingRows
			}
			added, dataManifests = merged, []manifestRecord{merged}
		}
		if err := write(manifestPath, data); err != nil {
			return nil, err
		}
		entriesOf[manifestPath] = kept
		list := append(dataManifests, deleteManifests...)
		enc = avroEnc{}
		for j := range list {
			if err := enc.value(listSchema.root, recordValue(list[j].field)); err != nil {
				return nil, fmt.Errorf("write manifest list: %w", err)
			}
		}
		parentText := "null"
		if parentID != nil {
			parentText = strconv.FormatInt(*parentID, 10)
		}
		listMeta := map[string][]byte{
			"avro.schema":        []byte(listSchema.text),
			"format-version":     []byte(strconv.Itoa(version)),
			"snapshot-id":        []byte(strconv.FormatInt(snapshotID, 10)),
			"sequence-number":    []byte(strconv.FormatInt(seq, 10)),
			"parent-snapshot-id": []byte(parentText),
		}
		if version == 3 {
			listMeta["first-row-id"] = []byte(strconv.FormatInt(nextRowID, 10))
		}
		if data, err = ocfFile(listMeta, len(list), enc.buf); err != nil {
			return nil, err
		}
		listPath := locations.NewMetadataLocation(fmt.Sprintf("snap-%d-0-%s.avro", snapshotID, commit))
		if err := write(listPath, data); err != nil {
			return nil, err
		}

		summary := appendSummary(addedSize, int64(len(files)), addedRecords, a.summary, parentSummary)
		schemaID := meta.CurrentSchema().ID
		snap := table.Snapshot{
			SnapshotID:       snapshotID,
			ParentSnapshotID: parentID,
			SequenceNumber:   seq,
			ManifestList:     listPath,
			Summary:          &table.Summary{Operation: table.OpAppend, Properties: summary},
			SchemaID:         &schemaID,
			// Never older than the parent: TIMESTAMP AS OF picks by the log.
			TimestampMs: max(time.Now().UnixMilli(), parentTS),
		}
		if version == 3 {
			first := nextRowID
			snap.FirstRowID, snap.AddedRows = &first, &addedRows
			nextRowID += addedRows
		}
		updates = append(updates, table.NewAddSnapshotUpdate(&snap), mainRefUpdate(meta, snapshotID))
		id := snapshotID
		parentID, parentTS, parentSummary = &id, snap.TimestampMs, summary
		manifests, lastList = list, listPath
	}

	var base *int64
	if parent != nil {
		base = &parent.SnapshotID
	}
	reqs := []table.Requirement{table.AssertTableUUID(meta.TableUUID()), table.AssertRefSnapshotID(table.MainBranch, base)}
	committed, loc, err := w.CommitTable(ctx, ident, reqs, updates)
	if err != nil {
		if !lostRace(err) {
			done = true // the commit may have taken effect: keep what it names
		}
		return nil, err
	}
	done = true
	w.fastAppends.Add(1)
	w.lists.put(meta.TableUUID(), keptManifestList{path: lastList, entries: manifests}, entriesOf)
	return w.newTable(ident, committed, loc), nil
}

// parentManifests returns the entries of the manifest list of snapshot
// parent: kept from this warehouse's last write to the table, or read.
func (w *Warehouse) parentManifests(tableID uuid.UUID, parent *table.Snapshot, fsys icebergio.IO) (keptManifestList, error) {
	if kept, ok := w.lists.get(tableID, parent.ManifestList); ok {
		return kept, nil
	}
	files, err := parent.Manifests(fsys)
	if err != nil {
		return keptManifestList{}, err
	}
	out := keptManifestList{path: parent.ManifestList, entries: make([]manifestRecord, len(files)), files: map[string][]keptEntry{}}
	for i, f := range files {
		out.entries[i] = recordOf(f)
	}
	return out, nil
}

// manifestEntries returns the entries of the data manifests of list,
// from files or read.
func manifestEntries(parent *table.Snapshot, list []manifestRecord, files map[string][]keptEntry, fsys icebergio.IO) (map[string][]keptEntry, error) {
	out := maps.Clone(files)
	if out == nil {
		out = map[string][]keptEntry{}
	}
	var all []iceberg.ManifestFile
	for _, m := range list {
		if _, ok := out[m.path]; ok || m.content != iceberg.ManifestContentData {
			continue
		}
		if all == nil {
			var err error
			if all, err = parent.Manifests(fsys); err != nil {
				return nil, err
			}
		}
		for _, f := range all {
			if f.FilePath() != m.path {
				continue
			}
			kept := []keptEntry{}
			for e, err := range f.Entries(fsys, false) {
				if err != nil {
					return nil, err
				}
				fileSeq := int64(-1)
				if s := e.FileSequenceNum(); s != nil {
					fileSeq = *s
				}
				kept = append(kept, keptEntry{deleted: e.Status() == iceberg.EntryStatusDELETED, snapshot: e.SnapshotID(),
					seq: e.SequenceNum(), fileSeq: fileSeq, file: e.DataFile()})
			}
			out[m.path] = kept
		}
		if _, ok := out[m.path]; !ok {
			return nil, fmt.Errorf("manifest %s is not in the parent's list", m.path)
		}
	}
	return out, nil
}

// newSnapshotID draws a snapshot id as iceberg-go does (positive, from a
// random UUID), not one meta already has.
func (w *Warehouse) newSnapshotID(meta table.Metadata) int64 {
	for {
		u := uuid.New()
		var id uint64
		for i := range 8 {
			id |= uint64(u[i]^u[i+8]) << (8 * i)
		}
		out := int64(id & (1<<63 - 1))
		if out != 0 && meta.SnapshotByID(out) == nil {
			return out
		}
	}
}

// mainRefUpdate points main at snapshot id, keeping the branch's retention
// settings as iceberg-go's append does.
func mainRefUpdate(meta table.Metadata, id int64) table.Update {
	var maxRefAge, maxSnapshotAge int64
	var minSnapshots int
	for name, ref := range meta.Refs() {
		if name != table.MainBranch || ref.SnapshotRefType != table.BranchRef {
			continue
		}
		if ref.MaxRefAgeMs != nil {
			maxRefAge = *ref.MaxRefAgeMs
		}
		if ref.MaxSnapshotAgeMs != nil {
			maxSnapshotAge = *ref.MaxSnapshotAgeMs
		}
		if ref.MinSnapshotsToKeep != nil {
			minSnapshots = *ref.MinSnapshotsToKeep
		}
	}
	return table.NewSetSnapshotRefUpdate(table.MainBranch, id, table.BranchRef, maxRefAge, maxSnapshotAge, minSnapshots)
}

// appendSummary is the summary iceberg-go gives an append of data files of
// unpartitioned specs: what was added, the statement's own properties over
// it, the totals carried from the parent's summary, and the environment.
func appendSummary(size, files, records int64, own, previous iceberg.Properties) iceberg.Properties {
	out := iceberg.Properties{}
	positive := func(key string, v int64) {
		if v > 0 {
			out[key] = strconv.FormatInt(v, 10)
		}
	}
	positive("added-files-size", size)
	positive("added-data-files", files)
	positive("added-records", records)
	maps.Copy(out, own)
	if previous == nil {
		previous = iceberg.Properties{}
	}
	total := func(key, addedKey, removedKey string) {
		v := previous.GetInt64(key, 0) + out.GetInt64(addedKey, 0) - out.GetInt64(removedKey, 0)
		if v >= 0 {
			out[key] = strconv.FormatInt(v, 10)
		}
	}
	total("total-data-files", "added-data-files", "deleted-data-files")
	total("total-delete-files", "added-delete-files", "removed-delete-files")
	total("total-records", "added-records", "deleted-records")
	total("total-files-size", "added-files-size", "removed-files-size")
	total("total-position-deletes", "added-position-deletes", "removed-position-deletes")
	total("total-equality-deletes", "added-equality-deletes", "removed-equality-deletes")
	// The environment (iceberg-go's version, the engine's name) last, as
	// iceberg-go and Java give it precedence.
	maps.Copy(out, iceberg.EnvironmentContext())
	return out
}

// withoutRepair is fsys without the layer that re-encodes the manifest
// lists iceberg-go writes (legacymanifest.go): the fast append writes them
// as they should be.
func withoutRepair(fsys icebergio.IO) icebergio.IO {
	switch f := fsys.(type) {
	case rawLocationIO:
		f.IO = withoutRepair(f.IO)
		return f
	case manifestRepairIO:
		return f.IO
	}
	return fsys
}
