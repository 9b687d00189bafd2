// Package storage owns where Iceberg tables live and how their metadata
// changes: the embedded warehouse catalog, the file stores under it, and
// commits with conflict detection and retry. It knows nothing of SQL.
package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
)

// Entry is one child of a listed folder.
type Entry struct {
	Name  string
	IsDir bool
}

// Store is the small file API the warehouse catalog is written against.
// Locations are URIs ("file:///abs/path", later "s3://bucket/key"). Its one
// unusual operation, CreateExclusive, is what makes a commit atomic: local
// disks give it with link(2), S3 with a conditional PUT (If-None-Match: *).
type Store interface {
	// ReadFile returns the whole object; fs.ErrNotExist when absent.
	ReadFile(ctx context.Context, location string) ([]byte, error)
	// WriteFile creates or replaces the object.
	WriteFile(ctx context.Context, location string, data []byte) error
	// CreateExclusive writes the object only if nothing exists at location,
	// and makes it visible complete or not at all. It returns an error
	// matching fs.ErrExist when the location is taken.
	CreateExclusive(ctx context.Context, location string, data []byte) error
	// List returns the immediate children of a folder (none when absent).
	List(ctx context.Context, location string) ([]Entry, error)
	// MakeFolder makes a folder visible to List (a no-op on object stores).
	MakeFolder(ctx context.Context, location string) error
	// Remove deletes one object; absent objects are not an error.
	Remove(ctx context.Context, location string) error
	// RemoveAll deletes a folder and everything under it.
	RemoveAll(ctx context.Context, location string) error
	// IO is the iceberg-go file IO that reads and writes table files.
	IO() icebergio.IO
}

// Join appends path elements to a location URI.
func Join(location string, elems ...string) string {
	out := strings.TrimRight(location, "/")
	for _, e := range elems {
		out += "/" + strings.Trim(e, "/")
	}
	return out
}

// LocalStore is a Store on the local file system. A warehouse opened on
// it names its served buckets' S3 locations (s3://BUCKET/KEY) in buckets,
// which this store and its file IO open as the folder's files
// (servebucket.go); the zero value maps none. The zero value syncs every
// file as it closes; NewLocalStore's syncs them in the background and has
// each commit wait for them (durable.go).
type LocalStore struct {
	buckets *bucketMap
	syncs   *deferredSyncs
}

// NewLocalStore returns a LocalStore that syncs the files its IO writes in
// the background, each commit (CreateExclusive) waiting for those synced
// before it.
func NewLocalStore() LocalStore { return LocalStore{syncs: newDeferredSyncs()} }

// path is the file a location names, after the served buckets' mapping.
func (s LocalStore) path(location string) (string, error) {
	return osPath(s.buckets.apply(location))
}

// LocalLocation turns a local path into the file:// URI used in table
// metadata. The path is not percent-encoded: a location is an opaque string
// (see osPath), so the folder a location names is the one the user gave,
// byte for byte, as in the locations Java Iceberg writes.
func LocalLocation(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve warehouse path %q: %w", path, err)
	}
	return "file://" + filepath.ToSlash(abs), nil
}

// LocalPath is the file system path of a local location URI.
func LocalPath(location string) (string, error) { return osPath(location) }

// osPath is the file system path a local location names. A location is an
// opaque string, as in Java Iceberg (Hadoop's Path takes its path as it is):
// nothing is percent-decoded, and '?' and '#' are part of the path. Java and
// Spark write partition folders such as "name=it%27s" (the value escaped
// once, when the path is built), and that is the folder's real name on disk;
// decoding it here would look for "name=it's". Both "file:///abs" and Java's
// "file:/abs" name /abs; an authority other than localhost is refused.
func osPath(location string) (string, error) {
	scheme, rest, ok := strings.Cut(location, ":")
	if !ok || strings.ContainsAny(scheme, "/\\") || len(scheme) < 2 {
		// A plain path (a one-letter "scheme" is a Windows drive).
		return filepath.FromSlash(location), nil
	}
	if !strings.EqualFold(scheme, "file") {
		return "", fmt.Errorf("location %q is not on the local file system", location)
	}
	if after, ok := strings.CutPrefix(rest, "//"); ok {
		host, path, _ := strings.Cut(after, "/")
		if host != "" && !strings.EqualFold(host, "localhost") {
			return "", fmt.Errorf("location %q names host %q: only local files are supported", location, host)
		}
		rest = "/" + path
	}
	return filepath.FromSlash(rest), nil
}

func (s LocalStore) ReadFile(_ context.Context, location string) ([]byte, error) {
	p, err := s.path(location)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

func (s LocalStore) WriteFile(_ context.Context, location string, data []byte) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := writeTemp(p, s.buckets.served(), data)
	if err != nil {
		return err
	}
	// Rename replaces atomically, so readers never see half a file.
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(p)) // durable.go
}

