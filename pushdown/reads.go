package pushdown

import (
	"slices"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/parquet/file"
	icebergio "github.com/apache/iceberg-go/io"
)

// Reads is what reading a scan's files cost, for EXPLAIN ANALYZE.
type Reads struct {
	Files                         int64 // data files opened
	Bytes                         int64 // bytes read from them
	RowGroupsRead, RowGroupsTotal int64 // Parquet row groups of the opened files
}

// readLog records the byte ranges read from each data file of a scan.
type readLog struct {
	mu    sync.Mutex
	inner icebergio.IO
	files map[string]*fileLog
}

type fileLog struct {
	bytes  int64
	ranges [][2]int64 // [offset, end) of each positioned read
}

func (l *readLog) record(name string, off, n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.files[name]
	f.bytes += n
	if off >= 0 {
		f.ranges = append(f.ranges, [2]int64{off, off + n})
	}
}

// IO wraps the table's file IO so that the scans given to Tasks record
// what they read from Parquet data files.
func (p *Planned) IO(inner icebergio.IO) icebergio.IO {
	p.logOnce.Do(func() { p.log = &readLog{inner: inner, files: map[string]*fileLog{}} })
	return countingIO{IO: inner, log: p.log}
}

type countingIO struct {
	icebergio.IO
	log *readLog
}

func (c countingIO) Open(name string) (icebergio.File, error) {
	f, err := c.IO.Open(name)
	if err != nil || !strings.HasSuffix(name, ".parquet") {
		return f, err
	}
	c.log.mu.Lock()
	if c.log.files[name] == nil {
		c.log.files[name] = &fileLog{}
	}
	c.log.mu.Unlock()
	return &countingFile{File: f, name: name, log: c.log}, nil
}

type countingFile struct {
	icebergio.File
	name string
	log  *readLog
}

func (f *countingFile) ReadAt(b []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(b, off)
	f.log.record(f.name, off, int64(n))
	return n, err
}

func (f *countingFile) Read(b []byte) (int, error) {
	n, err := f.File.Read(b)
	f.log.record(f.name, -1, int64(n))
	return n, err
}

// Reads tallies the reads recorded so far. A row group counts as read when
// any byte of its column chunks was; iceberg-go skips a row group its
// statistics rule out without touching its pages.
func (p *Planned) Reads() (Reads, error) {
	var out Reads
	if p.log == nil {
		return out, nil
	}
	p.log.mu.Lock()
	defer p.log.mu.Unlock()
	for name, fl := range p.log.files {
		out.Files++
		out.Bytes += fl.bytes
		read, total, err := rowGroupsRead(p.log.inner, name, fl.ranges)
		if err != nil {
			return out, err
		}
		out.RowGroupsRead += read
		out.RowGroupsTotal += total
	}
	return out, nil
}

func rowGroupsRead(fsys icebergio.IO, name string, ranges [][2]int64) (read, total int64, err error) {
	f, err := fsys.Open(name)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	rdr, err := file.NewParquetReader(f)
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Close()
	meta := rdr.MetaData()
	for i := range meta.NumRowGroups() {
		rg := meta.RowGroup(i)
		lo, hi := int64(-1), int64(-1)
		for c := range rg.NumColumns() {
			cc, err := rg.ColumnChunk(c)
			if err != nil {
				return 0, 0, err
			}
			start := cc.DataPageOffset()
			if cc.HasDictionaryPage() && cc.DictionaryPageOffset() > 0 {
				start = min(start, cc.DictionaryPageOffset())
			}
			end := start + cc.TotalCompressedSize()
			if lo < 0 || start < lo {
				lo = start
			}
			hi = max(hi, end)
		}
		total++
		if slices.ContainsFunc(ranges, func(r [2]int64) bool { return r[0] < hi && r[1] > lo }) {
			read++
		}
	}
	return read, total, nil
}
