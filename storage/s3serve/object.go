package s3serve

import (
	"crypto/md5"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"hash"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/sigv4auth"
)

// emptyETag is the ETag of a folder marker: the MD5 of nothing, as S3 has.
const emptyETag = `"d41d8cd98f00b204e9800998ecf8427e"`

func (s *Server) getObject(q *request, p string) error {
	r, w := q.r, q.w
	if v := r.URL.Query().Get("versionId"); v != "" && v != "null" {
		return errorf(http.StatusNotFound, "NoSuchVersion", "the bucket is not versioned; only versionId=null exists")
	}
	if pn := r.URL.Query().Get("partNumber"); pn != "" && pn != "1" {
		return errorf(http.StatusRequestedRangeNotSatisfiable, "InvalidPartNumber", "objects here are stored whole: only partNumber=1 exists")
	}
	if strings.HasSuffix(q.key, "/") {
		fi, err := os.Stat(p)
		if err != nil || !fi.IsDir() {
			return errorf(http.StatusNotFound, "NoSuchKey", "the key %q does not exist", q.key)
		}
		w.Header().Set("ETag", emptyETag)
		w.Header().Set("Last-Modified", fi.ModTime().UTC().Format(http.TimeFormat))
		w.Header().Set("Content-Type", "application/x-directory")
		w.Header().Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return nil
	}
	f, err := os.Open(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return errorf(http.StatusNotFound, "NoSuchKey", "the key %q does not exist", q.key)
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return errorf(http.StatusNotFound, "NoSuchKey", "the key %q does not exist (it is a prefix of other keys)", q.key)
	}
	if err := checkRange(r.Header.Get("Range"), fi.Size()); err != nil {
		return err
	}
	tag, err := s.etagOf(p, f, fi)
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Accept-Ranges", "bytes")
	h.Set("Content-Type", "application/octet-stream")
	for param, header := range map[string]string{
		"response-content-type": "Content-Type", "response-content-disposition": "Content-Disposition",
		"response-content-encoding": "Content-Encoding", "response-content-language": "Content-Language",
		"response-cache-control": "Cache-Control", "response-expires": "Expires",
	} {
		if v := r.URL.Query().Get(param); v != "" {
			h.Set(header, v)
		}
	}
	// ServeContent answers Range (206), If-Match, If-None-Match,
	// If-Modified-Since and If-Unmodified-Since, and sends the file with
	// sendfile(2) where the connection allows.
	http.ServeContent(w, r, "", fi.ModTime(), f)
	return nil
}

// checkRange refuses a single range that starts past the end of the object
// with S3's InvalidRange (http.ServeContent would answer it in plain text).
func checkRange(rng string, size int64) error {
	spec, ok := strings.CutPrefix(rng, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return nil
	}
	start, _, _ := strings.Cut(spec, "-")
	if start == "" {
		return nil
	}
	n, err := strconv.ParseInt(start, 10, 64)
	if err == nil && n >= size {
		return errorf(http.StatusRequestedRangeNotSatisfiable, "InvalidRange", "the range %s starts at or past the object's end (%d bytes)", rng, size)
	}
	return nil
}

// condition is what a write's If-None-Match header asks for.
func createOnly(r *http.Request) (bool, error) {
	if r.Header.Get("If-Match") != "" {
		return false, errorf(http.StatusNotImplemented, "NotImplemented", "If-Match on writes is not supported; If-None-Match: * is")
	}
	switch v := r.Header.Get("If-None-Match"); v {
	case "":
		return false, nil
	case "*":
		return true, nil
	default:
		return false, errorf(http.StatusNotImplemented, "NotImplemented", "If-None-Match %q on writes is not supported; only *", v)
	}
}

