package storage

import (
	"io/fs"

	icebergio "github.com/apache/iceberg-go/io"
)

// localIO is the iceberg-go file IO of local tables. It is iceberg-go's
// LocalFS with one difference: a location names the file osPath says, never
// a percent-decoded one. LocalFS parses a file:// location as a URL, so it
// wrote a data file recorded as ".../name=it%27s/f.parquet" at
// ".../name=it's/f.parquet", where no other engine finds it, could not open
// the files Spark writes under such folders, and cut a location at a '?' or
// '#'. Every method hands LocalFS the plain path, which it takes as is.
//
// buckets, when set, maps the S3 locations of the buckets icesql serve
// serves over the warehouse folder (s3://BUCKET/KEY) to that folder's
// files: tables served through the REST catalog carry such locations in
// the files other engines and icesql itself write (see
// Warehouse.ServeBucket).
//
// syncs, when set, syncs the files it writes in the background (durable.go).
type localIO struct {
	fs      icebergio.LocalFS
	buckets *bucketMap
	syncs   *deferredSyncs
}

// osPath is the file a location names, after the buckets' mapping.
func (l localIO) osPath(location string) (string, error) {
	return osPath(l.buckets.apply(location))
}

var (
	_ icebergio.ReadFileIO  = localIO{}
	_ icebergio.WriteFileIO = localIO{}
	_ icebergio.ListableIO  = localIO{}
	_ icebergio.StatIO      = localIO{}
	_ icebergio.RenameIO    = localIO{}
)

func (l localIO) Open(name string) (icebergio.File, error) {
	p, err := l.osPath(name)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return l.fs.Open(p)
}

func (l localIO) ReadFile(name string) ([]byte, error) {
	p, err := l.osPath(name)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: name, Err: err}
	}
	return l.fs.ReadFile(p)
}

func (l localIO) Create(name string) (icebergio.FileWriter, error) {
	p, err := l.osPath(name)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: name, Err: err}
	}
	return createSynced(p, l.syncs, l.buckets.served()) // durable.go
}

func (l localIO) WriteFile(name string, content []byte) error {
	p, err := l.osPath(name)
	if err != nil {
		return &fs.PathError{Op: "write", Path: name, Err: err}
	}
	f, err := createSynced(p, l.syncs, l.buckets.served()) // durable.go
	if err != nil {
		return err
	}
	if _, err := f.Write(content); err != nil {
		f.File.Close()
		return err
	}
	return f.Close()
}

func (l localIO) Remove(name string) error {
	p, err := l.osPath(name)
	if err != nil {
		return &fs.PathError{Op: "remove", Path: name, Err: err}
	}
	return l.fs.Remove(p)
}

func (l localIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	p, err := l.osPath(root)
	if err != nil {
		return &fs.PathError{Op: "walk", Path: root, Err: err}
	}
	return l.fs.WalkDir(p, fn)
}

func (l localIO) Stat(name string) (fs.FileInfo, error) {
	p, err := l.osPath(name)
	if err != nil {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	return l.fs.Stat(p)
}

func (l localIO) Rename(oldpath, newpath string) error {
	src, err := l.osPath(oldpath)
	if err != nil {
		return &fs.PathError{Op: "rename", Path: oldpath, Err: err}
	}
	dst, err := l.osPath(newpath)
	if err != nil {
		return &fs.PathError{Op: "rename", Path: newpath, Err: err}
	}
	return l.fs.Rename(src, dst)
}

// TableIO is the file IO icesql reads and writes a table's files through,
// whichever catalog loaded the table: local locations are opaque (localIO
// instead of iceberg-go's LocalFS), legacy manifests are repaired as they
// are read, and manifest lists get their empty partition bounds
// (emptybounds.go).
func TableIO(fsys icebergio.IO) icebergio.IO {
	switch fsys.(type) {
	case manifestRepairIO:
		return fsys
	case icebergio.LocalFS, *icebergio.LocalFS:
		fsys = localIO{}
	}
	return repairManifests(fsys)
}
