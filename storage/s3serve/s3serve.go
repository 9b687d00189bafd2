// Package s3serve is an S3-compatible API over a warehouse folder on local
// disk, so that remote engines read and write a local warehouse's data and
// metadata files through icesql: one bucket, mapped to the folder,
// addressed path-style (http://host:port/BUCKET/KEY) or virtual-host style
// (http://BUCKET.host:port/KEY). It serves GET (with
// ranges) and HEAD, PUT (with If-None-Match: * as an atomic create-if-absent,
// the commit primitive of Iceberg catalogs), CopyObject, DELETE and
// DeleteObjects, ListObjectsV2 (and V1), and multipart uploads; requests are
// authenticated by sigv4auth.
//
// It is written here rather than embedded from an S3 server library; the
// README says why.
package s3serve

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/sigv4auth"
)

// stagingDir is the folder below the warehouse root that holds PUTs in
// progress and multipart uploads; on the same file system as the objects,
// so a finished upload is linked or renamed into place. No key may name it.
const stagingDir = ".icesql-s3"

// Server is the S3 API over one folder. It is an http.Handler.
type Server struct {
	root    string // absolute, symbolic links resolved
	bucket  string
	auth    *sigv4auth.Verifier
	staging string
	syncs   *storage.BackgroundSyncs // nil: every PUT syncs before its answer (durable.go)
}

// New returns the S3 API serving the folder root as bucket. Requests are
// verified by auth (signing name "s3"). Its bulk PUTs sync in the
// background, and its other PUTs wait for them (durable.go).
func New(root, bucket string, auth *sigv4auth.Verifier) (*Server, error) {
	if err := validBucketName(bucket); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("S3 API root %s: %w", root, err)
	}
	abs, err = filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("S3 API root %s: %w", root, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("S3 API root %s is not a folder", root)
	}
	s := &Server{root: abs, bucket: bucket, auth: auth, staging: filepath.Join(abs, stagingDir), syncs: storage.NewBackgroundSyncs()}
	if err := os.MkdirAll(filepath.Join(s.staging, "uploads"), 0o755); err != nil {
		return nil, fmt.Errorf("S3 API staging folder: %w", err)
	}
	s.cleanStaging(time.Now())
	return s, nil
}

// Staged files older than these are left over from a crash (a PUT) or an
// upload its client abandoned (S3's lifecycle rules would abort it too).
const (
	stalePut    = 24 * time.Hour
	staleUpload = 7 * 24 * time.Hour
)

// cleanStaging removes what crashed PUTs and abandoned multipart uploads
// left in the staging folder, so that it does not grow without bound.
func (s *Server) cleanStaging(now time.Time) {
	entries, _ := os.ReadDir(s.staging)
	for _, e := range entries {
		if info, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), "put-") && now.Sub(info.ModTime()) > stalePut {
			os.Remove(filepath.Join(s.staging, e.Name()))
		}
	}
	uploads, _ := os.ReadDir(filepath.Join(s.staging, "uploads"))
	for _, u := range uploads {
		if info, err := u.Info(); err == nil && now.Sub(info.ModTime()) > staleUpload {
			os.RemoveAll(filepath.Join(s.staging, "uploads", u.Name()))
		}
	}
}

// ForWarehouse returns the S3 API over the folder of a local warehouse, as
// `icesql serve` mounts it at "/" of its HTTP port, verifying SigV4 with
// the given access key → secret pairs (the server's account and password;
// none: loopback clients only). A warehouse that is not a local folder (it
// lives on S3) gets no S3 API: nil, nil; its own store serves its files.
func ForWarehouse(wh *storage.Warehouse, bucket string, credentials map[string]string) (*Server, error) {
	root, err := storage.LocalPath(wh.Root())
	if err != nil {
		return nil, nil
	}
	s, err := New(root, bucket, sigv4auth.New(credentials, "s3"))
	if err != nil {
		return nil, err
	}
	// The catalog's commits wait for the PUTs' background syncs; without
	// such, each PUT syncs before its answer (durable.go).
	s.syncs = wh.BackgroundSyncs()
	return s, nil
}

// validBucketName applies S3's rules for bucket names (3-63 characters of
// lower-case letters, digits, '-' and '.'), so every client can address it.
func validBucketName(b string) error {
	if len(b) < 3 || len(b) > 63 {
		return fmt.Errorf("bucket name %q must have 3 to 63 characters", b)
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return fmt.Errorf("bucket name %q may hold only lower-case letters, digits, '-' and '.'", b)
		}
	}
	if b[0] == '-' || b[0] == '.' || b[len(b)-1] == '-' || b[len(b)-1] == '.' {
		return fmt.Errorf("bucket name %q must begin and end with a letter or digit", b)
	}
	return nil
}

// s3Error is an error answered as S3's XML <Error>.
type s3Error struct {
	Status  int
	Code    string
	Message string
}

