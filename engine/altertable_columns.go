package engine

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// mysqlAlterStep is the step of one change of a MySQL ALTER TABLE, or nil
// for a change go-mysql-server handles (RENAME TO, indexes, …).
func mysqlAlterStep(ddl *ast.DDL) alterStep {
	switch {
	case ddl.AlterCommentSpec != nil:
		comment := ddl.AlterCommentSpec.Comment
		return func(alt *alteration) error { return alt.setComment(comment) }
	case ddl.DefaultSpec != nil:
		col := ddl.DefaultSpec.Column.String()
		return func(alt *alteration) error {
			return mysqlerr.NotSupported("ALTER COLUMN %s SET/DROP DEFAULT: icesql tables have no column defaults yet", col)
		}
	case ddl.Action != ast.AlterStr:
		return nil
	}
	var def *ast.ColumnDefinition
	if ddl.TableSpec != nil && len(ddl.TableSpec.Columns) == 1 {
		def = ddl.TableSpec.Columns[0]
	}
	order := ddl.ColumnOrder
	switch ddl.ColumnAction {
	case ast.AddStr:
		if def == nil {
			return nil
		}
		return func(alt *alteration) error { return alt.addColumn(def, order) }
	case ast.DropStr:
		col := ddl.Column.String()
		return func(alt *alteration) error { return alt.dropColumn(col) }
	case ast.ModifyStr, ast.ChangeStr:
		if def == nil {
			return nil
		}
		old := ddl.Column.String()
		if old == "" {
			old = def.Name.String()
		}
		return func(alt *alteration) error { return alt.modifyColumn(old, def, order) }
	case ast.RenameStr:
		from, to := ddl.Column.String(), ddl.ToColumn.String()
		return func(alt *alteration) error { return alt.renameColumn(from, to) }
	}
	return nil
}

// sqlColumn is the column a MySQL column definition declares, refusing
// what an Iceberg column cannot have.
func sqlColumn(def *ast.ColumnDefinition) (*sql.Column, error) {
	name := def.Name.String()
	typ, err := types.ColumnTypeToType(&def.Type)
	if err != nil {
		return nil, err
	}
	switch {
	case bool(def.Type.Autoincrement):
		return nil, mysqlerr.NotSupported("column %s: AUTO_INCREMENT is not supported by Iceberg tables", name)
	case def.Type.GeneratedExpr != nil:
		return nil, mysqlerr.NotSupported("column %s: generated columns are not supported by Iceberg tables", name)
	case def.Type.KeyOpt != 0:
		return nil, mysqlerr.NotSupported("column %s: keys cannot be added to an Iceberg table", name)
	case def.Type.Default != nil && !isNullExpr(def.Type.Default):
		return nil, mysqlerr.NotSupported("column %s: DEFAULT values are not supported yet, since giving existing rows a value would rewrite every data file; add the column without DEFAULT", name)
	}
	col := &sql.Column{Name: name, Type: typ, Nullable: !bool(def.Type.NotNull)}
	if def.Type.Comment != nil {
		col.Comment = string(def.Type.Comment.Val)
	}
	return col, nil
}

func isNullExpr(e ast.Expr) bool {
	_, ok := e.(*ast.NullVal)
	return ok
}

// addColumn is ADD [COLUMN] (also each column of Spark's ADD COLUMNS).
func (alt *alteration) addColumn(def *ast.ColumnDefinition, order *ast.ColumnOrder) error {
	col, err := sqlColumn(def)
	if err != nil {
		return err
	}
	cur, err := alt.current()
	if err != nil {
		return err
	}
	if _, ok := alt.field(cur, col.Name); ok {
		return mysqlerr.DuplicateColumn(col.Name)
	}
	typ, err := sqlval.IcebergType(col)
	if err != nil {
		return err
	}
	required := !col.Nullable
	if required && alt.hasRows() {
		return mysqlerr.AlterNotSupported("ADD COLUMN "+col.Name+" NOT NULL", "table %s has rows, which would have no value for it; add the column without NOT NULL", alt.name)
	}
	us := alt.tx.UpdateSchema(false, required).AddColumn([]string{col.Name}, typ, col.Comment, required, nil)
	if err := alt.move(cur, us, col.Name, order); err != nil {
		return err
	}
	if err := us.Commit(); err != nil {
		return fmt.Errorf("add column %s to %s: %w", col.Name, alt.name, err)
	}
	return alt.declare(col.Name, col.Type)
}

