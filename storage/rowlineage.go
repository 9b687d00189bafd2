package storage

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Format-version 3 tables give every row an id (row lineage): the rows a
// snapshot adds take the ids from the table's next-row-id on. iceberg-go's
// AddDataFiles refuses v3 data files without first_row_id, since it cannot
// know which ids files written elsewhere carry; icesql's files are fresh,
// carry no _row_id column, and get consecutive ids here, in the order they
// are committed. These are the ids the manifest list gives the snapshot's
// new manifest (its first_row_id is the table's next-row-id, and
// next-row-id advances by the added rows), so both agree.

// WithFirstRowIDs returns files with first_row_id assigned from meta's
// next-row-id, for a commit (or a transaction's read of its own staged
// files) on top of meta. Other format versions get files back unchanged.
func WithFirstRowIDs(meta table.Metadata, files []iceberg.DataFile) ([]iceberg.DataFile, error) {
	if meta.Version() < 3 {
		return files, nil
	}
	next := meta.NextRowID()
	out := make([]iceberg.DataFile, len(files))
	for i, f := range files {
		if f.ContentType() != iceberg.EntryContentData {
			return nil, fmt.Errorf("assign row ids: %s is not a data file", f.FilePath())
		}
		df, err := withFirstRowID(meta, f, next)
		if err != nil {
			return nil, fmt.Errorf("assign row ids to %s: %w", f.FilePath(), err)
		}
		out[i] = df
		next += f.Count()
	}
	return out, nil
}

// withFirstRowID rebuilds f (iceberg-go's DataFile has no setter) with
// every field it had, and first_row_id.
func withFirstRowID(meta table.Metadata, f iceberg.DataFile, firstRowID int64) (iceberg.DataFile, error) {
	spec := meta.PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return nil, fmt.Errorf("no partition spec %d", f.SpecID())
	}
	b, err := iceberg.NewDataFileBuilder(*spec, f.ContentType(), f.FilePath(), f.FileFormat(),
		f.Partition(), partitionLogicalTypes(meta.CurrentSchema(), *spec), nil, f.Count(), f.FileSizeBytes())
	if err != nil {
		return nil, err
	}
	b.ColumnSizes(f.ColumnSizes()).ValueCounts(f.ValueCounts()).NullValueCounts(f.NullValueCounts()).
		NaNValueCounts(f.NaNValueCounts()).
		LowerBoundValues(f.LowerBoundValues()).UpperBoundValues(f.UpperBoundValues()).
		SplitOffsets(f.SplitOffsets())
	if k := f.KeyMetadata(); k != nil {
		b.KeyMetadata(k)
	}
	if ids := f.EqualityFieldIDs(); len(ids) > 0 {
		b.EqualityFieldIDs(ids)
	}
	if id := f.SortOrderID(); id != nil {
		b.SortOrderID(*id)
	}
	return b.FirstRowID(firstRowID).Build(), nil
}

// partitionLogicalTypes gives the Avro logical type of each partition value
// whose type needs one, as iceberg-go's own writer does when it builds a
// data file, so the manifest encodes the values the same way.
func partitionLogicalTypes(schema *iceberg.Schema, spec iceberg.PartitionSpec) map[int]string {
	out := map[int]string{}
	for _, field := range spec.Fields() {
		src, ok := schema.FindFieldByID(field.SourceID())
		if !ok {
			continue
		}
		switch field.Transform.ResultType(src.Type).(type) {
		case iceberg.DateType:
			out[field.FieldID] = "date"
		case iceberg.TimeType:
			out[field.FieldID] = "time-micros"
		case iceberg.TimestampType, iceberg.TimestampTzType:
			out[field.FieldID] = "timestamp-micros"
		case iceberg.DecimalType:
			out[field.FieldID] = "decimal"
		case iceberg.UUIDType:
			out[field.FieldID] = "uuid"
		}
	}
	return out
}
