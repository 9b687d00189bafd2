// Package ddl turns the table definitions of CREATE and ALTER TABLE into
// Iceberg's: partition clauses to partition specs and back (partitioning.go),
// WRITE ORDERED BY to sort orders, the properties a new table gets
// (tabledefaults.go), and FOREIGN KEY clauses kept as table properties for
// SHOW CREATE TABLE (foreignkeys.go).
package ddl

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// IcebergTransform is the Iceberg transform of a partition term.
func IcebergTransform(t planner.PartitionTerm) iceberg.Transform {
	switch t.Transform {
	case planner.TransformBucket:
		return iceberg.BucketTransform{NumBuckets: t.Param}
	case planner.TransformTruncate:
		return iceberg.TruncateTransform{Width: t.Param}
	case planner.TransformYear:
		return iceberg.YearTransform{}
	case planner.TransformMonth:
		return iceberg.MonthTransform{}
	case planner.TransformDay:
		return iceberg.DayTransform{}
	case planner.TransformHour:
		return iceberg.HourTransform{}
	}
	return iceberg.IdentityTransform{}
}

// TermOf is the partition term of a transform of column col, the inverse of
// icebergTransform; ok is false for transforms SQL cannot write (void).
func TermOf(tr iceberg.Transform, col string) (planner.PartitionTerm, bool) {
	t := planner.PartitionTerm{Column: col}
	switch tr := tr.(type) {
	case iceberg.IdentityTransform:
		t.Transform = planner.TransformIdentity
	case iceberg.BucketTransform:
		t.Transform, t.Param = planner.TransformBucket, tr.NumBuckets
	case iceberg.TruncateTransform:
		t.Transform, t.Param = planner.TransformTruncate, tr.Width
	case iceberg.YearTransform:
		t.Transform = planner.TransformYear
	case iceberg.MonthTransform:
		t.Transform = planner.TransformMonth
	case iceberg.DayTransform:
		t.Transform = planner.TransformDay
	case iceberg.HourTransform:
		t.Transform = planner.TransformHour
	default:
		return t, false
	}
	return t, true
}

// SourceField finds the column a term transforms, or fails with MySQL's
// unknown column error.
func SourceField(sc *iceberg.Schema, t planner.PartitionTerm, tableName string) (iceberg.NestedField, error) {
	f, ok := sc.FindFieldByNameCaseInsensitive(t.Column)
	if !ok {
		return iceberg.NestedField{}, mysqlerr.UnknownColumn(t.Column, tableName)
	}
	return f, nil
}

// CheckTransform fails when a transform cannot apply to a column's type
// (days of an INT, truncate of a DOUBLE).
func CheckTransform(tr iceberg.Transform, f iceberg.NestedField, t planner.PartitionTerm) error {
	if !tr.CanTransform(f.Type) {
		return mysqlerr.InvalidPartition("%s cannot partition column %s of type %s", t, f.Name, f.Type)
	}
	return nil
}

// PartitionSpec builds the spec of PARTITIONED BY terms over a new table's schema.
func PartitionSpec(sc *iceberg.Schema, terms []string, tableName string) (*iceberg.PartitionSpec, error) {
	var opts []iceberg.PartitionOption
	for _, text := range terms {
		t, name, err := planner.ParsePartitionField(text)
		if err != nil {
			return nil, mysqlerr.InvalidPartition("PARTITIONED BY term %q: %v", text, err)
		}
		f, err := SourceField(sc, t, tableName)
		if err != nil {
			return nil, err
		}
		tr := IcebergTransform(t)
		if err := CheckTransform(tr, f, t); err != nil {
			return nil, err
		}
		if name == "" {
			if name, err = iceberg.GeneratePartitionFieldName(sc, iceberg.PartitionField{SourceIDs: []int{f.ID}, Transform: tr}); err != nil {
				return nil, err
			}
		}
		opts = append(opts, iceberg.AddPartitionFieldBySourceID(f.ID, name, tr, sc, nil))
	}
	spec, err := iceberg.NewPartitionSpecOpts(opts...)
	if err != nil {
		return nil, mysqlerr.InvalidPartition("PARTITIONED BY (%s): %v", strings.Join(terms, ", "), err)
	}
	return &spec, nil
}

