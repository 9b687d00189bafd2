package pushdown

import (
	"runtime"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// iceberg-go decodes a scan's tasks in parallel, one task per worker, and
// splits files into tasks only past read.split.target-size (128 MiB). A
// table of one or two large files (a bulk load, a compaction's output) is
// then decoded on one or two cores however many there are. splitForCores
// cuts such files at row-group boundaries into more tasks. iceberg-go reads
// a task with a byte range as the row groups whose first page starts in it,
// counting row positions from the file's start, so deletes of every kind
// and row-group pruning apply to a piece exactly as to the whole file.
// Pieces keep the file's order, so rows arrive in the same order.

// minSplitBytes keeps small files whole: opening a footer and a reader per
// piece costs more than decoding a few MiB on one core.
const minSplitBytes = 4 << 20

// piecesPerCore is how many tasks a scan aims for per core, so that one
// slow piece does not leave the other cores idle at the end.
const piecesPerCore = 4

// splitForCores splits tasks for the machine's cores.
func splitForCores(tasks []table.FileScanTask) []table.FileScanTask {
	cores := runtime.GOMAXPROCS(0)
	if cores < 2 {
		return tasks
	}
	return splitTasks(tasks, cores*piecesPerCore, minSplitBytes)
}

// splitTasks cuts every whole-file Parquet task larger than the scan's
// total size divided by pieces (and than minBytes) into tasks of about
// that size, at the row-group offsets the data file records.
func splitTasks(tasks []table.FileScanTask, pieces int, minBytes int64) []table.FileScanTask {
	var total int64
	for _, t := range tasks {
		total += taskLength(t)
	}
	target := max(total/int64(max(pieces, 1)), minBytes, 1)
	var out []table.FileScanTask
	for i, t := range tasks {
		split := splitTask(t, target)
		if split == nil {
			if out != nil {
				out = append(out, t)
			}
			continue
		}
		if out == nil {
			out = append(make([]table.FileScanTask, 0, len(tasks)+len(split)), tasks[:i]...)
		}
		out = append(out, split...)
	}
	if out == nil {
		return tasks
	}
	return out
}

func taskLength(t table.FileScanTask) int64 {
	if t.Length > 0 {
		return t.Length
	}
	return t.File.FileSizeBytes()
}

// splitTask cuts a whole-file task into pieces of about target bytes, or
// returns nil when it stays whole. The pieces' ranges cover [0, file size)
// without gap or overlap, so every row group falls in exactly one piece
// even where the recorded offsets and the footer's differ.
func splitTask(t table.FileScanTask, target int64) []table.FileScanTask {
	f := t.File
	size := f.FileSizeBytes()
	if f.FileFormat() != iceberg.ParquetFile || t.Start != 0 || (t.Length != 0 && t.Length != size) || size <= target {
		return nil
	}
	offsets := f.SplitOffsets()
	if len(offsets) < 2 {
		return nil
	}
	for i, o := range offsets {
		if o < 0 || o >= size || (i > 0 && o <= offsets[i-1]) {
			return nil // not usable row-group offsets
		}
	}
	var out []table.FileScanTask
	start := int64(0)
	for _, o := range offsets[1:] {
		if o-start >= target {
			out = append(out, piece(t, start, o))
			start = o
		}
	}
	out = append(out, piece(t, start, size))
	if len(out) < 2 {
		return nil
	}
	return out
}

func piece(t table.FileScanTask, start, end int64) table.FileScanTask {
	t.Start, t.Length = start, end-start
	return t
}
