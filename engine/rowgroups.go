package engine

import (
	"context"
	"strconv"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/pushdown"
)

// DefaultRowGroupRows is the Parquet row-group limit icesql writes with when
// the table sets no write.parquet.row-group-limit. iceberg-go's default of
// 1,048,576 rows made a row group the smallest unit a point lookup could
// skip to: "WHERE l_orderkey = k" on TPC-H SF1 decoded a million rows of
// every projected column to return seven. 131,072 rows (DuckDB writes
// 122,880) cuts that eightfold, keeps every column chunk large enough to
// compress well, and equals iceberg-go's read batch size
// (read.parquet.batch-size), so a row group decodes as one batch. It is
// also the unit the parallel writer deals to its lanes (parallelwrite.go):
// runs of a million rows kept one lane encoding while the other waited.
const DefaultRowGroupRows = 128 * 1024

// rowGroupDefaults adds to set the row-group limit of a write to a table
// whose properties props name none. A table that sets one keeps it.
func rowGroupDefaults(props iceberg.Properties, set iceberg.Properties) {
	if _, ok := props[table.ParquetRowGroupLimitKey]; ok {
		return
	}
	set[table.ParquetRowGroupLimitKey] = strconv.Itoa(DefaultRowGroupRows)
}

// pruneRowGroups narrows tasks to the row groups that might hold a row the
// filter accepts (pushdown.PruneRowGroups), for every reader: the vector
// path then reads without iceberg-go's row filter, and the row path skips
// what iceberg-go's weakened filter cannot (decimals, columns with NULLs). The
// footers are read through the statement's counting IO, so EXPLAIN ANALYZE
// counts the row groups skipped here. Anything that fails (a filter the
// pinned schema cannot bind, a footer that cannot be read) leaves tasks as
// they are: reading them reports a broken file as it always did.
func (t *Table) pruneRowGroups(ctx context.Context, planned *pushdown.Planned, tasks []table.FileScanTask, filter iceberg.BooleanExpression) []table.FileScanTask {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return tasks
	}
	pruned, _, err := pushdown.PruneRowGroups(ctx, t.db.e.caches, planned.IO(fs), t.tbl.Schema(), filter, tasks)
	if err != nil {
		return tasks
	}
	return pruned
}
