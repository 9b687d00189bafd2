package engine

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
)

// Iceberg column names are case sensitive and MySQL's are not, so a table
// may hold columns that differ only in case (PyIceberg's user_id and
// uSeR_Id), which go-mysql-server would resolve to one column. Such a column
// is shown under its name with its field id appended (uSeR_Id_2), so that
// every column stays reachable; sqlColumns gives the SQL names and
// resolveColumns maps them back.

// sqlColumns renames the later of columns whose names are equal ignoring case.
func sqlColumns(schema sql.Schema, sc *iceberg.Schema) sql.Schema {
	seen := map[string]bool{}
	fields := sc.Fields()
	var out sql.Schema
	for i, col := range schema {
		key := strings.ToLower(col.Name)
		if seen[key] && i < len(fields) {
			if out == nil {
				out = append(sql.Schema{}, schema...)
			}
			c := *col
			c.Name = fmt.Sprintf("%s_%d", col.Name, fields[i].ID)
			out[i] = &c
		}
		seen[key] = true
	}
	if out == nil {
		return schema
	}
	return out
}

// icebergNames lists a schema's column names in order.
func icebergNames(sc *iceberg.Schema) []string {
	fields := sc.Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return names
}

// resolveColumns maps the column names go-mysql-server projects (which it
// may lower-case) to the Iceberg names that Arrow batches and iceberg-go's
// column selection match exactly.
func (t *Table) ResolveColumns(cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = c
		if j := t.schema.IndexOfColName(c); j >= 0 && j < len(t.names) {
			out[i] = t.names[j]
		}
	}
	return out
}
