package procedures

import (
	"errors"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// On format-version 3 tables rows have ids (row lineage) that a rewrite
// must carry over: the sort strategy reads each row's _row_id and
// _last_updated_sequence_number and stores them in the files it writes,
// as iceberg-go's own binpack rewrite (ExecuteCompactionGroup) does.

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

// v3PositionDeletesError refuses to rewrite position delete files of a v3
// table: the spec forbids adding Parquet position delete files there
// (deletes are deletion vectors), and turning them into deletion vectors
// (as Spark does) is not done here yet.
func v3PositionDeletesError(tbl *table.Table, files int) error {
	return fmt.Errorf("%s is a format-version 3 table, whose deletes must be deletion vectors: rewriting its %d position delete files (left from format-version 2) into deletion vectors is not supported yet; a merge-on-read DELETE, UPDATE or MERGE of rows of their data files folds them into deletion vectors, and rewrite_data_files applies them: %w",
		tbl.Identifier(), files, errors.ErrUnsupported)
}