func (s *Server) putObject(q *request, p string) error {
	r := q.r
	exclusive, err := createOnly(r)
	if err != nil {
		return err
	}
	if strings.HasSuffix(q.key, "/") {
		return s.putFolder(q, p, exclusive)
	}
	f, sum, err := s.receive(r.Body, r.ContentLength, r.Header)
	if err != nil {
		return err
	}
	if _, err := s.put(q.key, f, p, exclusive); err != nil {
		return err
	}
	q.w.Header().Set("ETag", quoted(sum))
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// putFolder creates the folder a key ending in '/' names; such keys carry
// no content.
func (s *Server) putFolder(q *request, p string, exclusive bool) error {
	n, err := io.Copy(io.Discard, q.r.Body)
	if err != nil {
		return err
	}
	if n > 0 {
		return errorf(http.StatusBadRequest, "InvalidArgument", "the key %q ends in '/' and names a folder, which holds no content", q.key)
	}
	if _, err := os.Stat(p); err == nil && exclusive {
		return errorf(http.StatusPreconditionFailed, "PreconditionFailed", "the key %q exists", q.key)
	}
	if err := os.MkdirAll(p, 0o755); err != nil {
		return errorf(http.StatusConflict, "InvalidRequest", "cannot create the folder %q: %v", q.key, err)
	}
	q.w.Header().Set("ETag", emptyETag)
	q.w.WriteHeader(http.StatusOK)
	return nil
}

// receive writes a request body to a fresh file in the staging folder,
// checking its length and any Content-MD5 or x-amz-checksum-* header; the
// file's ETag, the MD5 of the body, is recorded with it and returned. The
// file is returned open and not synced (durable.go); the caller closes
// and removes it.
func (s *Server) receive(body io.Reader, length int64, h http.Header) (*os.File, string, error) {
	f, err := os.CreateTemp(s.staging, "put-*")
	if err != nil {
		return nil, "", err
	}
	ok := false
	defer func() {
		if !ok {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	checks, err := bodyChecks(h)
	if err != nil {
		return nil, "", err
	}
	sum := md5.New()
	writers := []io.Writer{f, sum}
	for _, c := range checks {
		writers = append(writers, c.h)
	}
	n, err := io.Copy(io.MultiWriter(writers...), body)
	if err != nil {
		var ae *sigv4auth.Error
		if errors.As(err, &ae) {
			return nil, "", err
		}
		return nil, "", errorf(http.StatusBadRequest, "IncompleteBody", "reading the body: %v", err)
	}
	if length >= 0 && n != length {
		return nil, "", errorf(http.StatusBadRequest, "IncompleteBody", "the body holds %d bytes, Content-Length says %d", n, length)
	}
	for _, c := range checks {
		if base64.StdEncoding.EncodeToString(c.h.Sum(nil)) != c.want {
			if c.name == "Content-MD5" {
				return nil, "", errorf(http.StatusBadRequest, "BadDigest", "the Content-MD5 sent does not match the body")
			}
			return nil, "", sigv4auth.ChecksumMismatch(c.name)
		}
	}
	ok = true
	tag := md5Hex(sum)
	storage.RecordETag(f.Name(), tag)
	return f, tag, nil
}

type bodyCheck struct {
	name, want string
	h          hash.Hash
}

// bodyChecks are the digests a request's headers announce for its body.
func bodyChecks(h http.Header) ([]bodyCheck, error) {
	var out []bodyCheck
	if v := h.Get("Content-MD5"); v != "" {
		out = append(out, bodyCheck{name: "Content-MD5", want: v, h: md5.New()})
	}
	for k, v := range h {
		algo, ok := strings.CutPrefix(strings.ToLower(k), "x-amz-checksum-")
		if !ok || algo == "algorithm" || algo == "type" || algo == "mode" {
			continue
		}
		sum, known := sigv4auth.NewChecksum(algo)
		if !known {
			return nil, errorf(http.StatusBadRequest, "InvalidRequest", "the checksum algorithm %q is not supported", algo)
		}
		out = append(out, bodyCheck{name: algo, want: v[0], h: sum})
	}
	return out, nil
}

// place moves a received file to p: with exclusive, by link(2), which fails
// if p exists, so of two concurrent creates exactly one wins; otherwise by
// rename(2), which replaces p atomically. Readers never see part of a file.
func (s *Server) place(key, tmp, p string, exclusive bool) (fs.FileInfo, error) {
	if err := storage.MkdirAllSynced(filepath.Dir(p)); err != nil {
		if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
			return nil, errorf(http.StatusConflict, "InvalidRequest", "a prefix of the key %q is an object; the warehouse folder cannot hold both", key)
		}
		return nil, err
	}
	if fi, err := os.Lstat(p); err == nil && fi.IsDir() {
		if exclusive {
			return nil, errorf(http.StatusPreconditionFailed, "PreconditionFailed", "the key %q exists (as a prefix of other keys)", key)
		}
		return nil, errorf(http.StatusConflict, "InvalidRequest", "the key %q is a prefix of other keys; the warehouse folder cannot hold both", key)
	}
	if exclusive {
		if err := os.Link(tmp, p); err != nil {
			if errors.Is(err, fs.ErrExist) {
				return nil, errorf(http.StatusPreconditionFailed, "PreconditionFailed", "the key %q exists and If-None-Match: * was sent", key)
			}
			return nil, err
		}
	} else if err := os.Rename(tmp, p); err != nil {
		return nil, err
	}
	return os.Stat(p)
}

type copyObjectResult struct {
	XMLName      xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ CopyObjectResult"`
	ETag         string
	LastModified string
}

func (s *Server) copyObject(q *request, p string) error {
	r := q.r
	for k := range r.Header {
		if strings.HasPrefix(strings.ToLower(k), "x-amz-copy-source-if-") || strings.EqualFold(k, "x-amz-copy-source-range") {
			return errorf(http.StatusNotImplemented, "NotImplemented", "the header %s is not supported on CopyObject", k)
		}
	}
	exclusive, err := createOnly(r)
	if err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, r.Body); err != nil {
		return err
	}
	src, err := s.copySource(r.Header.Get("X-Amz-Copy-Source"))
	if err != nil {
		return err
	}
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errorf(http.StatusNotFound, "NoSuchKey", "the copy source %q does not exist", r.Header.Get("X-Amz-Copy-Source"))
		}
		return err
	}
	defer in.Close()
	if fi, err := in.Stat(); err != nil || fi.IsDir() {
		return errorf(http.StatusNotFound, "NoSuchKey", "the copy source %q is not an object", r.Header.Get("X-Amz-Copy-Source"))
	}
	f, sum, err := s.receive(in, -1, nil)
	if err != nil {
		return err
	}
	fi, err := s.put(q.key, f, p, exclusive)
	if err != nil {
		return err
	}
	return writeXML(q, http.StatusOK, copyObjectResult{ETag: quoted(sum), LastModified: fi.ModTime().UTC().Format(timeISO)})
}

