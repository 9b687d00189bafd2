package engine

import (
	"context"
	"sync"

	"github.com/apache/iceberg-go"
)

// iceberg-go v0.7.0 writes the empty string as a NULL lower bound in a
// manifest's partition summary (StringLiteral.MarshalBinary returns a nil
// slice for ""), and its manifest pruning reads a missing lower bound as
// "every partition value is NULL": a predicate on a column partitioned by
// identity or truncate, pushed to it, then skipped every manifest whose
// files hold an empty string, and the scan lost all their rows (s IS NOT
// NULL returned nothing). Such a column is therefore pushed only when no
// manifest of the snapshot lacks that bound.

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
	case iceberg.StringType, iceberg.BinaryType:
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
			switch f.Transform.(type) {
			case iceberg.IdentityTransform, iceberg.TruncateTransform:
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
	snap := t.snapshot()
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
			switch fields[i].Transform.(type) {
			case iceberg.IdentityTransform, iceberg.TruncateTransform:
				if sum.LowerBound == nil {
					out[fields[i].SourceID()] = true
				}
			}
		}
	}
	return out
}
