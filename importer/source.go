// Package importer reads files to import into a table: CSV, Parquet and
// JSON lines, from a file, a folder, or an object store prefix. For text
// it infers the columns and their types (delimiter, header, NULL markers,
// numbers, dates and timestamps) from a sample, and converts the rows into
// Arrow record batches of the target table's schema on every core, in
// order, with the line and column of any value that does not convert.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is a file to import, opened.
type File interface {
	io.Reader
	io.ReaderAt
	io.Seeker
	io.Closer
}

// FS is where the files to import are: the local disk, or an object store.
type FS interface {
	// List returns the files at location: the file itself, or the files
	// under a folder or prefix, with their sizes, in name order.
	List(ctx context.Context, location string) ([]FileInfo, error)
	Open(ctx context.Context, location string) (File, error)
}

// FileInfo is a file List found.
type FileInfo struct {
	Location string
	Size     int64
}

// LocalFS is the local disk.
type LocalFS struct{}

// List implements FS: a folder's files are those in it and its subfolders
// that are not Hidden.
func (LocalFS) List(_ context.Context, location string) ([]FileInfo, error) {
	st, err := os.Stat(location)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []FileInfo{{Location: location, Size: st.Size()}}, nil
	}
	var files []FileInfo
	err = filepath.WalkDir(location, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != location && Hidden(d.Name()) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, FileInfo{Location: p, Size: info.Size()})
		return nil
	})
	slices.SortFunc(files, func(a, b FileInfo) int { return strings.Compare(a.Location, b.Location) })
	return files, err
}

// Open implements FS.
func (LocalFS) Open(_ context.Context, location string) (File, error) {
	return os.Open(location)
}

// Hidden reports whether a file or folder in a folder to import is left
// out: names starting with '.' or '_' (Spark's _SUCCESS, hidden files).
func Hidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// Format is a kind of file import reads.
type Format string

const (
	CSV     Format = "csv"
	Parquet Format = "parquet"
	JSONL   Format = "jsonl"
)

// formatOf is the format a file name says, or "".
func formatOf(name string) Format {
	name = strings.ToLower(strings.TrimSuffix(name, ".gz"))
	switch filepath.Ext(name) {
	case ".csv", ".tsv", ".txt", ".tab":
		return CSV
	case ".parquet", ".pq":
		return Parquet
	case ".jsonl", ".ndjson", ".json":
		return JSONL
	}
	return ""
}

// ErrNoFiles is returned for a folder or prefix without files to import.
var ErrNoFiles = errors.New("no files to import")

// listFiles lists location and keeps the files of format (or, when format
// is empty, of the format of the first file whose name says one).
func listFiles(ctx context.Context, fsys FS, location string, format Format) ([]FileInfo, Format, error) {
	all, err := fsys.List(ctx, location)
	if err != nil {
		return nil, "", fmt.Errorf("list %s: %w", location, err)
	}
	if len(all) == 1 {
		f := format
		if f == "" {
			f = formatOf(all[0].Location)
		}
		if f == "" {
			return nil, "", fmt.Errorf("%s: cannot tell the format from the file name; say --format csv, parquet or jsonl", location)
		}
		return all, f, nil
	}
	var files []FileInfo
	for _, fi := range all {
		f := formatOf(fi.Location)
		if f == "" || (format != "" && f != format) {
			continue
		}
		if format == "" {
			format = f
		}
		files = append(files, fi)
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%s: %w (looked for .csv, .tsv, .parquet, .jsonl and .ndjson files)", location, ErrNoFiles)
	}
	return files, format, nil
}
