package storage

import (
	"fmt"
	"io/fs"

	icebergio "github.com/apache/iceberg-go/io"
)

// WalkDir lists the files under root (remove_orphan_files walks a table's
// folder) through the file IO the repair wraps.
func (m manifestRepairIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	l, ok := m.IO.(icebergio.ListableIO)
	if !ok {
		return fmt.Errorf("list %s: the file IO %T cannot list folders", root, m.IO)
	}
	return l.WalkDir(root, fn)
}