// move positions column name as FIRST or AFTER says.
func (alt *alteration) move(cur *table.Table, us *table.UpdateSchema, name string, order *ast.ColumnOrder) error {
	switch {
	case order == nil:
	case order.First:
		us.MoveFirst([]string{name})
	case !order.AfterColumn.IsEmpty():
		after, ok := alt.field(cur, order.AfterColumn.String())
		if !ok {
			return mysqlerr.UnknownColumn(order.AfterColumn.String(), alt.name)
		}
		if strings.EqualFold(after.Name, name) {
			return nil // AFTER itself: already there
		}
		us.MoveAfter([]string{name}, []string{after.Name})
	}
	return nil
}

// declare remembers the declared SQL type of a column when it is narrower
// than what its Iceberg type shows, and forgets a remembered one otherwise.
func (alt *alteration) declare(name string, typ sql.Type) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	f, ok := alt.field(cur, name)
	if !ok {
		return fmt.Errorf("alter table %s: column %s vanished", alt.name, name)
	}
	key := sqlval.DeclaredTypeKey(f.ID)
	if sqlval.DeclaredNarrower(typ, f.Type) {
		if cur.Properties()[key] == typ.String() {
			return nil
		}
		return alt.tx.SetProperties(iceberg.Properties{key: typ.String()})
	}
	if _, ok := cur.Properties()[key]; ok {
		return alt.tx.RemoveProperties([]string{key})
	}
	return nil
}

// dropColumn is DROP [COLUMN]. Old data files keep the column; reads no
// longer project it.
func (alt *alteration) dropColumn(name string) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	f, ok := alt.field(cur, name)
	if !ok {
		return mysqlerr.CantDrop(name)
	}
	if len(cur.Schema().Fields()) == 1 {
		return mysqlerr.New(mysql.ERCantRemoveAllFields, "You can't delete all columns with ALTER TABLE; use DROP TABLE instead")
	}
	if err := alt.checkUnused(cur, f, "DROP COLUMN "+f.Name); err != nil {
		return err
	}
	if err := alt.tx.UpdateSchema(false, false).DeleteColumn([]string{f.Name}).Commit(); err != nil {
		return fmt.Errorf("drop column %s of %s: %w", f.Name, alt.name, err)
	}
	if key := sqlval.DeclaredTypeKey(f.ID); cur.Properties()[key] != "" {
		return alt.tx.RemoveProperties([]string{key})
	}
	return nil
}

// checkUnused refuses to drop a column that partitions or sorts new files:
// Iceberg would have no source for the partition value or sort key.
func (alt *alteration) checkUnused(cur *table.Table, f iceberg.NestedField, change string) error {
	spec := cur.Spec()
	for _, pf := range spec.Fields() {
		if _, void := pf.Transform.(iceberg.VoidTransform); !void && pf.SourceID() == f.ID {
			term, _ := ddl.TermOf(pf.Transform, f.Name)
			return mysqlerr.AlterNotSupported(change, "column %s is the source of partition field %s of %s; first ALTER TABLE %s DROP PARTITION FIELD %s", f.Name, pf.Name, alt.name, alt.name, term)
		}
	}
	order := cur.SortOrder()
	for _, sf := range order.Fields() {
		if sf.SourceID() == f.ID {
			return mysqlerr.AlterNotSupported(change, "%s writes files ordered by column %s; first change the order with ALTER TABLE %s WRITE ORDERED BY … or WRITE UNORDERED", alt.name, f.Name, alt.name)
		}
	}
	for _, id := range cur.Schema().IdentifierFieldIDs {
		if id == f.ID {
			return mysqlerr.AlterNotSupported(change, "column %s is part of the primary key (Iceberg identifier fields) of %s", f.Name, alt.name)
		}
	}
	return nil
}

