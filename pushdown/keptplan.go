package pushdown

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/metrics"
	"github.com/apache/iceberg-go/table"
)

// ManifestSource lets a Plan plan scans from the decoded manifests of a
// ManifestCache (manifestcache.go) instead of having iceberg-go decode them
// all again.
type ManifestSource struct {
	Cache *ManifestCache
	// Table is the table scanned: its IO reads the manifests not kept yet,
	// its properties give the split size.
	Table *table.Table
}

// keptTasks plans scan from kept manifests where that planning is
// iceberg-go's to the task, with no file iceberg-go would split:
//
//   - data manifests of any spec; of a partitioned one only when the row
//     filter names no column a partition field derives from. Then
//     iceberg-go prunes no manifest or file by partition, and each task's
//     residual is the whole filter, which ReadTasks drops as it drops ours
//     (none). A filter on a partition source is iceberg-go's: it skips
//     whole manifests by their partition summaries (a day's range reads
//     one manifest of many, where this would decode them all once), and
//     it can leave a residual of "always true" that reads a Hive-style
//     file, which may lack its identity-partitioned column, unfiltered;
//   - delete manifests of position deletes and deletion vectors, matched to
//     the data files as iceberg-go matches them (keptdeletes.go); a
//     snapshot with equality deletes is iceberg-go's to plan.
//
// ok is false for any other scan, which iceberg-go then plans.
//
// The tasks read what iceberg-go's do: each live data file the row filter
// might match, in manifest order, whole, with its row-lineage constants and
// its deletes. Which files the filter rules out is judged from their column
// bounds and counts (fileTest), as iceberg-go's inclusive metrics evaluator
// does for the types judged here; a file that cannot be judged is kept, and
// the rows read are filtered either way.
func (p *Planned) keptTasks(ctx context.Context, scan *table.Scan) (tasks []table.FileScanTask, report *metrics.ScanReport, ok bool, err error) {
	src := p.source
	snap := scan.Snapshot()
	if src.Cache == nil || src.Table == nil || snap == nil || snap.ManifestList == "" {
		return nil, nil, false, nil
	}
	schema, err := scan.Projection()
	if err != nil {
		return nil, nil, false, nil
	}
	var bound iceberg.BooleanExpression
	if p.Filter != nil && !p.Filter.Equals(iceberg.AlwaysTrue{}) {
		// iceberg-go binds the filter to the scan's schema, case
		// sensitively; a filter on a column the scan does not read is left
		// to it.
		noNot, err := iceberg.RewriteNotExpr(p.Filter)
		if err != nil {
			return nil, nil, false, nil
		}
		if bound, err = iceberg.BindExpr(schema, noNot, true); err != nil {
			return nil, nil, false, nil
		}
	}
	mightHold := keepFile
	if bound != nil {
		mightHold = compileFileTest(bound)
	}
	fsys, err := src.Table.FS(ctx)
	if err != nil {
		return nil, nil, false, nil
	}
	fsys = p.IO(fsys)
	manifests, err := src.Cache.manifestList(fsys, snap.ManifestList)
	if err != nil {
		return nil, nil, false, err
	}
	meta := src.Table.Metadata()
	var scanned, deleteManifests []iceberg.ManifestFile
	dataManifests, partitioned := 0, false
	minSeq := int64(math.MaxInt64)
	for _, m := range manifests {
		spec := meta.PartitionSpecByID(int(m.PartitionSpecID()))
		if spec == nil {
			return nil, nil, false, nil
		}
		partitioned = partitioned || !spec.IsUnpartitioned()
		switch m.ManifestContent() {
		case iceberg.ManifestContentData:
			dataManifests++
			minSeq = min(minSeq, m.MinSequenceNum())
			if m.HasAddedFiles() || m.HasExistingFiles() {
				scanned = append(scanned, m)
			}
		case iceberg.ManifestContentDeletes:
			deleteManifests = append(deleteManifests, m)
		default:
			return nil, nil, false, nil
		}
	}
	if partitioned && bound != nil && filtersPartitionSource(bound, meta) {
		return nil, nil, false, nil
	}
	if minSeq == math.MaxInt64 {
		minSeq = 0
	}
	// Delete manifests older than every data file delete none of them.
	deleteManifests = slices.DeleteFunc(deleteManifests, func(m iceberg.ManifestFile) bool { return m.SequenceNum() < minSeq })
	entries, err := src.Cache.entriesOf(ctx, fsys, append(slices.Clip(scanned), deleteManifests...))
	if err != nil {
		return nil, nil, false, err
	}
	var deletes *keptDeletes
	if len(deleteManifests) > 0 {
		if deletes, ok = newKeptDeletes(entries[len(scanned):], mightHold); !ok {
			return nil, nil, false, nil
		}
	}
	split := src.Table.Properties().GetInt64(table.ReadSplitTargetSizeKey, table.ReadSplitTargetSizeDefault)
	var size int64
	deleteFiles := map[string]bool{}
	tasks = []table.FileScanTask{}
	for _, es := range entries[:len(scanned)] {
		for i := range es {
			e := &es[i]
			df := e.DataFile()
			if df.ContentType() != iceberg.EntryContentData || df.FileSizeBytes() > split {
				return nil, nil, false, nil
			}
			if df.Count() == 0 || !mightHold(&e.stats) {
				continue
			}
			t := table.FileScanTask{File: df, Length: df.FileSizeBytes(), FirstRowID: df.FirstRowID()}
			if seq := e.SequenceNum(); seq >= 0 {
				t.DataSequenceNumber = &seq
			}
			if !deletes.attach(&t, e) {
				return nil, nil, false, nil
			}
			for _, d := range slices.Concat(t.DeleteFiles, t.DeletionVectorFiles) {
				deleteFiles[d.FilePath()] = true
			}
			tasks = append(tasks, t)
			size += df.FileSizeBytes()
		}
	}
	count := func(n int) *metrics.CounterResult { return metrics.NewCounterResult(metrics.UnitCount, int64(n)) }
	report = &metrics.ScanReport{
		SnapshotID: snap.SnapshotID,
		SchemaID:   schema.ID,
		Metrics: metrics.ScanMetricsResult{
			ResultDataFiles:        count(len(tasks)),
			ResultDeleteFiles:      count(len(deleteFiles)),
			TotalDataManifests:     count(dataManifests),
			TotalDeleteManifests:   count(len(manifests) - dataManifests),
			ScannedDataManifests:   count(len(scanned)),
			ScannedDeleteManifests: count(len(deleteManifests)),
			SkippedDataManifests:   count(dataManifests - len(scanned)),
			TotalFileSizeInBytes:   metrics.NewCounterResult(metrics.UnitBytes, size),
		},
	}
	return tasks, report, true, nil
}

