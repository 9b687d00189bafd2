package pushdown

import (
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/apache/iceberg-go"
)

// rowGroupPruner skips the row groups of a native scan whose column
// statistics rule the row filter out, with the judgement PruneRowGroups
// uses at planning (which leaves whole a task it cannot split by row
// group, or in which every row group might match).
type rowGroupPruner struct {
	filter iceberg.BooleanExpression // from bindForRowGroups; nil: none
}

func newRowGroupPruner(sc *iceberg.Schema, filter iceberg.BooleanExpression) *rowGroupPruner {
	if sc == nil || filter == nil {
		return &rowGroupPruner{}
	}
	bound, err := bindForRowGroups(sc, filter)
	if err != nil {
		// Binding failed: read every row group; the vector path filters
		// rows itself.
		return &rowGroupPruner{}
	}
	return &rowGroupPruner{filter: bound}
}

// mightMatch says whether a row group may hold rows the filter keeps;
// columns is topLevelColumns of its file.
func (p *rowGroupPruner) mightMatch(rg *metadata.RowGroupMetaData, columns map[int]int) bool {
	if p.filter == nil {
		return true
	}
	ok, err := rowGroupMightMatch(p.filter, rg, columns)
	return err != nil || ok
}
