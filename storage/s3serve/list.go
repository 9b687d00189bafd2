package s3serve

import (
	"encoding/base64"
	"encoding/xml"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

type object struct {
	Key          string
	LastModified string
	ETag         string
	Size         int64
	StorageClass string
	Owner        *owner `xml:",omitempty"`
}

type commonPrefix struct {
	Prefix string
}

type listV2Result struct {
	XMLName               xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name                  string
	Prefix                string
	Delimiter             string `xml:",omitempty"`
	MaxKeys               int
	KeyCount              int
	IsTruncated           bool
	ContinuationToken     string `xml:",omitempty"`
	NextContinuationToken string `xml:",omitempty"`
	StartAfter            string `xml:",omitempty"`
	EncodingType          string `xml:",omitempty"`
	Contents              []object
	CommonPrefixes        []commonPrefix
}

type listV1Result struct {
	XMLName        xml.Name `xml:"http://s3.amazonaws.com/doc/2006-03-01/ ListBucketResult"`
	Name           string
	Prefix         string
	Marker         string
	NextMarker     string `xml:",omitempty"`
	Delimiter      string `xml:",omitempty"`
	MaxKeys        int
	IsTruncated    bool
	EncodingType   string `xml:",omitempty"`
	Contents       []object
	CommonPrefixes []commonPrefix
}

// listing is one entry of a listing: an object, or a common prefix.
type listing struct {
	name   string
	path   string      // the object's file
	info   fs.FileInfo // nil for a common prefix
	prefix bool
}

func (s *Server) listObjects(q *request) error {
	r := q.r
	if err := allowQuery(r, "list-type", "prefix", "delimiter", "max-keys", "continuation-token", "start-after",
		"fetch-owner", "encoding-type", "marker"); err != nil {
		return err
	}
	v := r.URL.Query()
	v2 := v.Get("list-type") == "2"
	if lt := v.Get("list-type"); lt != "" && lt != "2" {
		return errorf(http.StatusBadRequest, "InvalidArgument", "list-type must be 2, not %q", lt)
	}
	maxKeys := 1000
	if mk := v.Get("max-keys"); mk != "" {
		n, err := strconv.Atoi(mk)
		if err != nil || n < 0 {
			return errorf(http.StatusBadRequest, "InvalidArgument", "max-keys must be a non-negative integer, not %q", mk)
		}
		maxKeys = min(n, 1000)
	}
	enc := v.Get("encoding-type")
	if enc != "" && enc != "url" {
		return errorf(http.StatusBadRequest, "InvalidArgument", "encoding-type must be url, not %q", enc)
	}
	prefix, delim := v.Get("prefix"), v.Get("delimiter")
	after := v.Get("marker")
	if v2 {
		after = v.Get("start-after")
		if tok := v.Get("continuation-token"); tok != "" {
			b, err := base64.RawURLEncoding.DecodeString(tok)
			if err != nil {
				return errorf(http.StatusBadRequest, "InvalidArgument", "the continuation token is not one this server gave")
			}
			after = string(b)
		}
	}
	items, err := s.collect(prefix, delim)
	if err != nil {
		return err
	}
	start := sort.Search(len(items), func(i int) bool { return items[i].name > after })
	items = items[start:]
	truncated := len(items) > maxKeys
	if truncated {
		items = items[:maxKeys]
	}
	code := func(s string) string {
		if enc == "url" {
			return url.QueryEscape(s)
		}
		return s
	}
	var contents []object
	var prefixes []commonPrefix
	for _, it := range items {
		if it.prefix {
			prefixes = append(prefixes, commonPrefix{Prefix: code(it.name)})
			continue
		}
		tag, err := s.etagOf(it.path, nil, it.info)
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed while listed
		}
		if err != nil {
			return err
		}
		o := object{Key: code(it.name), LastModified: lastModified(it.info), ETag: tag, Size: it.info.Size(), StorageClass: "STANDARD"}
		if !v2 || v.Get("fetch-owner") == "true" {
			o.Owner = &owner{ID: "icesql", DisplayName: "icesql"}
		}
		contents = append(contents, o)
	}
	if v2 {
		out := listV2Result{Name: s.bucket, Prefix: code(prefix), Delimiter: code(delim), MaxKeys: maxKeys, KeyCount: len(items),
			IsTruncated: truncated, ContinuationToken: v.Get("continuation-token"), StartAfter: code(v.Get("start-after")),
			EncodingType: enc, Contents: contents, CommonPrefixes: prefixes}
		if truncated {
			out.NextContinuationToken = base64.RawURLEncoding.EncodeToString([]byte(items[len(items)-1].name))
		}
		return writeXML(q, http.StatusOK, out)
	}
	out := listV1Result{Name: s.bucket, Prefix: code(prefix), Marker: code(after), Delimiter: code(delim), MaxKeys: maxKeys,
		IsTruncated: truncated, EncodingType: enc, Contents: contents, CommonPrefixes: prefixes}
	if truncated && delim != "" {
		out.NextMarker = code(items[len(items)-1].name)
	}
	return writeXML(q, http.StatusOK, out)
}

// collect lists the objects with the prefix, rolled up into common prefixes
// at the delimiter, sorted by key as S3 sorts (bytewise). Only the folder
// the prefix lies in is walked; with the delimiter "/", folders below it
// are not entered beyond finding one file.
func (s *Server) collect(prefix, delim string) ([]listing, error) {
	dir := s.root
	if i := strings.LastIndex(prefix, "/"); i >= 0 {
		if _, err := s.objectPath(prefix[:i+1]); err != nil {
			return nil, nil // no object can have such a prefix
		}
		dir = filepath.Join(s.root, filepath.FromSlash(prefix[:i]))
	}
	seen := map[string]bool{}
	var out []listing
	addPrefix := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, listing{name: p, prefix: true})
		}
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && (errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)) {
				return fs.SkipAll
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while listed
			}
			return err
		}
		if p == dir {
			return nil
		}
		key := s.keyOf(p)
		if d.IsDir() {
			if key == stagingDir {
				return fs.SkipDir
			}
			folder := key + "/"
			if !strings.HasPrefix(folder, prefix) && !strings.HasPrefix(prefix, folder) {
				return fs.SkipDir
			}
			if delim == "/" && strings.HasPrefix(folder, prefix) {
				if s.hasObject(p) {
					addPrefix(folder)
				}
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasPrefix(key, prefix) {
			return nil
		}
		info, ok := s.objectInfo(p, d)
		if !ok {
			return nil
		}
		if delim != "" {
			if i := strings.Index(key[len(prefix):], delim); i >= 0 {
				addPrefix(key[:len(prefix)+i+len(delim)])
				return nil
			}
		}
		out = append(out, listing{name: key, path: p, info: info})
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

// objectInfo is the file information of a listed entry that is an object:
// a regular file, or a symbolic link to one that stays in the warehouse.
func (s *Server) objectInfo(p string, d fs.DirEntry) (fs.FileInfo, bool) {
	if d.Type().IsRegular() {
		info, err := d.Info()
		return info, err == nil
	}
	if d.Type()&fs.ModeSymlink == 0 {
		return nil, false
	}
	if _, err := s.objectPath(s.keyOf(p)); err != nil {
		return nil, false
	}
	info, err := os.Stat(p)
	return info, err == nil && info.Mode().IsRegular()
}

// hasObject says a folder holds at least one object, at any depth.
func (s *Server) hasObject(dir string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if _, ok := s.objectInfo(p, d); ok {
			found = true
			return fs.SkipAll
		}
		return nil
	})
	return found
}
