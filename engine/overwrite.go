package engine

import (
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/google/uuid"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/pushdown"
)

// INSERT OVERWRITE follows Spark with Iceberg (the Iceberg docs' "Spark
// Writes" page):
//
//   - static mode, Spark's default and icesql's: the PARTITION clause's
//     values are a filter, and the rows replace every file the filter
//     selects; without a PARTITION clause, the whole table.
//   - dynamic mode (SET spark.sql.sources.partitionOverwriteMode = dynamic,
//     or icesql_partition_overwrite_mode): the rows replace exactly the
//     partitions they fall in, under the table's current partition spec;
//     no rows replace nothing. An unpartitioned table is one partition.
//
// Static PARTITION values fill their columns, and the query supplies the
// other columns, in table order. A PARTITION column must be the source of
// an identity partition field of the current spec, as in Spark. A file
// written under an older spec that does not partition by a static column
// may hold rows on both sides of the filter; Spark (Iceberg's overwrite by
// filter) refuses to split it, and so does icesql.
//
// The statement makes one `overwrite` snapshot (`delete` when it removes
// every file and adds none, `append` when it only adds; Spark says
// `overwrite`) and none when it changes nothing.

const (
	overwriteStatic  = "static"
	overwriteDynamic = "dynamic"
)

// registerSessionVariables adds icesql's session variables to
// go-mysql-server's registry (which is process-wide).
func registerSessionVariables() {
	sql.SystemVariables.AddSystemVariables([]sql.SystemVariable{
		&sql.MysqlSystemVariable{
			Name:    planner.PartitionOverwriteModeVariable,
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemEnumType(planner.PartitionOverwriteModeVariable, overwriteStatic, overwriteDynamic),
			Default: overwriteStatic,
		},
	})
}

// overwriteTable is the target of an INSERT OVERWRITE: the table without
// the columns the PARTITION clause gives values, since the query supplies
// only the others.
type overwriteTable struct {
	*Table
	mode   string
	static map[int]any // full-schema column index → static value
	// filter matches the rows of the static PARTITION values, on the
	// static columns (filterSchema), in the file's partition tuple.
	filter       iceberg.BooleanExpression
	filterSchema *iceberg.Schema
	filterFields []int // Iceberg field ids of filterSchema's columns
	clause       string
}

var _ sql.InsertableTable = (*overwriteTable)(nil)

// overwriteTarget resolves the target of INSERT OVERWRITE (see
// planner.OverwriteTarget).
func (d *Database) overwriteTarget(ctx *sql.Context, name string, o planner.Overwrite) (sql.Table, bool, error) {
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, false, sql.ErrTableNotFound.New(name)
	}
	tbl, err := sessionOf(ctx).pinnedTable(ctx, d.e.catalog, d.ident(real))
	if err != nil {
		return nil, false, mysqlerr.CatalogError(err, real)
	}
	mode, err := ctx.GetSessionVariable(ctx, planner.PartitionOverwriteModeVariable)
	if err != nil {
		return nil, false, err
	}
	ot := &overwriteTable{Table: newTable(d, real, tbl, nil), mode: strings.ToLower(fmt.Sprint(mode)), static: map[int]any{}}
	if err := ot.bindPartitionClause(ctx, o); err != nil {
		return nil, false, err
	}
	return ot, true, nil
}

