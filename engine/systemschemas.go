package engine

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
)

// MySQL's performance_schema and sys schemas, as far as BI tools and admin
// UIs read them at connect time: performance_schema.session_variables and
// global_variables (the rows of SHOW SESSION|GLOBAL VARIABLES) and
// sys.version. go-mysql-server has neither schema. A catalog namespace of
// the same name takes precedence over them.

// systemSchemas are the schemas icesql adds, by lower-cased name.
var systemSchemas = map[string][]systemTable{
	"performance_schema": {
		{name: "global_variables", schema: variablesSchema, rows: variableRows("SHOW GLOBAL VARIABLES")},
		{name: "session_variables", schema: variablesSchema, rows: variableRows("SHOW SESSION VARIABLES")},
	},
	"sys": {
		{name: "version", schema: sql.Schema{
			{Name: "sys_version", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 10), Source: "version"},
			{Name: "mysql_version", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 64), Source: "version"},
		}, rows: func(*Engine, *sql.Context) ([]sql.Row, error) {
			return []sql.Row{{"2.1.2", "8.0.33-icesql-" + Version}}, nil
		}},
	},
}

// systemSchemaNames lists systemSchemas' names in order.
func systemSchemaNames() []string {
	names := make([]string, 0, len(systemSchemas))
	for n := range systemSchemas {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

var variablesSchema = sql.Schema{
	{Name: "VARIABLE_NAME", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 64), Source: "variables"},
	{Name: "VARIABLE_VALUE", Type: types.MustCreateStringWithDefaults(sqltypes.VarChar, 1024), Nullable: true, Source: "variables"},
}

// variableRows reads a SHOW ... VARIABLES statement's rows, so the table
// shows every value exactly as SHOW VARIABLES does.
func variableRows(show string) func(*Engine, *sql.Context) ([]sql.Row, error) {
	return func(e *Engine, ctx *sql.Context) ([]sql.Row, error) {
		rows, err := e.runQuery(ctx, show) // merge.go
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			if len(r) == 2 && r[1] != nil {
				r[1] = fmt.Sprint(r[1])
			}
		}
		return rows, nil
	}
}

// systemDatabase is one of systemSchemas.
type systemDatabase struct {
	e      *Engine
	name   string
	tables []systemTable
}

var _ sql.Database = (*systemDatabase)(nil)

// systemDatabaseNamed is the system schema of that name (any case), if any.
func (e *Engine) systemDatabaseNamed(name string) (*systemDatabase, bool) {
	lower := strings.ToLower(name)
	tables, ok := systemSchemas[lower]
	if !ok {
		return nil, false
	}
	return &systemDatabase{e: e, name: lower, tables: tables}, true
}

func (d *systemDatabase) Name() string { return d.name }

func (d *systemDatabase) GetTableNames(*sql.Context) ([]string, error) {
	names := make([]string, len(d.tables))
	for i, t := range d.tables {
		names[i] = t.name
	}
	return names, nil
}

func (d *systemDatabase) GetTableInsensitive(_ *sql.Context, name string) (sql.Table, bool, error) {
	for _, t := range d.tables {
		if strings.EqualFold(t.name, name) {
			t.e = d.e
			return &t, true, nil
		}
	}
	return nil, false, nil
}

// systemTable is a read-only table whose rows are computed when read.
type systemTable struct {
	e      *Engine
	name   string
	schema sql.Schema
	rows   func(*Engine, *sql.Context) ([]sql.Row, error)
}

var _ sql.Table = (*systemTable)(nil)

func (t *systemTable) Name() string                   { return t.name }
func (t *systemTable) String() string                 { return t.name }
func (t *systemTable) Schema(*sql.Context) sql.Schema { return t.schema }
func (t *systemTable) Collation() sql.CollationID     { return sql.Collation_Default }
func (t *systemTable) Partitions(*sql.Context) (sql.PartitionIter, error) {
	return &onePartition{}, nil
}

func (t *systemTable) PartitionRows(ctx *sql.Context, _ sql.Partition) (sql.RowIter, error) {
	rows, err := t.rows(t.e, ctx)
	if err != nil {
		return nil, err
	}
	return sql.RowsToRowIter(rows...), nil
}

// onePartition iterates the single partition of a systemTable.
type onePartition struct{ done bool }

func (p *onePartition) Next(*sql.Context) (sql.Partition, error) {
	if p.done {
		return nil, io.EOF
	}
	p.done = true
	return systemPartition{}, nil
}

func (p *onePartition) Close(*sql.Context) error { return nil }

type systemPartition struct{}

func (systemPartition) Key() []byte { return []byte("system") }
