package storage

import (
	"errors"
	"os"
	"path/filepath"
)

// A commit is acknowledged only when what it names is on disk: a machine
// that crashes after COMMIT returns must come back with the table's new
// metadata file, and every manifest list, manifest and data file that
// metadata reaches. On a local disk that takes, for each file, an fsync of
// its contents and one of the folder holding its name (a new name lives
// in the folder, which the file's own fsync does not write). Data files,
// manifests and manifest lists are written through localIO, whose files
// sync when they close; the metadata file is linked into place by
// CreateExclusive, which syncs the folder after the link.

// syncedFile is a file created for writing that syncs its contents and its
// folder's entry for it when it is closed.
type syncedFile struct{ *os.File }

func (f syncedFile) Close() error {
	if err := f.File.Sync(); err != nil {
		f.File.Close()
		return err
	}
	if err := f.File.Close(); err != nil {
		return err
	}
	return syncDir(filepath.Dir(f.Name()))
}

// createSynced creates (or truncates) the file at p, making its folders.
func createSynced(p string) (syncedFile, error) {
	if err := mkdirSynced(filepath.Dir(p)); err != nil {
		return syncedFile{}, err
	}
	f, err := os.Create(p)
	if err != nil {
		return syncedFile{}, err
	}
	return syncedFile{f}, nil
}

// mkdirSynced makes folder dir and its missing parents, syncing the parent
// of each folder it creates, so that the folders outlive a crash too.
func mkdirSynced(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirSynced(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return syncDir(parent)
}

// syncDir syncs a folder's entries.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
