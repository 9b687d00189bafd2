package s3serve

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"

	"github.com/icesql/icesql/storage"
)

// ETags are S3's: the hex MD5 of an object's content, and for an object a
// multipart upload made, the MD5 of its parts' binary MD5s followed by
// "-N" (N parts). Clients check them: the AWS SDK for Java v1 (Hadoop's
// S3A) compares a PUT's ETag with the MD5 it computed and a whole GET's
// content with the ETag, and multipart clients send the parts' ETags back.
//
// They are recorded with the files (storage.RecordETag: an extended
// attribute, or memory where the folder keeps none): a PUT records one as
// it receives the body, and icesql's own writes into a served warehouse as
// they write. A file written into the folder by anything else gets its
// ETag on its first GET, HEAD or listing, which reads the file once.

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

// etagOf is the ETag of the file at p, whose content f reads (nil: open
// it) and fi describes: the recorded one, or the MD5 of its content, then
// recorded.
func (s *Server) etagOf(p string, f io.ReaderAt, fi fs.FileInfo) (string, error) {
	if tag, ok := storage.RecordedETag(p, fi); ok {
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
	if cur, err := os.Stat(p); err == nil && sameFile(cur, fi) {
		storage.RecordETag(p, tag)
	}
	return quoted(tag), nil
}

// sameFile says a and b describe one version of one file.
func sameFile(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