// bindPartitionClause checks the PARTITION clause against the table and
// converts its values to the columns' types.
func (ot *overwriteTable) bindPartitionClause(ctx *sql.Context, o planner.Overwrite) error {
	var terms []string
	var preds []iceberg.BooleanExpression
	var nested []iceberg.NestedField
	check := func(col string) (int, iceberg.NestedField, error) {
		i := ot.schema.IndexOfColName(col)
		if i < 0 {
			return 0, iceberg.NestedField{}, sql.ErrColumnNotFound.New(col)
		}
		field, ok := ot.tbl.Schema().FindFieldByName(ot.names[i])
		if !ok || !identityPartitioned(ot.tbl.Spec(), field.ID) {
			return 0, iceberg.NestedField{}, mysqlerr.NotSupported("INSERT OVERWRITE %s PARTITION (%s ...): %s is not an identity partition column of the table; the PARTITION clause names only those, as in Spark (other partitions are replaced by the rows' values in dynamic mode)", ot, col, col)
		}
		return i, field, nil
	}
	for _, col := range o.Dynamic {
		if _, _, err := check(col); err != nil {
			return err
		}
		terms = append(terms, col)
	}
	for _, sv := range o.Static {
		i, field, err := check(sv.Column)
		if err != nil {
			return err
		}
		var v any
		if !sv.Null {
			if v, _, err = ot.schema[i].Type.Convert(ctx, sv.Value); err != nil {
				return sql.ErrInvalidValue.New(sv.Value, ot.schema[i].Type.String()+" (PARTITION column "+sv.Column+")")
			}
		}
		pred, exact, ok := pushdown.Compare(field, iceberg.OpEQ, v)
		if v == nil {
			pred, exact, ok = pushdown.IsNull(field)
		}
		if !ok || !exact {
			return mysqlerr.NotSupported("INSERT OVERWRITE %s PARTITION (%s = %s): icesql cannot match that value exactly against partition values of type %s", ot, sv.Column, sv.Value, field.Type)
		}
		ot.static[i] = v
		preds = append(preds, pred)
		nested = append(nested, field)
		terms = append(terms, sv.Column+" = "+fmt.Sprint(v))
	}
	ot.clause = strings.Join(terms, ", ")
	if len(preds) > 0 {
		ot.filter = preds[0]
		for _, p := range preds[1:] {
			ot.filter = iceberg.NewAnd(ot.filter, p)
		}
		ot.filterSchema = iceberg.NewSchema(0, nested...)
		for _, f := range nested {
			ot.filterFields = append(ot.filterFields, f.ID)
		}
	}
	return nil
}

func identityPartitioned(spec iceberg.PartitionSpec, sourceID int) bool {
	_, ok := identityField(spec, sourceID)
	return ok
}

// identityField returns the partition field id of spec's identity field on
// the column sourceID.
func identityField(spec iceberg.PartitionSpec, sourceID int) (int, bool) {
	for _, f := range spec.Fields() {
		if f.SourceID() == sourceID {
			if _, ok := f.Transform.(iceberg.IdentityTransform); ok {
				return f.FieldID, true
			}
		}
	}
	return 0, false
}

// Schema implements sql.Table: the columns the query supplies.
func (ot *overwriteTable) Schema(*sql.Context) sql.Schema {
	out := make(sql.Schema, 0, len(ot.schema))
	for i, col := range ot.schema {
		if _, ok := ot.static[i]; !ok {
			out = append(out, col)
		}
	}
	return out
}

// PrimaryKeySchema implements sql.PrimaryKeyTable, consistently with Schema.
func (ot *overwriteTable) PrimaryKeySchema(ctx *sql.Context) sql.PrimaryKeySchema {
	return sql.NewPrimaryKeySchema(ot.Schema(ctx))
}

// String names the statement's target in messages.
func (ot *overwriteTable) String() string { return ot.Table.String() }

// Inserter implements sql.InsertableTable.
func (ot *overwriteTable) Inserter(*sql.Context) sql.RowInserter {
	return &overwriter{inserter: inserter{t: ot.Table}, ot: ot}
}

// overwriter writes the rows like INSERT and, at the end of the statement,
// stages the files they replace for removal.
type overwriter struct {
	inserter
	ot *overwriteTable
}

// Insert implements sql.RowInserter: the static PARTITION values join the
// row in their columns.
func (w *overwriter) Insert(ctx *sql.Context, row sql.Row) error {
	if len(w.ot.static) == 0 {
		return w.inserter.Insert(ctx, row)
	}
	full := make(sql.Row, len(w.ot.schema))
	j := 0
	for i := range full {
		if v, ok := w.ot.static[i]; ok {
			full[i] = v
			continue
		}
		full[i] = row[j]
		j++
	}
	return w.inserter.Insert(ctx, full)
}

// StatementComplete implements sql.EditOpenerCloser.
func (w *overwriter) StatementComplete(ctx *sql.Context) error {
	if w.err != nil {
		return w.err
	}
	w.flush(ctx)
	if w.err != nil {
		return w.err
	}
	var added []iceberg.DataFile
	if w.writer != nil {
		files, err := w.writer.finish()
		w.writer = nil
		if err != nil {
			return fmt.Errorf("write data files of %s: %w", w.ot, err)
		}
		added = files
	}
	if explicit, err := inExplicitTransaction(ctx); err != nil {
		return err
	} else if explicit {
		return sessionOf(ctx).stageOverwrite(ctx, w.ot, added) // overwrite_tx.go
	}
	removed, ch, err := w.ot.replaced(ctx, added)
	if err != nil {
		return err
	}
	sessionOf(ctx).stageFileChange(w.ot.db.ident(w.ot.name), removed, added, ch)
	return nil
}

