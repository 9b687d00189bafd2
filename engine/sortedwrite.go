package engine

import "github.com/apache/iceberg-go/table"

// sortedBatchRows is how many rows an insert into a table with a sort order
// buffers per batch. iceberg-go sorts each batch it writes by the table's
// sort order, not a file as a whole (table/sort_keys.go), so a statement of
// up to this many rows writes files that are sorted throughout, and a larger
// one writes files made of sorted runs this long. The cap bounds memory.
const sortedBatchRows = 512 * 1024

// batchLimit is the number of rows an insert into tbl buffers per batch.
func batchLimit(tbl *table.Table) int {
	if order := tbl.SortOrder(); order.IsUnsorted() {
		return batchRows
	}
	return sortedBatchRows
}