// copySource resolves x-amz-copy-source ("/bucket/key" or "bucket/key",
// URL-encoded, maybe with ?versionId=null) to a file.
func (s *Server) copySource(v string) (string, error) {
	v, version, _ := strings.Cut(v, "?")
	if version != "" && version != "versionId=null" {
		return "", errorf(http.StatusNotImplemented, "NotImplemented", "the bucket is not versioned; copy source %s", version)
	}
	dec, err := url.PathUnescape(v)
	if err != nil {
		return "", errorf(http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source %q is not URL-encoded: %v", v, err)
	}
	bucket, key, _ := strings.Cut(strings.TrimPrefix(dec, "/"), "/")
	if bucket != s.bucket {
		return "", errorf(http.StatusNotFound, "NoSuchBucket", "the copy source's bucket %q does not exist; this server serves %q", bucket, s.bucket)
	}
	if key == "" || strings.HasSuffix(key, "/") {
		return "", errorf(http.StatusBadRequest, "InvalidArgument", "x-amz-copy-source %q names no object", v)
	}
	return s.objectPath(key)
}

// deleteKey removes an object; a missing one is no error, as on S3.
func (s *Server) deleteKey(key string) error {
	p, err := s.objectPath(key)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil
		}
		return err
	case fi.IsDir() && !strings.HasSuffix(key, "/"):
		return nil // a prefix, not an object
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTEMPTY) && !errors.Is(err, syscall.EEXIST) {
		return err
	}
	return nil
}

type deleteRequest struct {
	Quiet   bool
	Objects []struct {
		Key       string
		VersionID string `xml:"VersionId"`
	} `xml:"Object"`
}

type deleteResult struct {
	XMLName xml.Name        `xml:"http://s3.amazonaws.com/doc/2006-03-01/ DeleteResult"`
	Deleted []deletedObject `xml:"Deleted"`
	Errors  []deleteError   `xml:"Error"`
}

type deletedObject struct {
	Key string
}

type deleteError struct {
	Key     string
	Code    string
	Message string
}

// maxDeleteBody bounds the XML of a DeleteObjects request (1000 keys of
// 1024 bytes, escaped).
const maxDeleteBody = 8 << 20

func (s *Server) deleteObjects(q *request) error {
	body, err := io.ReadAll(io.LimitReader(q.r.Body, maxDeleteBody+1))
	if err != nil {
		var ae *sigv4auth.Error
		if errors.As(err, &ae) {
			return err
		}
		return errorf(http.StatusBadRequest, "IncompleteBody", "reading the body: %v", err)
	}
	if len(body) > maxDeleteBody {
		return errorf(http.StatusBadRequest, "MalformedXML", "the request body is larger than %d bytes", maxDeleteBody)
	}
	var req deleteRequest
	if err := xml.Unmarshal(body, &req); err != nil {
		return errorf(http.StatusBadRequest, "MalformedXML", "the Delete document is not valid XML: %v", err)
	}
	if len(req.Objects) == 0 || len(req.Objects) > 1000 {
		return errorf(http.StatusBadRequest, "MalformedXML", "a Delete request names 1 to 1000 objects, not %d", len(req.Objects))
	}
	var out deleteResult
	for _, o := range req.Objects {
		err := s.deleteKey(o.Key)
		if err == nil && o.VersionID != "" && o.VersionID != "null" {
			err = errorf(http.StatusNotFound, "NoSuchVersion", "the bucket is not versioned")
		}
		var se *s3Error
		switch {
		case err == nil:
			if !req.Quiet {
				out.Deleted = append(out.Deleted, deletedObject{Key: o.Key})
			}
		case errors.As(err, &se):
			out.Errors = append(out.Errors, deleteError{Key: o.Key, Code: se.Code, Message: se.Message})
		default:
			out.Errors = append(out.Errors, deleteError{Key: o.Key, Code: "InternalError", Message: err.Error()})
		}
	}
	return writeXML(q, http.StatusOK, out)
}

// lastModified is S3's ISO form of a file's modification time.
func lastModified(fi fs.FileInfo) string { return fi.ModTime().UTC().Format(timeISO) }