// replaced chooses the data files of the pinned snapshot that the rows
// written (added) replace, and what a concurrent writer must not add.
func (ot *overwriteTable) replaced(ctx *sql.Context, added []iceberg.DataFile) ([]iceberg.DataFile, *fileChange, error) {
	snap := ot.tbl.CurrentSnapshot()
	ch := &fileChange{}
	if snap != nil {
		id := snap.SnapshotID
		ch.base = &id
	}
	in := ot.scope(added)
	if in == nil {
		return nil, nil, nil
	}
	live, err := liveDataFiles(ctx, ot.tbl, snap)
	if err != nil {
		return nil, nil, fmt.Errorf("overwrite %s: list data files: %w", ot, err)
	}
	var removed []iceberg.DataFile
	for _, f := range live {
		ok, err := in(f)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			removed = append(removed, f)
		}
	}
	ch.overlaps = func(f iceberg.DataFile) bool {
		ok, err := in(f)
		return ok || err != nil // a file that cannot be placed may overlap
	}
	return removed, ch, nil
}

// scope reports whether a data file lies in what the rows written (added)
// replace; nil when they replace nothing.
func (ot *overwriteTable) scope(added []iceberg.DataFile) func(iceberg.DataFile) (bool, error) {
	switch {
	case ot.mode == overwriteDynamic:
		if len(added) == 0 {
			return nil
		}
		keys := map[string]bool{}
		for _, f := range added {
			keys[partitionKey(f)] = true
		}
		return func(f iceberg.DataFile) (bool, error) { return keys[partitionKey(f)], nil }
	case ot.filter == nil:
		return func(iceberg.DataFile) (bool, error) { return true, nil }
	}
	return ot.matchesStatic
}

// matchesStatic reports whether every row of f has the static PARTITION
// values, from f's partition tuple; a file whose spec does not partition by
// every static column by identity could be split by the filter, and is
// refused.
func (ot *overwriteTable) matchesStatic(f iceberg.DataFile) (bool, error) {
	spec := ot.tbl.Metadata().PartitionSpecByID(int(f.SpecID()))
	if spec == nil {
		return false, fmt.Errorf("overwrite %s: data file %s has unknown partition spec %d", ot, f.FilePath(), f.SpecID())
	}
	row := make(structRow, len(ot.filterFields))
	values := f.Partition()
	for i, sourceID := range ot.filterFields {
		fieldID, ok := identityField(*spec, sourceID)
		if !ok {
			return false, mysqlerr.NotSupported("INSERT OVERWRITE %s PARTITION (%s): data file %s was written under partition spec %d, which does not partition by every PARTITION column, so some but not all of its rows may match; Spark refuses this overwrite too. Use dynamic mode, or rewrite the table first (INSERT OVERWRITE without PARTITION)", ot, ot.clause, f.FilePath(), spec.ID())
		}
		row[i] = values[fieldID]
	}
	eval, err := iceberg.ExpressionEvaluator(ot.filterSchema, ot.filter, false)
	if err != nil {
		return false, fmt.Errorf("overwrite %s: bind PARTITION filter: %w", ot, err)
	}
	return eval(row)
}

// structRow is a partition tuple as iceberg.StructLike.
type structRow []any

func (r structRow) Size() int          { return len(r) }
func (r structRow) Get(pos int) any    { return r[pos] }
func (r structRow) Set(pos int, v any) { r[pos] = v }

// partitionKey identifies the partition a data file belongs to: its spec
// and partition tuple. Values are spelled out so that the writer's Go types
// and those decoded from a manifest compare equal.
func partitionKey(f iceberg.DataFile) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d", f.SpecID())
	values := f.Partition()
	for _, id := range slices.Sorted(maps.Keys(values)) {
		fmt.Fprintf(&b, "|%d=", id)
		switch v := values[id].(type) {
		case nil:
			b.WriteString("null")
		case []byte:
			b.WriteString("x" + hex.EncodeToString(v))
		case uuid.UUID:
			b.WriteString("x" + hex.EncodeToString(v[:]))
		case string:
			fmt.Fprintf(&b, "%q", v)
		default:
			fmt.Fprintf(&b, "v%v", v)
		}
	}
	return b.String()
}