func (e *s3Error) Error() string { return e.Code + ": " + e.Message }

func errorf(status int, code, format string, args ...any) *s3Error {
	return &s3Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// request is one request being served.
type request struct {
	w   http.ResponseWriter
	r   *http.Request
	id  string
	key string // "" for the bucket or service
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := &request{w: w, r: r, id: strings.ReplaceAll(uuid.NewString(), "-", "")[:16]}
	w.Header().Set("x-amz-request-id", q.id)
	w.Header().Set("Server", "icesql")
	if err := s.serve(q); err != nil {
		s.writeError(q, err)
	}
}

func (s *Server) serve(q *request) error {
	if _, err := s.auth.Verify(q.r); err != nil {
		return err
	}
	bucket, key := s.address(q.r)
	q.key = key
	switch {
	case bucket == "":
		if q.r.Method != http.MethodGet {
			return errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "%s is not allowed on the service", q.r.Method)
		}
		return s.listBuckets(q)
	case bucket != s.bucket:
		if q.r.Method == http.MethodPut && key == "" {
			return errorf(http.StatusForbidden, "AccessDenied", "this server serves the one bucket %q and creates no other", s.bucket)
		}
		return errorf(http.StatusNotFound, "NoSuchBucket", "the bucket %q does not exist; this server serves %q", bucket, s.bucket)
	case key == "":
		return s.serveBucket(q)
	}
	return s.serveObject(q)
}

// address is the bucket and key a request names: virtual-host style
// (http://BUCKET.host:port/KEY, the default of most SDKs) when the host
// name's first label is the served bucket and more labels follow, else path
// style (http://host:port/BUCKET/KEY). A server whose own host name begins
// with "BUCKET." therefore takes every request as virtual-host style.
func (s *Server) address(r *http.Request) (bucket, key string) {
	path := strings.TrimPrefix(r.URL.Path, "/")
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if rest, ok := strings.CutPrefix(strings.ToLower(host), s.bucket+"."); ok && rest != "" {
		return s.bucket, path
	}
	bucket, key, _ = strings.Cut(path, "/")
	return bucket, key
}

// allowQuery refuses query parameters other than the allowed ones, the
// signature's and the SDKs' x-id, so that an unsupported sub-resource
// (?acl, ?tagging, ...) is not mistaken for a plain object request.
func allowQuery(r *http.Request, allowed ...string) error {
	for k := range r.URL.Query() {
		if k == "x-id" || strings.HasPrefix(strings.ToLower(k), "x-amz-") {
			continue
		}
		ok := false
		for _, a := range allowed {
			if k == a {
				ok = true
				break
			}
		}
		if !ok {
			return errorf(http.StatusNotImplemented, "NotImplemented", "the parameter %q of %s is not supported by icesql's S3 API", k, r.Method)
		}
	}
	return nil
}

func (s *Server) serveBucket(q *request) error {
	r := q.r
	has := r.URL.Query().Has
	switch {
	case r.Method == http.MethodHead:
		return allowQuery(r)
	case r.Method == http.MethodGet && has("location"):
		if err := allowQuery(r, "location"); err != nil {
			return err
		}
		return writeXML(q, http.StatusOK, locationConstraint{})
	case r.Method == http.MethodGet && has("uploads"):
		return errorf(http.StatusNotImplemented, "NotImplemented", "listing multipart uploads is not supported")
	case r.Method == http.MethodGet:
		return s.listObjects(q)
	case r.Method == http.MethodPost && has("delete"):
		if err := allowQuery(r, "delete"); err != nil {
			return err
		}
		return s.deleteObjects(q)
	case r.Method == http.MethodPut:
		if err := allowQuery(r); err != nil {
			return err
		}
		return errorf(http.StatusConflict, "BucketAlreadyOwnedByYou", "the bucket %q exists", s.bucket)
	case r.Method == http.MethodDelete:
		return errorf(http.StatusForbidden, "AccessDenied", "the bucket %q is the warehouse and cannot be deleted", s.bucket)
	}
	return errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "%s is not allowed on a bucket", r.Method)
}

// unsupportedWrite refuses a write whose headers ask for what a folder
// cannot honour (customer or KMS encryption keys, object locks), rather
// than store the object without it.
func unsupportedWrite(r *http.Request) error {
	if r.Method != http.MethodPut && r.Method != http.MethodPost {
		return nil
	}
	for k, v := range r.Header {
		k = strings.ToLower(k)
		switch {
		case k == "x-amz-server-side-encryption" && v[0] == "AES256":
			// Encryption at rest by the server: the disk's business.
		case strings.HasPrefix(k, "x-amz-server-side-encryption"), strings.HasPrefix(k, "x-amz-object-lock-"):
			return errorf(http.StatusNotImplemented, "NotImplemented", "the header %s is not supported by icesql's S3 API", k)
		}
	}
	return nil
}