// renameColumn is RENAME COLUMN: data files refer to columns by id, so
// nothing but the name changes.
func (alt *alteration) renameColumn(from, to string) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	f, ok := alt.field(cur, from)
	if !ok {
		return mysqlerr.UnknownColumn(from, alt.name)
	}
	if other, ok := alt.field(cur, to); ok && other.ID != f.ID {
		return mysqlerr.DuplicateColumn(to)
	}
	if f.Name == to {
		return nil
	}
	if err := alt.tx.UpdateSchema(false, false).RenameColumn([]string{f.Name}, to).Commit(); err != nil {
		return fmt.Errorf("rename column %s of %s: %w", f.Name, alt.name, err)
	}
	return nil
}

// modifyColumn is MySQL's MODIFY and CHANGE: the column takes the new
// definition whole (type, nullability, comment, name, position).
func (alt *alteration) modifyColumn(old string, def *ast.ColumnDefinition, order *ast.ColumnOrder) error {
	col, err := sqlColumn(def)
	if err != nil {
		return err
	}
	nullable, comment := col.Nullable, col.Comment
	return alt.changeColumn(old, columnChange{name: col.Name, typ: col.Type, nullable: &nullable, comment: &comment, order: order})
}

// alterColumn is Spark's ALTER COLUMN, which changes only what it names.
func (alt *alteration) alterColumn(a *planner.AlterColumn) error {
	ch := columnChange{nullable: a.Nullable, comment: a.Comment}
	if a.Type != "" {
		typ, err := parseColumnType(a.Type)
		if err != nil {
			return err
		}
		ch.typ = typ
	}
	switch {
	case a.First:
		ch.order = &ast.ColumnOrder{First: true}
	case a.After != "":
		ch.order = &ast.ColumnOrder{AfterColumn: ast.NewColIdent(a.After)}
	}
	return alt.changeColumn(a.Column, ch)
}

// parseColumnType reads a MySQL column type as CREATE TABLE would.
func parseColumnType(text string) (sql.Type, error) {
	stmt, err := ast.Parse("CREATE TABLE t (c " + text + ")")
	if err != nil {
		return nil, mysqlerr.New(mysql.ERParseError, "invalid column type %q: %v", text, err)
	}
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.TableSpec == nil || len(ddl.TableSpec.Columns) != 1 {
		return nil, mysqlerr.New(mysql.ERParseError, "invalid column type %q", text)
	}
	col, err := sqlColumn(ddl.TableSpec.Columns[0])
	if err != nil {
		return nil, err
	}
	if !col.Nullable || col.Comment != "" {
		return nil, mysqlerr.New(mysql.ERParseError, "ALTER COLUMN … TYPE takes only a type, not %q", text)
	}
	return col.Type, nil
}

// columnChange is what a MODIFY, CHANGE or ALTER COLUMN changes; nil and
// empty fields stay as they are.
type columnChange struct {
	name     string
	typ      sql.Type
	nullable *bool
	comment  *string
	order    *ast.ColumnOrder
}

