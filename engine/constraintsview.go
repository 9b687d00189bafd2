package engine

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/information_schema"
)

// information_schema.TABLE_CONSTRAINTS says ENFORCED = YES for every
// PRIMARY KEY and UNIQUE constraint (go-mysql-server writes the word). An
// Iceberg table's keys are recorded, not enforced (keys.go, indexes.go):
// Iceberg has no constraints, and other engines write the same tables. So
// icesql answers NO for them, YES for a temporary table's PRIMARY KEY,
// which it enforces (temptables.go).

// tableConstraintsEnforcement makes the engine's TABLE_CONSTRAINTS say
// which constraints icesql enforces.
func tableConstraintsEnforcement(ctx *sql.Context, infoSchema sql.Database) error {
	t, ok, err := infoSchema.GetTableInsensitive(ctx, information_schema.TableConstraintsTableName)
	if err != nil || !ok {
		return fmt.Errorf("information_schema.%s: %v", information_schema.TableConstraintsTableName, err)
	}
	ist, ok := t.(*information_schema.InformationSchemaTable)
	if !ok {
		return fmt.Errorf("information_schema.%s is a %T", information_schema.TableConstraintsTableName, t)
	}
	read := ist.Reader
	ist.Reader = func(ctx *sql.Context, c sql.Catalog) (sql.RowIter, error) {
		iter, err := read(ctx, c)
		if err != nil {
			return nil, err
		}
		rows, err := sql.RowIterToRows(ctx, iter)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			// constraint_catalog, constraint_schema, constraint_name,
			// table_schema, table_name, constraint_type, enforced
			if len(r) != 7 || !unenforced(ctx, c, r[3], r[4]) {
				continue
			}
			r[6] = "NO"
		}
		return sql.RowsToRowIter(rows...), nil
	}
	return nil
}

// unenforced says the constraints of table schema.name are recorded only:
// it is an Iceberg table.
func unenforced(ctx *sql.Context, c sql.Catalog, schema, name any) bool {
	s, ok1 := schema.(string)
	n, ok2 := name.(string)
	if !ok1 || !ok2 {
		return false
	}
	db, err := c.Database(ctx, s)
	if err != nil {
		return false
	}
	t, _, err := c.DatabaseTable(ctx, db, n)
	if err != nil {
		return false
	}
	_, iceberg := t.(*Table)
	return iceberg
}