// filtersPartitionSource says whether the bound filter names a column that
// a partition field of one of meta's specs derives from.
func filtersPartitionSource(bound iceberg.BooleanExpression, meta table.Metadata) bool {
	ids, err := iceberg.ExtractFieldIDs(bound)
	if err != nil {
		return true
	}
	for _, spec := range meta.PartitionSpecs() {
		for _, f := range spec.Fields() {
			if slices.Contains(ids, f.SourceID()) {
				return true
			}
			for _, src := range f.SourceIDs {
				if slices.Contains(ids, src) {
					return true
				}
			}
		}
	}
	return false
}

// manifestReads bounds the manifests one plan decodes at once.
const manifestReads = 4

// entriesOf returns the live entries of each manifest, decoding the ones
// not kept a few at a time.
func (c *ManifestCache) entriesOf(ctx context.Context, fsys icebergio.IO, manifests []iceberg.ManifestFile) ([][]keptEntry, error) {
	out := make([][]keptEntry, len(manifests))
	errs := make([]error, len(manifests))
	sem := make(chan struct{}, manifestReads)
	var wg sync.WaitGroup
	for i, m := range manifests {
		if err := ctx.Err(); err != nil {
			wg.Wait()
			return nil, err
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			out[i], errs[i] = c.liveEntries(fsys, m)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fileTest says whether a data file of the given statistics might hold a
// row a bound filter (without NOT) accepts, judging by its value and NULL
// counts and its column bounds, as iceberg-go's inclusive metrics evaluator
// does. It is compiled once per plan (compileFileTest): a plan tests every
// kept file, and walking the expression and converting its literals for
// each was most of a point lookup's planning on a table of many files.
type fileTest func(*fileStats) bool

func keepFile(*fileStats) bool { return true }

// compileFileTest compiles bound; a filter it cannot compile keeps every
// file.
func compileFileTest(bound iceberg.BooleanExpression) fileTest {
	t, err := iceberg.VisitExpr(bound, fileTests{})
	if err != nil {
		return keepFile
	}
	return t
}

// fileTests builds the fileTest of a bound filter without NOT.
type fileTests struct{}

func (fileTests) VisitTrue() fileTest                            { return keepFile }
func (fileTests) VisitFalse() fileTest                           { return func(*fileStats) bool { return false } }
func (fileTests) VisitNot(fileTest) fileTest                     { return keepFile } // RewriteNotExpr removed NOT; unknown
func (fileTests) VisitUnbound(iceberg.UnboundPredicate) fileTest { return keepFile }

func (fileTests) VisitAnd(l, r fileTest) fileTest {
	return func(s *fileStats) bool { return l(s) && r(s) }
}

func (fileTests) VisitOr(l, r fileTest) fileTest {
	return func(s *fileStats) bool { return l(s) || r(s) }
}

func (fileTests) VisitBound(p iceberg.BoundPredicate) fileTest {
	if _, ok := p.Term().(iceberg.BoundReference); !ok {
		return keepFile // a transform of a column: no statistics
	}
	field := p.Ref().Field()
	id, typ, op := field.ID, field.Type, p.Op()
	switch op {
	case iceberg.OpIsNull:
		return func(s *fileStats) bool {
			nulls, hasNulls := s.nulls[id]
			return !hasNulls || nulls != 0
		}
	case iceberg.OpNotNull:
		return func(s *fileStats) bool { return !s.onlyNulls(id) }
	case iceberg.OpIsNan, iceberg.OpNotNan, iceberg.OpNEQ, iceberg.OpNotIn, iceberg.OpNotStartsWith:
		return keepFile
	}
	// The values to compare with; unknown (any bounds might match) when
	// a literal has no comparable form.
	var values []bound
	known := true
	switch p := p.(type) {
	case iceberg.BoundLiteralPredicate:
		v, ok := value(p.Literal())
		values, known = []bound{v}, ok
	case iceberg.BoundSetPredicate:
		known = op == iceberg.OpIn
		for _, lit := range p.Literals().Members() {
			v, ok := value(lit)
			known = known && ok
			values = append(values, v)
		}
		op = iceberg.OpEQ
	default:
		known = false
	}
	return func(s *fileStats) bool {
		if s.onlyNulls(id) {
			return false // no comparison holds on NULL
		}
		lo, lok := fileBound(typ, s.lower[id])
		hi, hok := fileBound(typ, s.upper[id])
		if !lok || !hok || !known {
			return true
		}
		for _, v := range values {
			if mightMatch(op, lo, hi, v) {
				return true
			}
		}
		return false
	}
}

// onlyNulls says the file's column id holds nothing but NULLs.
func (s *fileStats) onlyNulls(id int) bool {
	values, hasValues := s.values[id]
	nulls, hasNulls := s.nulls[id]
	return hasValues && hasNulls && nulls == values
}

// fileBound reads a column bound of a data file, in Iceberg's single-value
// serialization, as a bound (rowgroups.go) for the types whose bounds
// order as their values do: integers and dates (little-endian; a long
// column's older files may hold 4-byte ints), timestamps in microseconds,
// strings (a truncated lower bound is a prefix of the minimum, a truncated
// upper bound is above the maximum: both still bound the values) and
// decimals (big-endian unscaled, at the column's scale).
func fileBound(t iceberg.Type, b []byte) (bound, bool) {
	if b == nil {
		return nil, false
	}
	switch t.(type) {
	case iceberg.Int32Type, iceberg.DateType:
		if len(b) == 4 {
			return int64(int32(binary.LittleEndian.Uint32(b))), true
		}
	case iceberg.Int64Type, iceberg.TimestampType, iceberg.TimestampTzType:
		switch len(b) {
		case 8:
			return int64(binary.LittleEndian.Uint64(b)), true
		case 4:
			if _, long := t.(iceberg.Int64Type); long {
				return int64(int32(binary.LittleEndian.Uint32(b))), true
			}
		}
	case iceberg.StringType:
		return string(b), true
	case iceberg.DecimalType:
		return bigEndianDecimal(b)
	}
	return nil, false
}
