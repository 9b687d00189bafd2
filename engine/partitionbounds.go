package engine

import (
	"context"
	"encoding/binary"
	"math"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/icesql/icesql/engine/internal/sqlfunc"
)

// iceberg-go v0.7.0 writes the empty string as a NULL lower bound in a
// manifest's partition summary (StringLiteral.MarshalBinary returns a nil
// slice for ""), and its manifest pruning reads a missing lower bound as
// "every partition value is NULL": a predicate on a column partitioned by
// identity or truncate, pushed to it, then skipped every manifest whose
// files hold an empty string, and the scan lost all their rows (s IS NOT
// NULL returned nothing). Such a column is therefore pushed only when no
// manifest of the snapshot lacks that bound.

// truncate(W, c) of an INT or BIGINT c within W of its type's minimum
// wraps around (Java computes it the same way, so the partition value is
// the spec's): truncate(100, -9223372036854775807) is 9223372036854775716.
// Range pruning takes the transform for monotonic, which it then is not:
// a file in that partition was skipped by id <= 55, and a literal near the
// minimum projected the same way skipped every other file (id >=
// -9223372036854775807 found nothing). Such a column is pushed only when
// no manifest's partition summary reaches the top W values of the type
// (where a wrapped value lands), and a range is pushed only when its
// bound is not within W of the minimum. Equality is safe: both sides wrap
// alike.

// partitionBounds records, once per resolved table, the columns whose
// partition summaries iceberg-go cannot be trusted with.
type partitionBounds struct {
	once      sync.Once
	untrusted map[int]bool // source field ids
}

// boundsTrusted says iceberg-go's manifest pruning may be given predicates
// on field f.
func (t *Table) boundsTrusted(ctx context.Context, f iceberg.NestedField) bool {
	switch f.Type.(type) {
	case iceberg.StringType, iceberg.BinaryType, iceberg.Int32Type, iceberg.Int64Type:
	default:
		return true
	}
	b := t.bounds
	if b == nil {
		return false
	}
	b.once.Do(func() { b.untrusted = t.untrustedBounds(ctx) })
	return !b.untrusted[f.ID]
}

// untrustedBounds lists the source columns of identity and truncate
// partition fields that some manifest summarises without a lower bound;
// nil when it cannot tell (every such column is then untrusted).
func (t *Table) untrustedBounds(ctx context.Context) map[int]bool {
	meta := t.tbl.Metadata()
	sources := map[int]bool{} // every candidate: the answer when unsure
	fieldsOf := map[int][]iceberg.PartitionField{}
	for _, spec := range meta.PartitionSpecs() {
		for _, f := range spec.Fields() {
			if boundsMatter(meta.CurrentSchema(), f) {
				sources[f.SourceID()] = true
			}
			fieldsOf[spec.ID()] = append(fieldsOf[spec.ID()], f)
		}
	}
	if len(sources) == 0 {
		return nil
	}
	if len(t.staged) > 0 || t.changes.any() {
		return sources // the transaction's manifests are not read here
	}
	snap := t.Snapshot()
	if snap == nil {
		return nil
	}
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return sources
	}
	manifests, err := snap.Manifests(fs)
	if err != nil {
		return sources
	}
	out := map[int]bool{}
	for _, m := range manifests {
		fields := fieldsOf[int(m.PartitionSpecID())]
		for i, sum := range m.Partitions() {
			if i >= len(fields) || !sources[fields[i].SourceID()] {
				continue
			}
			if !summaryTrusted(meta.CurrentSchema(), fields[i], sum) {
				out[fields[i].SourceID()] = true
			}
		}
	}
	return out
}

// boundsMatter says whether pruning through partition field f needs its
// summaries checked: identity and truncate of strings and binaries (the
// empty string's bound), truncate of integers (wrapped values).
func boundsMatter(sc *iceberg.Schema, f iceberg.PartitionField) bool {
	src, ok := sc.FindFieldByID(f.SourceID())
	if !ok {
		return false
	}
	switch src.Type.(type) {
	case iceberg.StringType, iceberg.BinaryType:
		switch f.Transform.(type) {
		case iceberg.IdentityTransform, iceberg.TruncateTransform:
			return true
		}
	case iceberg.Int32Type, iceberg.Int64Type:
		_, ok := f.Transform.(iceberg.TruncateTransform)
		return ok
	}
	return false
}

// summaryTrusted says whether a manifest's summary of partition field f
// can prune: a string's has its lower bound; an integer truncate's upper
// bound is below the top W values of its type.
func summaryTrusted(sc *iceberg.Schema, f iceberg.PartitionField, sum iceberg.FieldSummary) bool {
	if !boundsMatter(sc, f) {
		return true
	}
	src, _ := sc.FindFieldByID(f.SourceID())
	tr, _ := f.Transform.(iceberg.TruncateTransform)
	switch src.Type.(type) {
	case iceberg.Int32Type:
		if sum.UpperBound == nil {
			return true // no value but NULL
		}
		b := *sum.UpperBound
		return len(b) == 4 && int64(int32(binary.LittleEndian.Uint32(b))) <= math.MaxInt32-int64(tr.Width)
	case iceberg.Int64Type:
		if sum.UpperBound == nil {
			return true
		}
		b := *sum.UpperBound
		return len(b) == 8 && int64(binary.LittleEndian.Uint64(b)) <= math.MaxInt64-int64(tr.Width)
	}
	return sum.LowerBound != nil
}

// rangeBoundTrusted says whether a range predicate on field f with bound v
// may be pushed: not when v is within the width of a truncate partition of
// f from the type's minimum (truncating v wraps around).
func (t *Table) rangeBoundTrusted(f iceberg.NestedField, v any) bool {
	var lo int64
	switch f.Type.(type) {
	case iceberg.Int32Type:
		lo = math.MinInt32
	case iceberg.Int64Type:
		lo = math.MinInt64
	default:
		return true
	}
	n, ok := sqlfunc.Signed(v) // sqlfunc/overflow.go
	if !ok {
		return true // not an integer: pushdown.Compare decides
	}
	for _, spec := range t.tbl.Metadata().PartitionSpecs() {
		for _, pf := range spec.Fields() {
			tr, ok := pf.Transform.(iceberg.TruncateTransform)
			if ok && pf.SourceID() == f.ID && n < lo+int64(tr.Width) {
				return false
			}
		}
	}
	return true
}