func (s *Server) serveObject(q *request) error {
	r := q.r
	query := r.URL.Query()
	p, err := s.objectPath(q.key)
	if err != nil {
		return err
	}
	if err := unsupportedWrite(r); err != nil {
		return err
	}
	switch {
	case r.Method == http.MethodPost && query.Has("uploads"):
		if err := allowQuery(r, "uploads"); err != nil {
			return err
		}
		return s.createUpload(q)
	case r.Method == http.MethodPost && query.Has("uploadId"):
		if err := allowQuery(r, "uploadId"); err != nil {
			return err
		}
		return s.completeUpload(q, p)
	case r.Method == http.MethodPut && query.Has("uploadId"):
		if err := allowQuery(r, "uploadId", "partNumber"); err != nil {
			return err
		}
		return s.uploadPart(q)
	case r.Method == http.MethodDelete && query.Has("uploadId"):
		if err := allowQuery(r, "uploadId"); err != nil {
			return err
		}
		return s.abortUpload(q)
	case r.Method == http.MethodGet && query.Has("uploadId"):
		return errorf(http.StatusNotImplemented, "NotImplemented", "listing the parts of an upload is not supported")
	case r.Method == http.MethodGet || r.Method == http.MethodHead:
		if err := allowQuery(r, "versionId", "partNumber", "response-content-type", "response-content-disposition",
			"response-content-encoding", "response-content-language", "response-cache-control", "response-expires"); err != nil {
			return err
		}
		return s.getObject(q, p)
	case r.Method == http.MethodPut && r.Header.Get("X-Amz-Copy-Source") != "":
		if err := allowQuery(r); err != nil {
			return err
		}
		return s.copyObject(q, p)
	case r.Method == http.MethodPut:
		if err := allowQuery(r); err != nil {
			return err
		}
		return s.putObject(q, p)
	case r.Method == http.MethodDelete:
		if err := allowQuery(r, "versionId"); err != nil {
			return err
		}
		if err := s.deleteKey(q.key); err != nil {
			return err
		}
		q.w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return errorf(http.StatusMethodNotAllowed, "MethodNotAllowed", "%s is not allowed on an object", r.Method)
}

type errorBody struct {
	XMLName    xml.Name `xml:"Error"`
	Code       string
	Message    string
	BucketName string `xml:",omitempty"`
	Key        string `xml:",omitempty"`
	Resource   string
	RequestID  string `xml:"RequestId"`
}

func (s *Server) writeError(q *request, err error) {
	var se *s3Error
	var ae *sigv4auth.Error
	switch {
	case errors.As(err, &se):
	case errors.As(err, &ae):
		se = &s3Error{Status: ae.Status, Code: ae.Code, Message: ae.Message}
	case errors.Is(err, fs.ErrNotExist):
		se = errorf(http.StatusNotFound, "NoSuchKey", "the key %q does not exist", q.key)
	case errors.Is(err, fs.ErrPermission):
		se = errorf(http.StatusForbidden, "AccessDenied", "the warehouse folder refuses access: %v", err)
	default:
		se = errorf(http.StatusInternalServerError, "InternalError", "%v", err)
	}
	body := errorBody{Code: se.Code, Message: se.Message, Key: q.key, Resource: q.r.URL.Path, RequestID: q.id}
	if b, _ := s.address(q.r); b != "" {
		body.BucketName = s.bucket
	}
	if q.r.Method == http.MethodHead {
		q.w.WriteHeader(se.Status)
		return
	}
	writeXML(q, se.Status, body)
}

func writeXML(q *request, status int, v any) error {
	b, err := xml.Marshal(v)
	if err != nil {
		return err
	}
	q.w.Header().Set("Content-Type", "application/xml")
	q.w.WriteHeader(status)
	q.w.Write([]byte(xml.Header))
	q.w.Write(b)
	return nil
}

type locationConstraint struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ LocationConstraint"`
}

type listAllMyBuckets struct {
	XMLName xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListAllMyBucketsResult"`
	Owner   owner
	Buckets struct {
		Bucket []bucketEntry
	}
}

type owner struct {
	ID          string
	DisplayName string
}

type bucketEntry struct {
	Name         string
	CreationDate string
}

func (s *Server) listBuckets(q *request) error {
	if err := allowQuery(q.r, "max-buckets", "continuation-token", "prefix", "bucket-region"); err != nil {
		return err
	}
	var out listAllMyBuckets
	out.Owner = owner{ID: "icesql", DisplayName: "icesql"}
	created := ""
	if fi, err := os.Stat(s.root); err == nil {
		created = fi.ModTime().UTC().Format(timeISO)
	}
	out.Buckets.Bucket = []bucketEntry{{Name: s.bucket, CreationDate: created}}
	return writeXML(q, http.StatusOK, out)
}

const timeISO = "2006-01-02T15:04:05.000Z"
