package engine

import (
	"slices"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/storage"
)

// Row-level changes on format-version 3 tables differ from v2 in two ways:
//   - merge-on-read deletes rows with deletion vectors (storage/dv.go), one
//     live DV per data file, so a statement that deletes more rows of a file
//     with a DV writes the union and supersedes the old one, in the stage if
//     an earlier statement of the transaction wrote it, else at commit;
//   - rows keep their ids (row lineage): copy-on-write copies each kept
//     row's _row_id and _last_updated_sequence_number into the rewritten
//     file (rowlineage_v3.go).

// formatV3 reports whether t's rows carry lineage and are deleted with DVs.
func (t *Table) formatV3() bool { return t.tbl.Metadata().Version() >= 3 }

// writeDVs writes the statement's deletion vectors into eff.
func (t *Table) writeDVs(ctx *sql.Context, eff *rowEffect, targets []storage.DVTarget) error {
	if len(targets) == 0 {
		return nil
	}
	dvs, superseded, err := storage.WriteDeletionVectors(ctx, t.tbl, targets)
	if err != nil {
		return err
	}
	eff.deletes = append(eff.deletes, dvs...)
	eff.superseded = append(eff.superseded, superseded...)
	return nil
}

// danglingDVs are the DVs of a data file the statement removes whole: they
// go with it.
func danglingDVs(task table.FileScanTask) []iceberg.DataFile {
	var out []iceberg.DataFile
	for _, d := range task.DeletionVectorFiles {
		if ref := d.ReferencedDataFile(); ref != nil && *ref == task.File.FilePath() && storage.IsDeletionVector(d) {
			out = append(out, d)
		}
	}
	return out
}

// taskDeletes are the position deletes and DVs that apply to the task's
// file.
func taskDeletes(task table.FileScanTask) []iceberg.DataFile {
	return append(slices.Clone(task.DeleteFiles), task.DeletionVectorFiles...)
}

// supersede takes the superseded DVs out of the stage: one an earlier
// statement of the transaction staged is dropped, a committed one is
// removed at commit.
func (st *stage) supersede(dvs []iceberg.DataFile) {
	for _, old := range dvs {
		n := len(st.deletes)
		st.deletes = slices.DeleteFunc(st.deletes, func(f iceberg.DataFile) bool { return storage.SameDeleteFile(f, old) })
		if len(st.deletes) == n && !slices.ContainsFunc(st.removedDeletes, func(f iceberg.DataFile) bool { return storage.SameDeleteFile(f, old) }) {
			st.removedDeletes = append(st.removedDeletes, old)
		}
	}
}

// isStaged reports whether path is a data file the transaction wrote.
func (t *Table) isStaged(path string) bool {
	return slices.ContainsFunc(t.staged, func(f iceberg.DataFile) bool { return f.FilePath() == path })
}
