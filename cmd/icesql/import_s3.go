package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/icesql/icesql/importer"
	"github.com/icesql/icesql/storage"
)

// s3Source is an object store prefix or object to import, read through
// the storage package's S3 file IO with the --s3-* flags' configuration.
type s3Source struct {
	st *storage.S3Store
}

func newS3Source(ctx context.Context, location string, cfg storage.S3Config) (*s3Source, error) {
	st, err := storage.OpenS3ReadOnly(ctx, location, cfg)
	if err != nil {
		return nil, err
	}
	return &s3Source{st: st}, nil
}

// List implements importer.FS: the object itself, or the objects under the
// prefix and its sub-prefixes that are not importer.Hidden.
func (s *s3Source) List(ctx context.Context, location string) ([]importer.FileInfo, error) {
	entries, err := s.st.List(ctx, location)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		size, err := s.size(ctx, location)
		if err != nil {
			return nil, err
		}
		return []importer.FileInfo{{Location: location, Size: size}}, nil
	}
	var files []importer.FileInfo
	var walk func(prefix string, entries []storage.Entry) error
	walk = func(prefix string, entries []storage.Entry) error {
		for _, e := range entries {
			if importer.Hidden(e.Name) {
				continue
			}
			p := strings.TrimSuffix(prefix, "/") + "/" + e.Name
			if e.IsDir {
				sub, err := s.st.List(ctx, p)
				if err != nil {
					return err
				}
				if err := walk(p, sub); err != nil {
					return err
				}
				continue
			}
			size, err := s.size(ctx, p)
			if err != nil {
				return err
			}
			files = append(files, importer.FileInfo{Location: p, Size: size})
		}
		return nil
	}
	if err := walk(location, entries); err != nil {
		return nil, err
	}
	slices.SortFunc(files, func(a, b importer.FileInfo) int { return strings.Compare(a.Location, b.Location) })
	return files, nil
}

func (s *s3Source) size(_ context.Context, location string) (int64, error) {
	f, err := s.st.IO().Open(location)
	if err != nil {
		return 0, fmt.Errorf("open %s: %w", location, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, fmt.Errorf("%s: %w", location, err)
	}
	return st.Size(), nil
}

// Open implements importer.FS.
func (s *s3Source) Open(_ context.Context, location string) (importer.File, error) {
	f, err := s.st.IO().Open(location)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", location, err)
	}
	return f, nil
}