func (s LocalStore) CreateExclusive(ctx context.Context, location string, data []byte) error {
	return s.CreateExclusiveParts(ctx, location, [][]byte{data})
}

// CreateExclusiveParts is CreateExclusive of the concatenation of parts,
// without making it.
func (s LocalStore) CreateExclusiveParts(ctx context.Context, location string, parts [][]byte) error {
	return s.createExclusive(ctx, location, parts, nil)
}

// createExclusive is CreateExclusiveParts that runs linked, when set, as
// soon as the object exists, alongside the sync that makes it durable.
func (s LocalStore) createExclusive(_ context.Context, location string, parts [][]byte, linked func()) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// The files the new object names finish syncing while its own
	// contents sync (durable.go).
	waited := make(chan error, 1)
	if s.syncs != nil {
		go func() { waited <- s.syncs.wait() }()
	} else {
		waited <- nil
	}
	tmp, err := writeTemp(p, s.buckets.served(), parts...)
	if werr := <-waited; err == nil {
		err = werr
	}
	if tmp != "" {
		defer os.Remove(tmp)
	}
	if err != nil {
		return err
	}
	// link(2) fails with EEXIST when p exists, and p appears with its full
	// content, which O_EXCL followed by a write would not guarantee.
	if err := os.Link(tmp, p); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("create %s: %w", location, fs.ErrExist)
		}
		return err
	}
	// The new name outlives a crash once its folder syncs (durable.go);
	// what follows a successful link (the version hint) runs meanwhile.
	if linked == nil {
		return syncDir(filepath.Dir(p))
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		linked()
	}()
	err = syncDir(filepath.Dir(p))
	<-done
	return err
}

// writeTemp writes parts, one after the other, to a fresh hidden file
// beside p and syncs it; with etag, it records the file's ETag (etag.go),
// which the file keeps when it is renamed or linked into place.
func writeTemp(p string, etag bool, parts ...[]byte) (string, error) {
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return "", err
	}
	var sum *etagHash
	if etag {
		sum = newETagHash()
	}
	for _, data := range parts {
		if _, err := f.Write(data); err != nil {
			f.Close()
			os.Remove(f.Name())
			return "", err
		}
		if sum != nil {
			sum.Write(data)
		}
	}
	if sum != nil {
		sum.record(f)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(f.Name())
		return "", err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return "", err
	}
	return f.Name(), nil
}

func (s LocalStore) List(_ context.Context, location string) ([]Entry, error) {
	p, err := s.path(location)
	if err != nil {
		return nil, err
	}
	des, err := os.ReadDir(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(des))
	for _, d := range des {
		out = append(out, Entry{Name: d.Name(), IsDir: d.IsDir()})
	}
	return out, nil
}

func (s LocalStore) MakeFolder(_ context.Context, location string) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	return os.MkdirAll(p, 0o755)
}

func (s LocalStore) Remove(_ context.Context, location string) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (s LocalStore) RemoveAll(_ context.Context, location string) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	return os.RemoveAll(p)
}

func (s LocalStore) IO() icebergio.IO { return localIO{buckets: s.buckets, syncs: s.syncs} }

// createOnce is CreateExclusive for writes that must take effect exactly
// once. An object store may perform a write and lose the response; the
// client's retry then finds the object taken by that very write. The
// objects written this way carry fresh ids (metadata, links, probes), so
// equal bytes mean the earlier attempt was ours and succeeded.
func createOnce(ctx context.Context, st Store, location string, data []byte) error {
	return createOnceParts(ctx, st, location, [][]byte{data}, nil)
}

// createOnceParts is createOnce of the concatenation of parts. A
// LocalStore creates the file from the parts without joining them first (a
// table's metadata file is mostly its snapshot list, kept encoded from the
// last commit: metaencode.go). Only a LocalStore itself: a Store that
// embeds one to change CreateExclusive (a test's racing or failing store,
// a user's wrapper) would have its CreateExclusive bypassed by the
// promoted CreateExclusiveParts, as TestProceduresDeleteWhatFailedAttemptsWrote
// found when its lost races stopped happening.
//
// linked, when set, runs once the object exists: on a LocalStore while the
// folder holding the new name syncs, elsewhere after the write.
func createOnceParts(ctx context.Context, st Store, location string, parts [][]byte, linked func()) error {
	ran := false
	after := func() {
		if linked != nil {
			ran = true
			linked()
		}
	}
	var err error
	if ls, ok := st.(LocalStore); ok {
		err = ls.createExclusive(ctx, location, parts, after)
	} else {
		err = st.CreateExclusive(ctx, location, bytes.Join(parts, nil))
	}
	if errors.Is(err, fs.ErrExist) {
		if existing, rerr := st.ReadFile(ctx, location); rerr == nil && bytes.Equal(existing, bytes.Join(parts, nil)) {
			err = nil
		}
	}
	if err == nil && !ran {
		after()
	}
	return err
}
