package procedures

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// Registrar is a catalog that can register an existing table without
// copying it (the embedded warehouse, storage.Warehouse).
type Registrar interface {
	RegisterTable(ctx context.Context, ident table.Identifier, metadataLocation string) (*table.Table, error)
}

// registerTable is Spark's register_table(table, metadata_file). Beyond
// Spark, metadata_file may also name a table folder; the newest metadata
// file in it is chosen without trusting version-hint.text.
func registerTable() *Procedure {
	return &Procedure{
		Name: "register_table",
		Params: []Param{
			{Name: "table", Kind: String, Required: true},
			{Name: "metadata_file", Kind: String, Required: true},
		},
		Output: []Column{
			{Name: "current_snapshot_id", Kind: Int64},
			{Name: "total_records_count", Kind: Int64},
			{Name: "total_data_files_count", Kind: Int64},
		},
		Run: func(ctx context.Context, env Env, args Args) ([][]any, error) {
			ident, err := env.TableIdent("table", args.String("table"))
			if err != nil {
				return nil, err
			}
			reg, ok := env.Catalog.(Registrar)
			if !ok {
				return nil, fmt.Errorf("register_table: the %s catalog cannot register tables: %w", env.Catalog.CatalogType(), errors.ErrUnsupported)
			}
			tbl, err := reg.RegisterTable(ctx, ident, args.String("metadata_file"))
			if errors.Is(err, storage.ErrOutside) {
				return nil, fmt.Errorf("%w: procedure system.register_table: argument 'metadata_file': %v", ErrArgument, err)
			}
			if err != nil {
				return nil, err
			}
			snap := tbl.CurrentSnapshot()
			if snap == nil {
				return [][]any{{nil, int64(0), int64(0)}}, nil
			}
			return [][]any{{snap.SnapshotID, summaryCount(snap, "total-records"), summaryCount(snap, "total-data-files")}}, nil
		},
	}
}

// summaryCount reads a total from a snapshot summary; nil when the writer
// did not record it (BigQuery does not).
func summaryCount(snap *table.Snapshot, key string) any {
	if snap.Summary == nil {
		return nil
	}
	n, err := strconv.ParseInt(snap.Summary.Properties[key], 10, 64)
	if err != nil {
		return nil
	}
	return n
}