// PartitionClause is the PARTITIONED BY clause of a table's current spec,
// or "" for an unpartitioned table. Fields that are no longer partitioned
// (void, from a v1 DROP PARTITION FIELD) are left out.
func PartitionClause(tbl *table.Table) string {
	spec := tbl.Spec()
	var terms []string
	for _, f := range spec.Fields() {
		col, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			continue
		}
		t, ok := TermOf(f.Transform, col)
		if !ok {
			continue
		}
		s := t.String()
		if def, err := iceberg.GeneratePartitionFieldName(tbl.Schema(), iceberg.PartitionField{SourceIDs: f.SourceIDs, Transform: f.Transform}); err == nil && def != f.Name {
			// A field named by ADD PARTITION FIELD ... AS, or whose source
			// column was renamed since.
			s += " AS " + sqlval.QuoteIdent(f.Name)
		}
		terms = append(terms, s)
	}
	if len(terms) == 0 {
		return ""
	}
	return "PARTITIONED BY (" + strings.Join(terms, ", ") + ")"
}

// SortClause is the WRITE ORDERED BY clause of a table's default sort
// order, or "" when the table is unsorted.
func SortClause(tbl *table.Table) string {
	terms := sortTerms(tbl)
	if len(terms) == 0 {
		return ""
	}
	return "WRITE ORDERED BY " + strings.Join(terms, ", ")
}

// sortTerms renders the fields of the default sort order.
func sortTerms(tbl *table.Table) []string {
	order := tbl.SortOrder()
	var out []string
	for _, f := range order.Fields() {
		col, ok := tbl.Schema().FindColumnName(f.SourceID())
		if !ok {
			continue
		}
		t, ok := TermOf(f.Transform, col)
		if !ok {
			continue
		}
		s := t.String()
		if f.Direction == table.SortDESC {
			s += " DESC"
		} else {
			s += " ASC"
		}
		if f.NullOrder == table.NullsFirst {
			s += " NULLS FIRST"
		} else {
			s += " NULLS LAST"
		}
		out = append(out, s)
	}
	return out
}

// SortOrder builds a sort order from WRITE ORDERED BY terms.
func SortOrder(sc *iceberg.Schema, terms []planner.SortTerm, tableName string) (table.SortOrder, error) {
	fields := make([]table.SortField, 0, len(terms))
	for _, st := range terms {
		f, err := SourceField(sc, st.Term, tableName)
		if err != nil {
			return table.SortOrder{}, err
		}
		tr := IcebergTransform(st.Term)
		if err := CheckTransform(tr, f, st.Term); err != nil {
			return table.SortOrder{}, err
		}
		sf := table.SortField{SourceIDs: []int{f.ID}, Transform: tr, Direction: table.SortASC, NullOrder: table.NullsLast}
		if st.Descending {
			sf.Direction = table.SortDESC
		}
		if st.NullsFirst {
			sf.NullOrder = table.NullsFirst
		}
		fields = append(fields, sf)
	}
	order, err := table.NewSortOrder(table.InitialSortOrderID, fields)
	if err != nil {
		return table.SortOrder{}, fmt.Errorf("sort order: %w", err)
	}
	return order, nil
}

// ParsedSortOrder builds the sort order of CREATE TABLE's WRITE ORDERED BY.
func ParsedSortOrder(sc *iceberg.Schema, texts []string, tableName string) (table.SortOrder, error) {
	terms := make([]planner.SortTerm, 0, len(texts))
	for _, text := range texts {
		t, err := planner.ParseSortTerm(text)
		if err != nil {
			return table.SortOrder{}, fmt.Errorf("WRITE ORDERED BY %q: %w", text, err)
		}
		terms = append(terms, t)
	}
	return SortOrder(sc, terms, tableName)
}
