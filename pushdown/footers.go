package pushdown

import (
	"fmt"
	"os"
	"sync"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	icebergio "github.com/apache/iceberg-go/io"
)

// Every query used to parse the Thrift footer of each data file it read,
// twice when row-group pruning ran at planning: for a point lookup that is
// a fair share of its time, and for a scan of many small files most of it.
// An Iceberg data file never changes once written (a rewrite writes a new
// file under a new name), so a parsed footer stays true for as long as a
// file of that path and size exists. footerCache keeps the most recently
// parsed ones.

// footerCacheFiles bounds the cache: a footer of a wide table with many
// row groups parses to some hundred kilobytes.
const footerCacheFiles = 256

type footerKey struct {
	path string
	size int64
}

type footerCache struct {
	mu    sync.Mutex
	limit int // files
	metas map[footerKey]*metadata.FileMetaData
	order []footerKey // oldest first, for eviction
}

func newFooterCache(files int) *footerCache {
	return &footerCache{limit: files, metas: map[footerKey]*metadata.FileMetaData{}}
}

func (c *footerCache) get(k footerKey) *metadata.FileMetaData {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.metas[k]
}

func (c *footerCache) put(k footerKey, m *metadata.FileMetaData) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.metas[k]; ok {
		return
	}
	if len(c.order) >= c.limit {
		delete(c.metas, c.order[0])
		c.order = c.order[1:]
	}
	c.metas[k] = m
	c.order = append(c.order, k)
}

// Native scans read with their page buffers taken from the scan's buffer
// pool. A local file is also read page by page through a small buffer:
// arrow-go otherwise reads a whole column chunk into a new buffer, and
// these buffers of a megabyte or more, allocated and cleared for every row
// group, made the garbage collector run through a fifth of a selective
// scan's CPU. On an object store every read is a request, so a remote file
// keeps one read per column chunk.
var (
	nativeLocalProps = func() *parquet.ReaderProperties {
		p := parquet.NewReaderProperties(pool)
		p.BufferedStreamEnabled = true
		p.BufferSize = 32 << 10
		return p
	}()
	nativeRemoteProps = parquet.NewReaderProperties(pool)
)

// nativeReadProps are the reader properties of a native scan of f.
func nativeReadProps(f icebergio.File) *parquet.ReaderProperties {
	if c, ok := f.(*countingFile); ok {
		f = c.File
	}
	if _, ok := f.(*os.File); ok {
		return nativeLocalProps
	}
	return nativeRemoteProps
}

// openParquet opens a data file of size bytes (0 or less: unknown, the
// footer is not cached) with its footer parsed once while footers keep it,
// for a native scan or only for its footer.
func openParquet(footers *footerCache, fsys icebergio.IO, path string, size int64, native bool) (*file.Reader, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	opts := []file.ReadOption{}
	if native {
		opts = append(opts, file.WithReadProps(nativeReadProps(f)))
	}
	k := footerKey{path, size}
	if size > 0 {
		if m := footers.get(k); m != nil {
			opts = append(opts, file.WithMetadata(m))
		}
	}
	pf, err := file.NewParquetReader(f, opts...)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if size > 0 && pf.MetaData().GetSourceFileSize() == size {
		footers.put(k, pf.MetaData())
	}
	return pf, nil
}

// footerOf is the parsed footer of a data file of size bytes, read only
// when footers do not hold it.
func footerOf(footers *footerCache, fsys icebergio.IO, path string, size int64) (*metadata.FileMetaData, error) {
	if size > 0 {
		if m := footers.get(footerKey{path, size}); m != nil {
			if c, ok := fsys.(countingIO); ok {
				// EXPLAIN ANALYZE counts the file as opened, as it did
				// when its footer was read.
				c.touch(path)
			}
			return m, nil
		}
	}
	pf, err := openParquet(footers, fsys, path, size, false)
	if err != nil {
		return nil, err
	}
	defer pf.Close()
	return pf.MetaData(), nil
}

// touch records path as opened, with nothing read from it.
func (c countingIO) touch(path string) {
	c.log.mu.Lock()
	defer c.log.mu.Unlock()
	if c.log.files[path] == nil {
		c.log.files[path] = &fileLog{}
	}
}
