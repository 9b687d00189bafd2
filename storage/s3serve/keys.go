package s3serve

import (
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/icesql/icesql/storage"
)

// maxKeyLength is S3's limit on a key, in bytes.
const maxKeyLength = 1024

// objectPath maps a key to its file below the root. A key is a
// slash-separated relative path: no empty, "." or ".." step, no NUL, not
// in the staging folder, and (after symbolic links) inside the root, so no
// key can reach a file outside the warehouse. A key ending in '/' names a
// folder (the "directory marker" some clients write).
func (s *Server) objectPath(key string) (string, error) {
	switch {
	case len(key) > maxKeyLength:
		return "", errorf(http.StatusBadRequest, "KeyTooLongError", "the key is %d bytes long; the limit is %d", len(key), maxKeyLength)
	case !utf8.ValidString(key):
		return "", errorf(http.StatusBadRequest, "InvalidArgument", "the key is not valid UTF-8")
	case strings.ContainsRune(key, 0):
		return "", errorf(http.StatusForbidden, "AccessDenied", "the key %q holds a NUL byte", key)
	case strings.HasPrefix(key, "/"):
		return "", errorf(http.StatusForbidden, "AccessDenied", "the key %q is an absolute path; keys are relative to the bucket", key)
	}
	steps := strings.Split(strings.TrimSuffix(key, "/"), "/")
	for _, st := range steps {
		switch st {
		case "..", ".":
			return "", errorf(http.StatusForbidden, "AccessDenied", "the key %q has a %q step; keys may not leave or name their folder", key, st)
		case "":
			return "", errorf(http.StatusBadRequest, "InvalidArgument", "the key %q has an empty step (\"//\"), which the warehouse folder cannot hold", key)
		}
	}
	if steps[0] == stagingDir {
		return "", errorf(http.StatusForbidden, "AccessDenied", "the key %q is in icesql's staging folder", key)
	}
	p := filepath.Join(s.root, filepath.FromSlash(key))
	if err := storage.Inside(s.root, p, true); err != nil {
		if errors.Is(err, storage.ErrOutside) {
			return "", errorf(http.StatusForbidden, "AccessDenied", "the key %q leads outside the warehouse", key)
		}
		return "", err
	}
	return p, nil
}

// keyOf is the key of a file below the root.
func (s *Server) keyOf(p string) string {
	rel, _ := filepath.Rel(s.root, p)
	return filepath.ToSlash(rel)
}
