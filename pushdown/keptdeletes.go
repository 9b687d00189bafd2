package pushdown

import (
	"bytes"
	"cmp"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/google/uuid"
)

// keptDeletes matches the position delete files and deletion vectors of a
// snapshot's delete manifests to its data files, from kept manifest
// entries, as iceberg-go's planning does (its positional delete index and
// deletion-vector index, mirrored here; Java's DeleteFileIndex rules):
//
//   - a deletion vector applies to the data file it references when the
//     file's data sequence number is at most the vector's (either unknown:
//     it applies), and then no position delete file is applied to it;
//   - a position delete file that references one data file (its
//     referenced_data_file, or equal file_path bounds) applies to that file,
//     the others to the data files of their spec and partition, each when
//     the data file's sequence number is at most its own, and only where its
//     file_path bounds admit the data file's path;
//   - equality deletes are not matched here: a snapshot with any is planned
//     by iceberg-go.
type keptDeletes struct {
	byPath      map[string][]keptEntry
	byPartition map[string][]keptEntry
	vectors     map[string]keptEntry
}

// filePathFieldID is the field id of a position delete file's file_path.
const filePathFieldID = 2147483546

// newKeptDeletes indexes the live entries of a snapshot's delete manifests
// that the scan's filter might need (mightHold, as iceberg-go's metrics
// evaluator keeps delete entries). ok is false when the entries hold what
// this index does not match (equality deletes, two deletion vectors for a
// file, a partition value of a type it does not key), for iceberg-go to
// plan (or refuse).
func newKeptDeletes(entries [][]keptEntry, mightHold fileTest) (idx *keptDeletes, ok bool) {
	idx = &keptDeletes{}
	for _, es := range entries {
		for i := range es {
			e := &es[i]
			df := e.DataFile()
			if df.Count() == 0 || !mightHold(&e.stats) {
				continue
			}
			switch {
			case df.ContentType() != iceberg.EntryContentPosDeletes:
				return nil, false
			case table.IsDeletionVector(df):
				ref := df.ReferencedDataFile()
				if ref == nil {
					continue // iceberg-go indexes no vector without its file
				}
				if _, dup := idx.vectors[*ref]; dup {
					return nil, false
				}
				if idx.vectors == nil {
					idx.vectors = map[string]keptEntry{}
				}
				idx.vectors[*ref] = *e
			default:
				if path := referencedPath(df, &e.stats); path != "" {
					if idx.byPath == nil {
						idx.byPath = map[string][]keptEntry{}
					}
					idx.byPath[path] = append(idx.byPath[path], *e)
					continue
				}
				key, keyed := partitionKey(df.SpecID(), df.Partition())
				if !keyed {
					return nil, false
				}
				if idx.byPartition == nil {
					idx.byPartition = map[string][]keptEntry{}
				}
				idx.byPartition[key] = append(idx.byPartition[key], *e)
			}
		}
	}
	bySequence := func(a, b keptEntry) int { return cmp.Compare(a.SequenceNum(), b.SequenceNum()) }
	for _, es := range idx.byPath {
		slices.SortStableFunc(es, bySequence)
	}
	for _, es := range idx.byPartition {
		slices.SortStableFunc(es, bySequence)
	}
	return idx, true
}

// attach sets the deletes of the task of data entry e. ok is false when
// the data file's partition cannot be keyed.
func (idx *keptDeletes) attach(t *table.FileScanTask, e *keptEntry) (ok bool) {
	if idx == nil {
		return true
	}
	df := e.DataFile()
	seq := e.SequenceNum()
	if dv, has := idx.vectors[df.FilePath()]; has {
		if dvSeq := dv.SequenceNum(); dvSeq < 0 || seq <= dvSeq {
			t.DeletionVectorFiles = []iceberg.DataFile{dv.DataFile()}
			return true
		}
	}
	var out []iceberg.DataFile
	if len(idx.byPartition) > 0 {
		key, keyed := partitionKey(df.SpecID(), df.Partition())
		if !keyed {
			return false
		}
		for _, d := range fromSequence(idx.byPartition[key], seq) {
			if pathMayMatch(&d.stats, d.DataFile().Count(), df.FilePath()) {
				out = append(out, d.DataFile())
			}
		}
	}
	for _, d := range fromSequence(idx.byPath[df.FilePath()], seq) {
		out = append(out, d.DataFile())
	}
	t.DeleteFiles = out
	return true
}

