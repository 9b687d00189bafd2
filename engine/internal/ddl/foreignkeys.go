package ddl

import (
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
)

// Foreign keys are recorded, never enforced, as indexes are (engine/indexes.go):
// Iceberg has no constraints across tables, and none could hold while other
// engines write them. So that MySQL schemas load, CREATE TABLE accepts
// FOREIGN KEY constraints and column REFERENCES clauses (which MySQL 8
// itself ignores), keeps each in the table property
// icesql.foreign-key.<name> and warns (1235) that it is not enforced.
// ALTER TABLE ... ADD or DROP FOREIGN KEY are refused with 1235.
// go-mysql-server would refuse them (its tables must implement foreign key
// editing), so they are taken out of the statement before it plans it.

const ForeignKeyProperty = "icesql.foreign-key."

// RecordForeignKeys moves the foreign keys of a CREATE TABLE into its table
// options.
func RecordForeignKeys(stmt ast.Statement) error {
	ddl, ok := stmt.(*ast.DDL)
	if !ok || ddl.Action != ast.CreateStr || ddl.TableSpec == nil {
		return nil
	}
	spec := ddl.TableSpec
	var fks []*ast.ConstraintDefinition
	for _, col := range spec.Columns {
		if fk := col.Type.ForeignKeyDef; fk != nil {
			fk.Source = ast.Columns{col.Name}
			fks = append(fks, &ast.ConstraintDefinition{Details: fk})
			col.Type.ForeignKeyDef = nil
		}
	}
	spec.Constraints = slices.DeleteFunc(spec.Constraints, func(c *ast.ConstraintDefinition) bool {
		if _, ok := c.Details.(*ast.ForeignKeyDefinition); ok {
			fks = append(fks, c)
			return true
		}
		return false
	})
	if len(fks) == 0 {
		return nil
	}
	comment := tableComment(spec)
	opts, err := planner.DecodeTableOptions(comment.Value)
	if err != nil {
		return err
	}
	if opts.Properties == nil {
		opts.Properties = map[string]string{}
	}
	table := ddl.Table.Name.String()
	n := 0
	for _, c := range fks {
		name := c.Name
		if name == "" {
			n++
			name = fmt.Sprintf("%s_ibfk_%d", table, n) // MySQL's name for an unnamed one
		}
		key := ForeignKeyProperty + strings.ToLower(name)
		if _, dup := opts.Properties[key]; dup {
			return mysqlerr.New(mysql.ERDupKeyName, "Duplicate foreign key constraint name '%s'", name)
		}
		opts.Properties[key] = foreignKeyText(c.Details.(*ast.ForeignKeyDefinition))
	}
	comment.Value = planner.EncodeTableOptions(opts)
	return nil
}

// tableComment returns the CREATE TABLE's COMMENT option, added if absent.
func tableComment(spec *ast.TableSpec) *ast.TableOption {
	for _, o := range spec.TableOpts {
		if strings.EqualFold(o.Name, "comment") {
			return o
		}
	}
	o := &ast.TableOption{Name: "COMMENT"}
	spec.TableOpts = append(spec.TableOpts, o)
	return o
}

// foreignKeyText is the constraint as MySQL's SHOW CREATE TABLE writes it.
func foreignKeyText(fk *ast.ForeignKeyDefinition) string {
	quote := func(cols ast.Columns) string {
		q := make([]string, len(cols))
		for i, c := range cols {
			q[i] = sqlval.QuoteIdent(c.String())
		}
		return strings.Join(q, ", ")
	}
	ref := sqlval.QuoteIdent(fk.ReferencedTable.Name.String())
	if db := fk.ReferencedTable.DbQualifier.String(); db != "" {
		ref = sqlval.QuoteIdent(db) + "." + ref
	}
	text := fmt.Sprintf("FOREIGN KEY (%s) REFERENCES %s (%s)", quote(fk.Source), ref, quote(fk.ReferencedColumns))
	if fk.OnDelete != ast.DefaultAction {
		text += " ON DELETE " + strings.ToUpper(ast.String(fk.OnDelete))
	}
	if fk.OnUpdate != ast.DefaultAction {
		text += " ON UPDATE " + strings.ToUpper(ast.String(fk.OnUpdate))
	}
	return text
}

// WarnForeignKeys warns, for each foreign key a new table records, that it
// is not enforced.
func WarnForeignKeys(ctx *sql.Context, table string, props iceberg.Properties) {
	var names []string
	for k := range props {
		if name, ok := strings.CutPrefix(k, ForeignKeyProperty); ok {
			names = append(names, name)
		}
	}
	// go-mysql-server lists the latest warning first.
	slices.Sort(names)
	slices.Reverse(names)
	for _, name := range names {
		ctx.Warn(mysql.ERNotSupportedYet, "foreign key %s of %s is recorded but not enforced: Iceberg tables have no constraints across tables", name, table)
	}
}
