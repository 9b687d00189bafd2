package engine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
)

// addPartitionField is ADD PARTITION FIELD: new files are written under the
// new spec, old files keep theirs.
func (alt *alteration) addPartitionField(t planner.PartitionTerm, name string) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	tr, f, err := alt.partitionSource(cur, t)
	if err != nil {
		return err
	}
	if err := alt.tx.UpdateSpec(false).AddField(f.Name, tr, name).Commit(); err != nil {
		return mysqlerr.InvalidPartition("ADD PARTITION FIELD %s on %s: %v", t, alt.name, err)
	}
	return nil
}

// partitionSource checks a term against the table's columns.
func (alt *alteration) partitionSource(cur *table.Table, t planner.PartitionTerm) (iceberg.Transform, iceberg.NestedField, error) {
	f, err := ddl.SourceField(cur.Schema(), t, alt.name)
	if err != nil {
		return nil, f, err
	}
	tr := ddl.IcebergTransform(t)
	return tr, f, ddl.CheckTransform(tr, f, t)
}

// replacePartitionField is DROP PARTITION FIELD (to is nil) and REPLACE
// PARTITION FIELD. from names a field of the current spec by its term, or,
// written as a bare name, by the field's name.
func (alt *alteration) replacePartitionField(from, to *planner.PartitionTerm, name string) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	field, err := alt.findPartitionField(cur, *from)
	if err != nil {
		return err
	}
	us := alt.tx.UpdateSpec(false).RemoveField(field)
	if to != nil {
		tr, f, err := alt.partitionSource(cur, *to)
		if err != nil {
			return err
		}
		us = us.AddField(f.Name, tr, name)
	}
	if err := us.Commit(); err != nil {
		return mysqlerr.InvalidPartition("partition field %s of %s: %v", from, alt.name, err)
	}
	return nil
}

// findPartitionField returns the name of the current spec's field that t
// means.
func (alt *alteration) findPartitionField(cur *table.Table, t planner.PartitionTerm) (string, error) {
	spec := cur.Spec()
	if t.Transform == planner.TransformIdentity {
		for _, f := range spec.Fields() {
			if strings.EqualFold(f.Name, t.Column) {
				return f.Name, nil
			}
		}
	}
	if src, ok := alt.field(cur, t.Column); ok {
		tr := ddl.IcebergTransform(t)
		for _, f := range spec.Fields() {
			if f.SourceID() == src.ID && f.Transform.Equals(tr) {
				return f.Name, nil
			}
		}
	}
	return "", mysqlerr.New(mysql.ERCantDropFieldOrKey, "Can't DROP partition field '%s' of %s; check that it is in the table's current partitioning (SHOW CREATE TABLE)", t, alt.name)
}

// writeOrder is WRITE [LOCALLY] ORDERED BY, DISTRIBUTED BY PARTITION and
// UNORDERED: the sort order new files are written in, and Spark's
// write.distribution-mode.
func (alt *alteration) writeOrder(w *planner.WriteOrder) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	order := table.UnsortedSortOrder
	if len(w.Fields) > 0 {
		if order, err = ddl.SortOrder(cur.Schema(), w.Fields, alt.name); err != nil {
			return err
		}
	}
	if err := alt.tx.ReplaceSortOrder(order); err != nil {
		return fmt.Errorf("set the sort order of %s: %w", alt.name, err)
	}
	return alt.tx.SetProperties(iceberg.Properties{"write.distribution-mode": w.Distribution})
}

// setProperties is SET TBLPROPERTIES; 'format-version' upgrades the table.
func (alt *alteration) setProperties(props map[string]string) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	rest := iceberg.Properties{}
	for k, v := range props {
		if strings.HasPrefix(k, "icesql.column.") {
			return mysqlerr.AlterNotSupported("SET TBLPROPERTIES '"+k+"'", "icesql keeps these properties itself from the column types; change the column's type instead")
		}
		rest[k] = v
	}
	merged := maps.Clone(cur.Properties())
	maps.Copy(merged, rest)
	if err := validateProperties(merged); err != nil {
		return err
	}
	if v, ok := rest["format-version"]; ok {
		delete(rest, "format-version")
		n, _ := strconv.Atoi(v) // validated above
		switch have := cur.Metadata().Version(); {
		case n < have:
			return mysqlerr.AlterNotSupported(fmt.Sprintf("SET TBLPROPERTIES ('format-version' = '%d')", n), "%s is format-version %d and Iceberg tables cannot be downgraded", alt.name, have)
		case n > have:
			if err := alt.tx.UpgradeFormatVersion(n); err != nil {
				return fmt.Errorf("upgrade %s to format-version %d: %w", alt.name, n, err)
			}
		}
	}
	if len(rest) == 0 {
		return nil
	}
	return alt.tx.SetProperties(rest)
}

// unsetProperties is UNSET TBLPROPERTIES [IF EXISTS].
func (alt *alteration) unsetProperties(keys []string, ifExists bool) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	var remove []string
	for _, k := range keys {
		if k == "format-version" || strings.HasPrefix(k, "icesql.column.") {
			return mysqlerr.AlterNotSupported("UNSET TBLPROPERTIES '"+k+"'", "the property is part of the table's definition")
		}
		if _, ok := cur.Properties()[k]; !ok {
			if ifExists {
				continue
			}
			return mysqlerr.New(mysql.ERWrongArguments, "UNSET TBLPROPERTIES: table %s has no property '%s'; use UNSET TBLPROPERTIES IF EXISTS to ignore missing ones", alt.name, k)
		}
		remove = append(remove, k)
	}
	if len(remove) == 0 {
		return nil
	}
	slices.Sort(remove)
	return alt.tx.RemoveProperties(remove)
}

// setComment is MySQL's ALTER TABLE … COMMENT = 'x'.
func (alt *alteration) setComment(comment string) error {
	if comment == "" {
		cur, err := alt.current()
		if err != nil {
			return err
		}
		if _, ok := cur.Properties()["comment"]; !ok {
			return nil
		}
		return alt.tx.RemoveProperties([]string{"comment"})
	}
	return alt.tx.SetProperties(iceberg.Properties{"comment": comment})
}
