package vecexec

import (
	"context"
	"fmt"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/pushdown"
)

// The vector path asks for native decoding (pushdown/native.go) by putting
// a pushdown.Native in the statement's context; openTasks then reads the
// tasks it can with it. Only the vector kernels read such batches: their
// decimals are unscaled int64s and their strings dictionaries, which the
// row path's conversion (sqlval/types.go) does not expect.

type NativeKey struct{}

// OpenNative reads tasks natively when ctx asks for it and some task
// allows it.
func OpenNative(ctx context.Context, r pushdown.Read, tasks []table.FileScanTask) (BatchSource, bool, error) {
	n, ok := ctx.Value(NativeKey{}).(pushdown.Native)
	if !ok {
		return nil, false, nil
	}
	b, err := pushdown.OpenNative(ctx, n, r, tasks)
	if err != nil {
		return nil, true, err
	}
	if b == nil {
		return nil, false, nil
	}
	return b, true, nil
}

// NativeLine is EXPLAIN ANALYZE's account of native decoding, empty when
// the statement used none.
func NativeLine(s *pushdown.NativeStats) string {
	tasks, fallback := s.Tasks.Load(), s.Fallback.Load()
	if tasks == 0 && fallback == 0 {
		return ""
	}
	line := fmt.Sprintf("native decoding: %d tasks (row groups: %d read, %d skipped by statistics), %d tasks through iceberg-go",
		tasks, s.RowGroupsRead.Load(), s.RowGroupsSkipped.Load(), fallback)
	if of := s.SelectedOf.Load(); of > 0 {
		line += fmt.Sprintf("; late materialisation: other columns decoded for %d of %d rows", s.Selected.Load(), of)
	}
	return line
}

// BatchSource is a stream of Arrow batches (pushdown.Batches, or the
// patched stream of identity-partitioned files below).
type BatchSource interface {
	Next() (arrow.RecordBatch, error)
	Close()
}
