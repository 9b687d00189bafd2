package pushdown

import (
	"unsafe"

	"github.com/apache/iceberg-go"
)

// What a kept plan holds on the heap, measured by
// TestPlanCacheEstimateCoversTasks (heap with the planned tasks alive less
// heap once they are dropped, 2,000 small files a table, every column with
// iceberg-go's default statistics: sizes, value and null counts, NaN counts
// for doubles, bounds truncated to 16 bytes, one split offset):
//
//	columns   bytes/task
//	      1        2,248
//	      3        2,677
//	     20        8,381
//	     50       17,590
//
// and files icesql's INSERT wrote (10 rows each, BIGINT, VARCHAR and DOUBLE
// columns in turn) 2,508 bytes a task on 3 columns, 16,709 on 50. That is
// about 2 KB a data file (its iceberg-go struct, path, partition and lookup
// maps) and 300-340 bytes a column (its statistics' entries and bound
// bytes). The estimate rounds both up, so it is a bound for
// such files: 1.1-1.35 times the measure. Bounds longer than 16 bytes
// (metrics mode full, or a position delete file's file_path bounds) are not
// counted, as they cannot be without copying them.
const (
	fileBytes   = 2048 // a DataFile without its path and statistics
	columnBytes = 352  // one column's statistics in a DataFile
	planBytes   = 1024 // the plan's key, report and list element
)

// estimatePlanBytes estimates the heap p holds: its tasks, and each data and
// delete file they name once (a delete file may apply to many tasks, and a
// file split into several tasks is one DataFile).
//
// A file's columns are counted from its value counts, which iceberg-go
// hands out as a copy: a few µs a file, 1-3% of what planning it cost.
func estimatePlanBytes(p *cachedPlan) int64 {
	n := planBytes + int64(len(p.key.manifestList)+len(p.key.filter))
	seen := make(map[string]struct{}, len(p.tasks))
	for i := range p.tasks {
		t := &p.tasks[i]
		n += int64(unsafe.Sizeof(*t))
		n += fileOnce(seen, t.File)
		for _, files := range [][]iceberg.DataFile{t.DeleteFiles, t.EqualityDeleteFiles, t.DeletionVectorFiles} {
			n += int64(len(files)) * int64(unsafe.Sizeof(iceberg.DataFile(nil)))
			for _, f := range files {
				n += fileOnce(seen, f)
			}
		}
	}
	return n
}

// fileOnce is the estimated size of f the first time seen meets its path,
// and 0 afterwards.
func fileOnce(seen map[string]struct{}, f iceberg.DataFile) int64 {
	if f == nil {
		return 0
	}
	path := f.FilePath()
	if _, ok := seen[path]; ok {
		return 0
	}
	seen[path] = struct{}{}
	return fileBytes + int64(len(path)) + columnBytes*int64(len(f.ValueCounts()))
}
