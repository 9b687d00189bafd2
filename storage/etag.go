package storage

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// The S3 API that icesql serve puts over a local warehouse (storage/s3serve)
// answers each object with S3's ETag, the hex MD5 of its content, which
// clients compare with their own digests. A file's ETag is recorded in its
// extended attribute user.icesql.etag with the inode, size and modification
// time it was computed for, so that a later rewrite of the file is noticed;
// where the file system keeps no extended attributes, in memory (etagCache,
// lost on restart).
//
// The S3 API records the ETags of what it receives. icesql's own writes
// into a served warehouse (one a bucket was ever served over: the
// warehouse's bucketMap is set) record them too, hashing the bytes as they
// are written, so that the first GET of a data or metadata file icesql
// wrote need not read the whole file to compute it. A file written into the
// folder by anything else gets its ETag on its first GET, HEAD or listing.

// ETagXattr is the extended attribute a file's recorded ETag is kept in.
const ETagXattr = "user.icesql.etag"

// etagEntry is what a file's ETag was computed for: a rewrite changes the
// modification time or size, or the inode (rename over it).
type etagEntry struct {
	dev, ino, size, mtime uint64
}

func entryOf(fi fs.FileInfo) etagEntry {
	e := etagEntry{size: uint64(fi.Size()), mtime: uint64(fi.ModTime().UnixNano())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.dev, e.ino = uint64(st.Dev), uint64(st.Ino)
	}
	return e
}

// xattr is how the entry and its tag are written in the attribute.
func (e etagEntry) xattr(tag string) []byte {
	return fmt.Appendf(nil, "%d %d %d %s", e.ino, e.size, e.mtime, tag)
}

// etagCache holds the ETags of files whose folder keeps no extended
// attributes, up to a bound: process-wide, as a file's ETag is a property
// of the file whoever computed it.
var etagCache struct {
	mu sync.Mutex
	m  map[etagEntry]string
}

const etagCacheSize = 1 << 16

func cachedETag(e etagEntry) (string, bool) {
	etagCache.mu.Lock()
	defer etagCache.mu.Unlock()
	v, ok := etagCache.m[e]
	return v, ok
}

func cacheETag(e etagEntry, tag string) {
	etagCache.mu.Lock()
	defer etagCache.mu.Unlock()
	if etagCache.m == nil || len(etagCache.m) >= etagCacheSize {
		etagCache.m = map[etagEntry]string{} // start over rather than track age
	}
	etagCache.m[e] = tag
}

// RecordETag records tag (unquoted) as the ETag of the file at p, as it is
// now.
func RecordETag(p, tag string) {
	fi, err := os.Stat(p)
	if err != nil {
		return
	}
	e := entryOf(fi)
	if unix.Setxattr(p, ETagXattr, e.xattr(tag), 0) != nil {
		cacheETag(e, tag)
	}
}

// recordFileETag is RecordETag of an open file, by its descriptor.
func recordFileETag(f *os.File, tag string) {
	fi, err := f.Stat()
	if err != nil {
		return
	}
	e := entryOf(fi)
	if unix.Fsetxattr(int(f.Fd()), ETagXattr, e.xattr(tag), 0) != nil {
		cacheETag(e, tag)
	}
}

// RecordedETag is the ETag (unquoted) recorded for the file at p as fi
// describes it, if any.
func RecordedETag(p string, fi fs.FileInfo) (string, bool) {
	e := entryOf(fi)
	buf := make([]byte, 128)
	if n, err := unix.Getxattr(p, ETagXattr, buf); err == nil {
		f := strings.Fields(string(buf[:n]))
		if len(f) == 4 && f[0] == strconv.FormatUint(e.ino, 10) && f[1] == strconv.FormatUint(e.size, 10) && f[2] == strconv.FormatUint(e.mtime, 10) {
			return f[3], true
		}
	}
	return cachedETag(e)
}

// etagHash follows the bytes written to a file, for its ETag.
type etagHash struct {
	h hash.Hash
	n int64
}

func newETagHash() *etagHash { return &etagHash{h: md5.New()} }

func (e *etagHash) Write(p []byte) (int, error) {
	e.h.Write(p)
	e.n += int64(len(p))
	return len(p), nil
}

// record records the MD5 of what was written as f's ETag, unless f holds
// other bytes than were hashed (it was written at an offset too).
func (e *etagHash) record(f *os.File) {
	if fi, err := f.Stat(); err != nil || fi.Size() != e.n {
		return
	}
	recordFileETag(f, hex.EncodeToString(e.h.Sum(nil)))
}

// served says this warehouse's folder was served as a bucket, so its files'
// ETags are recorded as icesql writes them.
func (b *bucketMap) served() bool { return b != nil && b.cur.Load() != nil }
