package s3serve

import (
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/icesql/icesql/storage"
)

// A multipart upload is a folder staging/uploads/ID holding the file "key"
// (the key it will complete to) and its parts part-NNNNN. Completing it
// concatenates the parts into one staged file and places it as a PUT does.

// minPartSize is S3's smallest part but the last.
const minPartSize = 5 << 20

type initiateResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ InitiateMultipartUploadResult"`
	Bucket   string
	Key      string
	UploadID string `xml:"UploadId"`
}

type completeRequest struct {
	Parts []struct {
		PartNumber int
		ETag       string
	} `xml:"Part"`
}

type completeResult struct {
	XMLName  xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CompleteMultipartUploadResult"`
	Location string
	Bucket   string
	Key      string
	ETag     string
}

func (s *Server) createUpload(q *request) error {
	if strings.HasSuffix(q.key, "/") {
		return errorf(http.StatusBadRequest, "InvalidArgument", "the key %q ends in '/' and names a folder, which holds no content", q.key)
	}
	if _, err := io.Copy(io.Discard, q.r.Body); err != nil {
		return err
	}
	id := strings.ReplaceAll(uuid.NewString(), "-", "")
	dir := filepath.Join(s.staging, "uploads", id)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte(q.key), 0o644); err != nil {
		os.RemoveAll(dir)
		return err
	}
	return writeXML(q, http.StatusOK, initiateResult{Bucket: s.bucket, Key: q.key, UploadID: id})
}

// uploadDir is the folder of an upload to the request's key.
func (s *Server) uploadDir(q *request) (string, error) {
	id := q.r.URL.Query().Get("uploadId")
	noSuch := errorf(http.StatusNotFound, "NoSuchUpload", "the upload %q does not exist; it may have been completed or aborted", id)
	if len(id) != 32 || !isLowerHex(id) {
		return "", noSuch
	}
	dir := filepath.Join(s.staging, "uploads", id)
	key, err := os.ReadFile(filepath.Join(dir, "key"))
	if err != nil || string(key) != q.key {
		return "", noSuch
	}
	return dir, nil
}

func isLowerHex(s string) bool {
	for _, c := range s {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func partFile(dir string, n int) string { return filepath.Join(dir, fmt.Sprintf("part-%05d", n)) }

func (s *Server) uploadPart(q *request) error {
	if q.r.Header.Get("X-Amz-Copy-Source") != "" {
		return errorf(http.StatusNotImplemented, "NotImplemented", "UploadPartCopy is not supported")
	}
	dir, err := s.uploadDir(q)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(q.r.URL.Query().Get("partNumber"))
	if err != nil || n < 1 || n > 10000 {
		return errorf(http.StatusBadRequest, "InvalidArgument", "partNumber must be an integer from 1 to 10000, not %q", q.r.URL.Query().Get("partNumber"))
	}
	f, sum, err := s.receive(q.r.Body, q.r.ContentLength, q.r.Header)
	if err != nil {
		return err
	}
	// Parts are not synced (durable.go).
	f.Close()
	tmp := f.Name()
	defer os.Remove(tmp)
	if err := os.Rename(tmp, partFile(dir, n)); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf(http.StatusNotFound, "NoSuchUpload", "the upload was completed or aborted while the part was sent")
		}
		return err
	}
	q.w.Header().Set("ETag", quoted(sum))
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// maxCompleteBody bounds the XML of CompleteMultipartUpload (10000 parts).
const maxCompleteBody = 4 << 20

func (s *Server) completeUpload(q *request, p string) error {
	exclusive, err := createOnly(q.r)
	if err != nil {
		return err
	}
	dir, err := s.uploadDir(q)
	if err != nil {
		return err
	}
	body, err := io.ReadAll(io.LimitReader(q.r.Body, maxCompleteBody+1))
	if err != nil {
		return err
	}
	if len(body) > maxCompleteBody {
		return errorf(http.StatusBadRequest, "MalformedXML", "the request body is larger than %d bytes", maxCompleteBody)
	}
	var req completeRequest
	if err := xml.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "MalformedXML", "the CompleteMultipartUpload document is not valid XML: %v", err)
	}
	if len(req.Parts) == 0 {
		return errorf(http.StatusBadRequest, "MalformedXML", "CompleteMultipartUpload names no part")
	}
	var files []*os.File
	var sizes []int64
	var sums [][]byte
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	for i, part := range req.Parts {
		if i > 0 && part.PartNumber <= req.Parts[i-1].PartNumber {
			return errorf(http.StatusBadRequest, "InvalidPartOrder", "the parts must be listed in ascending order of part number")
		}
		f, err := os.Open(partFile(dir, part.PartNumber))
		if err != nil {
			return errorf(http.StatusBadRequest, "InvalidPart", "part %d was not uploaded", part.PartNumber)
		}
		files = append(files, f)
		fi, err := f.Stat()
		if err != nil {
			return err
		}
		tag, err := s.etagOf(partFile(dir, part.PartNumber), f, fi)
		if err != nil {
			return err
		}
		sum, err := hex.DecodeString(strings.Trim(tag, `"`))
		if err != nil || strings.Trim(part.ETag, `"`) != strings.Trim(tag, `"`) {
			return errorf(http.StatusBadRequest, "InvalidPart", "part %d's ETag %s is not that of the uploaded part", part.PartNumber, part.ETag)
		}
		sizes = append(sizes, fi.Size())
		sums = append(sums, sum)
	}
	for i, n := range sizes[:len(sizes)-1] {
		if n < minPartSize {
			return errorf(http.StatusBadRequest, "EntityTooSmall", "part %d has %d bytes; every part but the last needs at least %d", req.Parts[i].PartNumber, n, minPartSize)
		}
	}
	out, err := s.concat(files)
	if err != nil {
		return err
	}
	tag := multipartETag(sums)
	storage.RecordETag(out.Name(), tag)
	if _, err := s.put(q.key, out, p, exclusive); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return writeXML(q, http.StatusOK, completeResult{Location: "/" + s.bucket + "/" + q.key, Bucket: s.bucket, Key: q.key, ETag: quoted(tag)})
}

// concat writes the parts one after the other into a staged file, which
// it returns open and not synced (durable.go); copying file to file lets
// the kernel copy (copy_file_range) without user space.
func (s *Server) concat(parts []*os.File) (*os.File, error) {
	f, err := os.CreateTemp(s.staging, "put-*")
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	for _, p := range parts {
		if _, err := io.Copy(f, p); err != nil {
			return nil, err
		}
	}
	ok = true
	return f, nil
}

func (s *Server) abortUpload(q *request) error {
	dir, err := s.uploadDir(q)
	if err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	q.w.WriteHeader(http.StatusNoContent)
	return nil
}
