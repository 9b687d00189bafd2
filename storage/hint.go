package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// hintWriter is a Store that can replace a small file without making it
// durable first. version-hint.text is only a hint: the warehouse finds a
// table's newest metadata by listing metadata/, never by the hint, and
// Hadoop-layout readers that do read it fall back to listing when it is
// stale or unreadable. Syncing it doubled the fsyncs of every commit, and
// on a busy disk an fsync costs more than the rest of a small commit.
type hintWriter interface {
	WriteHint(ctx context.Context, location string, data []byte) error
}

// WriteHint replaces the file at location, atomically but without fsync.
//
// Spark's Hadoop catalog writes the hint through Hadoop's local file system,
// which keeps a checksum beside it in ".version-hint.text.crc". Replaced
// behind Hadoop's back, the hint no longer matches it, and Spark logs a
// checksum error and lists the folder. The checksum goes with the old
// content: Hadoop reads a file without a .crc unchecked.
func (s LocalStore) WriteHint(_ context.Context, location string, data []byte) error {
	p, err := s.path(location)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), "."+filepath.Base(p)+".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	if werr == nil && s.buckets.served() {
		sum := newETagHash() // etag.go
		sum.Write(data)
		sum.record(f)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(f.Name(), p)
	}
	if werr != nil {
		os.Remove(f.Name())
		return werr
	}
	crc := filepath.Join(filepath.Dir(p), "."+filepath.Base(p)+".crc")
	if err := os.Remove(crc); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
