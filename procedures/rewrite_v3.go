package procedures

import (
	"context"
	"fmt"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Format-version 3 tables differ for the rewrite procedures in two ways:
//   - rows have ids (row lineage) that a rewrite must carry over: the sort
//     strategy of rewrite_data_files reads each row's _row_id and
//     _last_updated_sequence_number and stores them in the files it
//     writes, as iceberg-go's own binpack rewrite (ExecuteCompactionGroup)
//     does;
//   - deletes are deletion vectors, and Parquet position delete files may
//     not be added: rewrite_position_delete_files turns the position
//     deletes left from format-version 2 into DVs (dvMerger).

// sortScan is the scan the sort strategy reads a group with.
func sortScan(tbl *table.Table) *table.Scan {
	if tbl.Metadata().Version() < 3 {
		return tbl.Scan()
	}
	return tbl.Scan(table.WithRowLineage())
}

// sortWrite is the schema the sort strategy writes what it read (in
// schema) with, and the options that store the rows' lineage.
func sortWrite(tbl *table.Table, schema *arrow.Schema) (*arrow.Schema, []table.WriteRecordOption, error) {
	if tbl.Metadata().Version() < 3 {
		return schema, nil, nil
	}
	withLineage := iceberg.SchemaWithRowLineage(tbl.Schema())
	out, err := table.SchemaToArrowSchemaWithOptions(withLineage, table.ArrowSchemaOptions{IncludeFieldIDs: true, TableProperties: tbl.Properties()})
	if err != nil {
		return nil, nil, err
	}
	return out, []table.WriteRecordOption{table.WithPreserveRowLineage(withLineage)}, nil
}

// dvMerger is mergePositionDeletes for a v3 table, where the spec forbids
// adding Parquet position delete files: as Spark does, the rows of a group
// of position delete files become one deletion vector per live data file
// they name, written into one Puffin file per data file. A data file that
// already has a DV gets none: readers ignore its position deletes already
// (a conforming writer folded them into its DV), so the files only go.
func dvMerger(snap *table.Snapshot) func(context.Context, *table.Table, icebergio.IO, map[string]bool, []posDeleteFile, int64) ([]iceberg.DataFile, error) {
	var data map[string]iceberg.DataFile // live data files without a DV, by storage.FileLocation
	return func(ctx context.Context, tbl *table.Table, fsys icebergio.IO, live map[string]bool, files []posDeleteFile, _ int64) ([]iceberg.DataFile, error) {
		if data == nil {
			var err error
			if data, err = filesWithoutDV(fsys, snap); err != nil {
				return nil, err
			}
		}
		positions := map[string][]int64{}
		for _, f := range files {
			rows, err := storage.ReadPositionDeletes(ctx, fsys, f.df.FilePath())
			if err != nil {
				return nil, err
			}
			for _, r := range rows {
				if p := storage.FileLocation(fsys, r.Path); data[p] != nil {
					positions[p] = append(positions[p], r.Pos)
				}
			}
		}
		var out []iceberg.DataFile
		for _, p := range slices.Sorted(maps.Keys(positions)) {
			dvs, _, err := storage.WriteDeletionVectors(ctx, tbl, []storage.DVTarget{{File: data[p], Positions: positions[p]}})
			if err != nil {
				return out, err // the files written so far, for the caller to delete
			}
			out = append(out, dvs...)
		}
		return out, nil
	}
}

// filesWithoutDV lists the live data files of snap that have no DV, by
// storage.FileLocation.
func filesWithoutDV(fsys icebergio.IO, snap *table.Snapshot) (map[string]iceberg.DataFile, error) {
	mans, err := snap.Manifests(fsys)
	if err != nil {
		return nil, err
	}
	data := map[string]iceberg.DataFile{}
	withDV := map[string]bool{}
	for _, m := range mans {
		for entry, err := range m.Entries(fsys, true) {
			if err != nil {
				return nil, fmt.Errorf("read manifest %s: %w", m.FilePath(), err)
			}
			df := entry.DataFile()
			switch {
			case df.ContentType() == iceberg.EntryContentData:
				data[storage.FileLocation(fsys, df.FilePath())] = df
			case storage.IsDeletionVector(df) && df.ReferencedDataFile() != nil:
				withDV[storage.FileLocation(fsys, *df.ReferencedDataFile())] = true
			}
		}
	}
	for p := range withDV {
		delete(data, p)
	}
	return data, nil
}
