package storage

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apache/iceberg-go/table"
)

// ErrOutside is what a refusal to create, delete, register or walk a
// location outside the folder it must stay in matches (errors.Is).
var ErrOutside = errors.New("location is outside the folder it must stay in")

// Inside is the one check that a location icesql is about to create,
// delete, register or walk lies in root: the location is decoded as the
// file stores decode it (file:// URIs are URL-decoded, so %2E%2E is ".."),
// any ".." is refused outright (lexical cleaning and the operating system
// disagree about ".." after a symbolic link), and on a local disk symbolic
// links are resolved in both, so a link inside the warehouse cannot lead
// out of it. With strict, location must lie below root, not be root.
func Inside(root, location string, strict bool) error {
	r, err := resolvedLocation(root)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrOutside, location, err)
	}
	l, err := resolvedLocation(location)
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrOutside, location, err)
	}
	if r.scheme != l.scheme || r.bucket != l.bucket || !under(l.path, r.path, strict) {
		return fmt.Errorf("%w: %s is not inside %s", ErrOutside, location, root)
	}
	return nil
}

// under says p lies in dir (or is dir, unless strict); both are clean and
// slash-separated.
func under(p, dir string, strict bool) bool {
	if p == dir {
		return !strict
	}
	return strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

type resolved struct {
	scheme, bucket, path string
}

// resolvedLocation decodes a location as the store that would open it does.
func resolvedLocation(location string) (resolved, error) {
	scheme, _, hasScheme := strings.Cut(location, "://")
	switch {
	case !hasScheme && strings.HasPrefix(strings.ToLower(location), "file:"):
		// file:/path (RFC 8089's form without an authority, which Java's
		// File.toURI writes) is file:///path; file:relative names nothing.
		if !strings.HasPrefix(location[len("file:"):], "/") {
			return resolved{}, errors.New("file: locations must be written file:///path")
		}
		return resolvedLocation("file://" + location[len("file:"):])
	case !hasScheme || strings.EqualFold(scheme, "file"):
		p, err := osPath(location)
		if err != nil {
			return resolved{}, err
		}
		if hasDotDot(filepath.ToSlash(p)) {
			return resolved{}, errors.New(`it contains a ".." step`)
		}
		if !filepath.IsAbs(p) {
			return resolved{}, errors.New("it is not an absolute path")
		}
		p, err = resolveLinks(filepath.Clean(p))
		if err != nil {
			return resolved{}, err
		}
		return resolved{scheme: "file", path: filepath.ToSlash(p)}, nil
	case scheme == "s3" || scheme == "s3a" || scheme == "s3n":
		u, err := url.Parse(location)
		if err != nil {
			return resolved{}, err
		}
		if hasDotDot(u.Path) {
			return resolved{}, errors.New(`it contains a ".." step`)
		}
		return resolved{scheme: "s3", bucket: u.Host, path: path.Clean("/" + u.Path)}, nil
	}
	return resolved{}, fmt.Errorf("unsupported scheme %q", scheme)
}

func hasDotDot(p string) bool {
	for _, s := range strings.Split(p, "/") {
		if s == ".." {
			return true
		}
		// Locations are opaque (localio.go), so %2E%2E names a folder of
		// that name; but a tool that decodes it would climb out. No name
		// icesql writes has such a step (NameSegment escapes with ~XX), so
		// one that decodes to a ".." step is refused.
		if dec, err := url.PathUnescape(s); err == nil && dec != s {
			for _, d := range strings.FieldsFunc(dec, func(r rune) bool { return r == '/' || r == '\\' }) {
				if d == ".." {
					return true
				}
			}
		}
	}
	return false
}

// resolveLinks resolves the symbolic links of the longest part of p that
// exists; the rest does not exist yet and so holds no link. A link whose
// target does not exist is refused: what it would lead to is unknown.
func resolveLinks(p string) (string, error) {
	rest := ""
	for cur := p; ; {
		target, err := filepath.EvalSymlinks(cur)
		if err == nil {
			return filepath.Join(target, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		if fi, lerr := os.Lstat(cur); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a symbolic link to nothing", cur)
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			return p, nil
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = parent
	}
}

// TableRoot is the folder a table's maintenance may delete in and walk:
// the table's location, provided its current metadata file lies in it or
// in its metadata folder, as every engine writes a table. A table whose
// metadata claims a location elsewhere (registered from a metadata file put
// anywhere) gets no root, and icesql deletes none of its files: a location
// written in a file proves nothing about whose folder it is.
//
// The root is the location the metadata file records (StoredLocation),
// not the served bucket's spelling icesql's writers see.
func TableRoot(tbl *table.Table) (string, error) {
	loc := strings.TrimRight(StoredLocation(tbl), "/")
	meta := tbl.MetadataLocation()
	l, lerr := resolvedLocation(loc)
	m, merr := resolvedLocation(meta)
	if lerr == nil && merr == nil && l.scheme == m.scheme && l.bucket == m.bucket {
		if dir := path.Dir(m.path); dir == l.path || dir == path.Join(l.path, "metadata") {
			return loc, nil
		}
	}
	return "", fmt.Errorf("%w: table metadata %s is not in the table's location %s; icesql deletes and lists none of its files", ErrOutside, meta, loc)
}