// changeColumn applies a change to column old within what Iceberg allows
// without touching data: widening types, dropping NOT NULL (adding it only
// while the table is empty), comments, names and positions.
func (alt *alteration) changeColumn(old string, ch columnChange) error {
	cur, err := alt.current()
	if err != nil {
		return err
	}
	f, ok := alt.field(cur, old)
	if !ok {
		return mysqlerr.UnknownColumn(old, alt.name)
	}
	what := "changing column " + f.Name
	var upd table.ColumnUpdate
	incompatible := false
	if ch.typ != nil {
		it, err := sqlval.IcebergType(&sql.Column{Name: f.Name, Type: ch.typ})
		if err != nil {
			return err
		}
		shown := sqlval.SQLType(f.Type)
		if declared, ok := sqlval.DeclaredType(cur.Properties(), f); ok {
			shown = declared
		}
		switch {
		case !it.Equals(f.Type) && !promotable(f.Type, it):
			return mysqlerr.AlterNotSupported(what+" from "+shown.String()+" to "+ch.typ.String(),
				"Iceberg changes a column's type without rewriting data only from INT to BIGINT, FLOAT to DOUBLE and DECIMAL(P,S) to DECIMAL(P2,S) with P2 > P")
		case it.Equals(f.Type) && narrows(shown, ch.typ):
			return mysqlerr.AlterNotSupported(what+" from "+shown.String()+" to "+ch.typ.String(),
				"the new type is narrower and existing values might not fit; icesql does not rewrite data to check them")
		}
		if !it.Equals(f.Type) {
			upd.FieldType = iceberg.Optional[iceberg.Type]{Valid: true, Val: it}
		}
	}
	if ch.nullable != nil && *ch.nullable == f.Required {
		if !f.Required && alt.hasRows() {
			return mysqlerr.AlterNotSupported(what+" to NOT NULL", "table %s has rows, and Iceberg cannot make an optional column required without reading them", alt.name)
		}
		incompatible = !*ch.nullable
		upd.Required = iceberg.Optional[bool]{Valid: true, Val: !*ch.nullable}
	}
	if ch.comment != nil && *ch.comment != f.Doc {
		upd.Doc = iceberg.Optional[string]{Valid: true, Val: *ch.comment}
	}
	newName := f.Name
	if ch.name != "" && ch.name != f.Name {
		if other, ok := alt.field(cur, ch.name); ok && other.ID != f.ID {
			return mysqlerr.DuplicateColumn(ch.name)
		}
		newName = ch.name
	}
	if upd.FieldType.Valid || upd.Required.Valid || upd.Doc.Valid {
		if err := alt.tx.UpdateSchema(false, incompatible).UpdateColumn([]string{f.Name}, upd).Commit(); err != nil {
			return fmt.Errorf("%s of %s: %w", what, alt.name, err)
		}
	}
	if newName != f.Name {
		if err := alt.renameColumn(f.Name, newName); err != nil {
			return err
		}
	}
	if ch.order != nil {
		after, err := alt.current()
		if err != nil {
			return err
		}
		us := alt.tx.UpdateSchema(false, false)
		if err := alt.move(after, us, newName, ch.order); err != nil {
			return err
		}
		if err := us.Commit(); err != nil {
			return fmt.Errorf("move column %s of %s: %w", newName, alt.name, err)
		}
	}
	if ch.typ != nil {
		return alt.declare(newName, ch.typ)
	}
	return nil
}

// promotable reports whether Iceberg reads data of type from as type to.
func promotable(from, to iceberg.Type) bool {
	switch f := from.(type) {
	case iceberg.Int32Type:
		return to.Equals(iceberg.PrimitiveTypes.Int64)
	case iceberg.Float32Type:
		return to.Equals(iceberg.PrimitiveTypes.Float64)
	case iceberg.DecimalType:
		t, ok := to.(iceberg.DecimalType)
		return ok && t.Scale() == f.Scale() && t.Precision() >= f.Precision()
	}
	return false
}

// narrows reports whether SQL type to holds fewer values than from, for
// types stored as the same Iceberg type: a shorter VARCHAR, a smaller
// integer.
func narrows(from, to sql.Type) bool {
	if fs, ok := from.(sql.StringType); ok {
		ts, ok := to.(sql.StringType)
		return ok && ts.MaxCharacterLength() < fs.MaxCharacterLength()
	}
	fr, okf := intRanges[from.Type()]
	tr, okt := intRanges[to.Type()]
	return okf && okt && (tr[0] > fr[0] || tr[1] < fr[1])
}

// intRanges are the value ranges of MySQL's integer types.
var intRanges = map[querypb.Type][2]int64{
	sqltypes.Int8: {-1 << 7, 1<<7 - 1}, sqltypes.Uint8: {0, 1<<8 - 1},
	sqltypes.Int16: {-1 << 15, 1<<15 - 1}, sqltypes.Uint16: {0, 1<<16 - 1},
	sqltypes.Int24: {-1 << 23, 1<<23 - 1}, sqltypes.Uint24: {0, 1<<24 - 1},
	sqltypes.Int32: {-1 << 31, 1<<31 - 1}, sqltypes.Uint32: {0, 1<<32 - 1},
	sqltypes.Int64: {-1 << 63, 1<<63 - 1},
}
