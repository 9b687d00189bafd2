package s3serve

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// ETags are S3's: the hex MD5 of an object's content, and for an object a
// multipart upload made, the MD5 of its parts' binary MD5s followed by
// "-N" (N parts). Clients check them: the AWS SDK for Java v1 (Hadoop's
// S3A) compares a PUT's ETag with the MD5 it computed and a whole GET's
// content with the ETag, and multipart clients send the parts' ETags back.
//
// A file's ETag is kept in its extended attribute user.icesql.etag with the
// size and modification time it was computed for, so that a later rewrite
// of the file (by icesql, which writes the folder directly, or anyone) is
// noticed. A PUT stores it as it receives the body; a file written into the
// folder directly gets it on its first GET, HEAD or listing, which reads
// the file once. Where the file system keeps no extended attributes the
// ETags live in memory (etagCache) and are computed again after a restart.

const etagXattr = "user.icesql.etag"

// etagEntry is what a file's ETag was computed for: a rewrite changes the
// modification time or size, or the inode (rename over it).
type etagEntry struct {
	ino, size, mtime uint64
}

func entryOf(fi fs.FileInfo) etagEntry {
	e := etagEntry{size: uint64(fi.Size()), mtime: uint64(fi.ModTime().UnixNano())}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.ino = uint64(st.Ino)
	}
	return e
}

// etagCache holds the ETags of files whose folder keeps no extended
// attributes, up to a bound.
type etagCache struct {
	mu sync.Mutex
	m  map[etagEntry]string
}

const etagCacheSize = 1 << 16

func (c *etagCache) get(e etagEntry) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok := c.m[e]
	return v, ok
}

func (c *etagCache) put(e etagEntry, tag string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m) >= etagCacheSize {
		c.m = map[etagEntry]string{} // start over rather than track age
	}
	c.m[e] = tag
}

// quoted is how an ETag travels in headers and XML.
func quoted(tag string) string { return `"` + tag + `"` }

// md5Hex is the ETag of content whose MD5 is h.
func md5Hex(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)) }

// multipartETag is the ETag of an object made of parts with these MD5s.
func multipartETag(partMD5s [][]byte) string {
	h := md5.New()
	for _, m := range partMD5s {
		h.Write(m)
	}
	return fmt.Sprintf("%s-%d", md5Hex(h), len(partMD5s))
}

// storeETag records tag as the ETag of the file at p, as it is now.
func (s *Server) storeETag(p, tag string) {
	fi, err := os.Stat(p)
	if err != nil {
		return
	}
	e := entryOf(fi)
	v := fmt.Sprintf("%d %d %d %s", e.ino, e.size, e.mtime, tag)
	if unix.Setxattr(p, etagXattr, []byte(v), 0) != nil {
		s.etags.put(e, tag)
	}
}

// storedETag is the ETag recorded for the file at p as fi describes it.
func (s *Server) storedETag(p string, fi fs.FileInfo) (string, bool) {
	e := entryOf(fi)
	buf := make([]byte, 128)
	if n, err := unix.Getxattr(p, etagXattr, buf); err == nil {
		f := strings.Fields(string(buf[:n]))
		if len(f) == 4 && f[0] == strconv.FormatUint(e.ino, 10) && f[1] == strconv.FormatUint(e.size, 10) && f[2] == strconv.FormatUint(e.mtime, 10) {
			return f[3], true
		}
	}
	return s.etags.get(e)
}

// etagOf is the ETag of the file at p, whose content f reads (nil: open
// it) and fi describes: the recorded one, or the MD5 of its content, then
// recorded.
func (s *Server) etagOf(p string, f io.ReaderAt, fi fs.FileInfo) (string, error) {
	if tag, ok := s.storedETag(p, fi); ok {
		return quoted(tag), nil
	}
	if f == nil {
		file, err := os.Open(p)
		if err != nil {
			return "", err
		}
		defer file.Close()
		f = file
	}
	h := md5.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size())); err != nil {
		return "", err
	}
	tag := md5Hex(h)
	if cur, err := os.Stat(p); err == nil && entryOf(cur) == entryOf(fi) {
		s.storeETag(p, tag)
	}
	return quoted(tag), nil
}
