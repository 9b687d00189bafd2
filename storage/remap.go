package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
)

// PathRemap rewrites path prefixes. Iceberg metadata records the paths of
// the machine that wrote a table (/test-warehouse/..., relative
// data/persistent/..., hdfs://...); a table copied elsewhere is readable only
// if every path is rewritten when a file is opened. The paths inside the
// metadata stay as written, which matters: position deletes and deletion
// vectors name their data file by that original string.
type PathRemap struct {
	rules []remapRule
}

type remapRule struct{ from, to string }

// NewPathRemap returns a remap from prefix to replacement. The longest
// matching prefix wins, so both "file://data/" and "data/" can be mapped.
func NewPathRemap(prefixes map[string]string) *PathRemap {
	r := &PathRemap{}
	for from, to := range prefixes {
		r.rules = append(r.rules, remapRule{from: from, to: to})
	}
	sort.Slice(r.rules, func(i, j int) bool {
		if len(r.rules[i].from) != len(r.rules[j].from) {
			return len(r.rules[i].from) > len(r.rules[j].from)
		}
		return r.rules[i].from < r.rules[j].from
	})
	return r
}

// Apply rewrites the first (longest) matching prefix of p, once.
func (r *PathRemap) Apply(p string) string {
	if r == nil {
		return p
	}
	for _, rule := range r.rules {
		if rest, ok := strings.CutPrefix(p, rule.from); ok {
			return rule.to + rest
		}
	}
	return p
}

// RemapStore is a Store whose every location, and every path its file IO
// opens, goes through a PathRemap first.
type RemapStore struct {
	Store Store
	Remap *PathRemap
}

var _ Store = RemapStore{}

func (s RemapStore) ReadFile(ctx context.Context, location string) ([]byte, error) {
	return s.Store.ReadFile(ctx, s.Remap.Apply(location))
}

func (s RemapStore) WriteFile(ctx context.Context, location string, data []byte) error {
	return s.Store.WriteFile(ctx, s.Remap.Apply(location), data)
}

func (s RemapStore) CreateExclusive(ctx context.Context, location string, data []byte) error {
	return s.Store.CreateExclusive(ctx, s.Remap.Apply(location), data)
}

func (s RemapStore) List(ctx context.Context, location string) ([]Entry, error) {
	return s.Store.List(ctx, s.Remap.Apply(location))
}

func (s RemapStore) MakeFolder(ctx context.Context, location string) error {
	return s.Store.MakeFolder(ctx, s.Remap.Apply(location))
}

func (s RemapStore) Remove(ctx context.Context, location string) error {
	return s.Store.Remove(ctx, s.Remap.Apply(location))
}

func (s RemapStore) RemoveAll(ctx context.Context, location string) error {
	return s.Store.RemoveAll(ctx, s.Remap.Apply(location))
}

func (s RemapStore) IO() icebergio.IO { return remapIO{io: s.Store.IO(), remap: s.Remap} }

// remapIO is an iceberg-go file IO that remaps each path before opening it.
type remapIO struct {
	io    icebergio.IO
	remap *PathRemap
}

var (
	_ icebergio.ReadFileIO  = remapIO{}
	_ icebergio.WriteFileIO = remapIO{}
)

func (r remapIO) Open(name string) (icebergio.File, error) { return r.io.Open(r.remap.Apply(name)) }
func (r remapIO) Remove(name string) error                 { return r.io.Remove(r.remap.Apply(name)) }

func (r remapIO) ReadFile(name string) ([]byte, error) {
	if rf, ok := r.io.(icebergio.ReadFileIO); ok {
		return rf.ReadFile(r.remap.Apply(name))
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := make([]byte, st.Size())
	if _, err := f.ReadAt(buf, 0); err != nil {
		return nil, err
	}
	return buf, nil
}

func (r remapIO) Create(name string) (icebergio.FileWriter, error) {
	w, ok := r.io.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("create %s: file IO %T cannot write", name, r.io)
	}
	return w.Create(r.remap.Apply(name))
}

func (r remapIO) WriteFile(name string, p []byte) error {
	w, ok := r.io.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("write %s: file IO %T cannot write", name, r.io)
	}
	return w.WriteFile(r.remap.Apply(name), p)
}

// CanonicalPath is the file a path names in store, for comparing two
// spellings of one path: the remapped path under a RemapStore, a served
// bucket's s3:// location as the folder's file (servebucket.go), without
// a file:// scheme.
func CanonicalPath(store Store, p string) string {
	switch s := store.(type) {
	case RemapStore:
		p = s.Remap.Apply(p)
	case LocalStore:
		p = s.buckets.apply(p)
	}
	if rest, ok := strings.CutPrefix(p, "file://"); ok {
		return rest
	}
	return p
}