// fromSequence is the tail of es (sorted by sequence number) from the first
// entry of sequence number seq or later.
func fromSequence(es []keptEntry, seq int64) []keptEntry {
	i, _ := slices.BinarySearchFunc(es, seq, func(e keptEntry, seq int64) int { return cmp.Compare(e.SequenceNum(), seq) })
	return es[i:]
}

// referencedPath is the one data file a position delete file deletes from:
// its referenced_data_file, or else the value of its file_path bounds when
// they are equal.
func referencedPath(df iceberg.DataFile, s *fileStats) string {
	if ref := df.ReferencedDataFile(); ref != nil && *ref != "" {
		return *ref
	}
	lower, upper := s.lower[filePathFieldID], s.upper[filePathFieldID]
	if len(lower) == 0 || !bytes.Equal(lower, upper) {
		return ""
	}
	return string(lower)
}

// pathMayMatch says whether a position delete file of count rows and
// statistics s might delete rows of the data file at path, judging by its
// file_path counts and bounds.
func pathMayMatch(s *fileStats, count int64, path string) bool {
	if count == 0 || s.onlyNulls(filePathFieldID) {
		return false
	}
	if lower := s.lower[filePathFieldID]; lower != nil && bytes.Compare(lower, []byte(path)) > 0 {
		return false
	}
	if upper := s.upper[filePathFieldID]; upper != nil && bytes.Compare(upper, []byte(path)) < 0 {
		return false
	}
	return true
}

// partitionKey is a key equal for two files exactly when they have the same
// spec and partition tuple, whichever Go type a value decoded as (an int32
// and a Date of the same day are one value). ok is false for a value of a
// type it does not know.
func partitionKey(spec int32, partition map[int]any) (string, bool) {
	ids := make([]int, 0, len(partition))
	for id := range partition {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	buf := strconv.AppendInt(nil, int64(spec), 10)
	buf = append(buf, '|')
	for _, id := range ids {
		buf = strconv.AppendInt(buf, int64(id), 10)
		buf = append(buf, ':')
		switch v := partition[id].(type) {
		case nil:
			buf = append(buf, 'z')
		case bool:
			buf = strconv.AppendBool(append(buf, 'b'), v)
		case int:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case int32:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case int64:
			buf = strconv.AppendInt(append(buf, 'i'), v, 10)
		case iceberg.Date:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case iceberg.Time:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case iceberg.Timestamp:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case iceberg.TimestampNano:
			buf = strconv.AppendInt(append(buf, 'i'), int64(v), 10)
		case float32:
			buf = strconv.AppendFloat(append(buf, 'f'), float64(v), 'x', -1, 64)
		case float64:
			buf = strconv.AppendFloat(append(buf, 'f'), v, 'x', -1, 64)
		case string:
			// Length first: a value holding the separators stays apart.
			buf = strconv.AppendInt(append(buf, 's'), int64(len(v)), 10)
			buf = append(append(buf, ':'), v...)
		case []byte:
			buf = hex.AppendEncode(append(buf, 'B'), v)
		case uuid.UUID:
			buf = hex.AppendEncode(append(buf, 'B'), v[:])
		case iceberg.Decimal:
			buf = fmt.Appendf(append(buf, 'd'), "%d:%s", v.Scale, v.Val.BigInt())
		default:
			return "", false
		}
		buf = append(buf, ';')
	}
	return string(buf), true
}
