package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

// Iceberg tables have no secondary indexes, and nothing in the format could
// keep one current when other engines write the table. icesql still accepts
// CREATE [UNIQUE] INDEX, DROP INDEX, ALTER TABLE ... ADD/DROP/RENAME INDEX
// and KEY / INDEX / UNIQUE clauses of CREATE TABLE, because MySQL schemas and
// tools issue them everywhere. An index is recorded, never built:
//
//   - its definition is kept as the table property icesql.index.<name>, so
//     DROP INDEX and duplicate names behave as in MySQL and SHOW CREATE TABLE
//     shows it (as that property, which a CREATE TABLE reading it back keeps);
//   - queries scan the table as they would without it;
//   - UNIQUE is not enforced: duplicate values are accepted;
//   - each such statement gives warning 1235 saying so.
//
// The README's "Indexes and keys" section tells users the same.

const indexPropertyPrefix = "icesql.index."

// recordedIndex is the value of an icesql.index.<name> property.
type recordedIndex struct {
	Name    string   `json:"name"`
	Unique  bool     `json:"unique,omitempty"`
	Columns []string `json:"columns"`
}

func indexProperty(name string) string { return indexPropertyPrefix + strings.ToLower(name) }

// recordedIndexes returns the indexes recorded in a table's properties.
func recordedIndexes(props iceberg.Properties) map[string]recordedIndex {
	out := map[string]recordedIndex{}
	for k, v := range props {
		if !strings.HasPrefix(k, indexPropertyPrefix) {
			continue
		}
		var ix recordedIndex
		if err := json.Unmarshal([]byte(v), &ix); err == nil && ix.Name != "" {
			out[strings.TrimPrefix(k, indexPropertyPrefix)] = ix
		}
	}
	return out
}

var _ sql.IndexAlterableTable = (*Table)(nil)

// CreateIndex implements sql.IndexAlterableTable: it records the index.
func (t *Table) CreateIndex(ctx *sql.Context, def sql.IndexDef) error {
	switch {
	case def.IsFullText(), def.IsSpatial(), def.Constraint == sql.IndexConstraint_Vector:
		return mysqlerr.NotSupported("index %s on %s: Iceberg tables have no indexes, and icesql records only plain and UNIQUE ones, not FULLTEXT, SPATIAL or VECTOR", def.Name, t.name)
	case def.Predicate != nil:
		return mysqlerr.NotSupported("partial index %s on %s: Iceberg tables have no indexes", def.Name, t.name)
	}
	ix := recordedIndex{Name: def.Name, Unique: def.IsUnique()}
	for _, c := range def.Columns {
		if c.Expression != nil {
			return mysqlerr.NotSupported("functional index %s on %s: Iceberg tables have no indexes, and icesql records only indexes on columns", def.Name, t.name)
		}
		ix.Columns = append(ix.Columns, c.Name)
	}
	cur, err := t.db.e.catalog.LoadTable(ctx, t.db.ident(t.name))
	if err != nil {
		return mysqlerr.CatalogError(err, t.name)
	}
	if _, taken := recordedIndexes(cur.Properties())[strings.ToLower(def.Name)]; taken {
		return duplicateKeyName(def.Name)
	}
	v, err := json.Marshal(ix)
	if err != nil {
		return fmt.Errorf("record index %s on %s: %w", def.Name, t.name, err)
	}
	if err := t.setProperties(ctx, iceberg.Properties{indexProperty(def.Name): string(v)}, nil); err != nil {
		return err
	}
	kind := "index"
	if ix.Unique {
		kind = "unique index"
	}
	msg := fmt.Sprintf("%s %s on %s is recorded but not built: Iceberg tables have no indexes, so queries scan the table", kind, def.Name, t.name)
	if ix.Unique {
		msg += ", and uniqueness is not enforced"
	}
	ctx.Warn(mysql.ERNotSupportedYet, "%s", msg)
	return nil
}

// duplicateKeyName is MySQL's 1061 (ER_DUP_KEYNAME); go-mysql-server's
// ErrDuplicateKey carries no code.
func duplicateKeyName(name string) error {
	return mysqlerr.New(mysql.ERDupKeyName, "Duplicate key name '%s'", name)
}

// DropIndex implements sql.IndexAlterableTable.
func (t *Table) DropIndex(ctx *sql.Context, name string) error {
	cur, err := t.db.e.catalog.LoadTable(ctx, t.db.ident(t.name))
	if err != nil {
		return mysqlerr.CatalogError(err, t.name)
	}
	if _, ok := recordedIndexes(cur.Properties())[strings.ToLower(name)]; !ok {
		return sql.ErrCantDropFieldOrKey.New(name)
	}
	return t.setProperties(ctx, nil, []string{indexProperty(name)})
}

// RenameIndex implements sql.IndexAlterableTable.
func (t *Table) RenameIndex(ctx *sql.Context, from, to string) error {
	cur, err := t.db.e.catalog.LoadTable(ctx, t.db.ident(t.name))
	if err != nil {
		return mysqlerr.CatalogError(err, t.name)
	}
	indexes := recordedIndexes(cur.Properties())
	ix, ok := indexes[strings.ToLower(from)]
	if !ok {
		return sql.ErrCantDropFieldOrKey.New(from)
	}
	if _, taken := indexes[strings.ToLower(to)]; taken && !strings.EqualFold(from, to) {
		return duplicateKeyName(to)
	}
	ix.Name = to
	v, err := json.Marshal(ix)
	if err != nil {
		return fmt.Errorf("rename index %s on %s: %w", from, t.name, err)
	}
	var remove []string
	if !strings.EqualFold(from, to) {
		remove = []string{indexProperty(from)}
	}
	return t.setProperties(ctx, iceberg.Properties{indexProperty(to): string(v)}, remove)
}

// setProperties commits a metadata-only change of the table's properties
// and makes later statements of the session see it.
func (t *Table) setProperties(ctx *sql.Context, set iceberg.Properties, remove []string) error {
	ident := t.db.ident(t.name)
	cur, err := t.db.e.catalog.LoadTable(ctx, ident)
	if err != nil {
		return mysqlerr.CatalogError(err, t.name)
	}
	tx := cur.NewTransaction()
	if len(set) > 0 {
		if err := tx.SetProperties(set); err != nil {
			return fmt.Errorf("set properties of %s: %w", t.name, err)
		}
	}
	if len(remove) > 0 {
		if err := tx.RemoveProperties(remove); err != nil {
			return fmt.Errorf("remove properties of %s: %w", t.name, err)
		}
	}
	updated, err := tx.Commit(ctx)
	if errors.Is(err, table.ErrCommitFailed) {
		return mysqlerr.Conflict("change properties of %s: another writer changed the table: %v", t.name, err)
	}
	if err != nil {
		return fmt.Errorf("change properties of %s: %w", t.name, err)
	}
	t.tbl = updated
	sessionOf(ctx).unpin(ident)
	return nil
}

// GetIndexes implements sql.IndexAddressable so that SHOW INDEX lists the
// recorded indexes and go-mysql-server's index DDL finds them. They are
// presented so that the optimizer can never rely on them: no range or
// ordering is supported (no index scan, lookup join or sort elimination),
// and none is unique (no functional dependency is derived from a uniqueness
// nobody enforces; SHOW INDEX reports Non_unique = 1 for the same reason).
//
// Even so, go-mysql-server's join planner turns any index matching a join
// condition into a lookup join and fails when the index refuses the lookup.
// So the indexes are listed only to statements that manage or show them,
// never to one that reads rows; the primary key only to statements that
// show it (keys.go).
func (t *Table) GetIndexes(ctx *sql.Context) ([]sql.Index, error) {
	shown := keysShown(ctx)
	if !shown && !managesIndexes(ctx.Query()) {
		return nil, nil
	}
	recorded := recordedIndexes(t.tbl.Properties())
	out := make([]sql.Index, 0, len(recorded)+1)
	for _, ix := range recorded {
		out = append(out, &declaredIndex{t: t, ix: ix})
	}
	slices.SortFunc(out, func(a, b sql.Index) int { return strings.Compare(a.ID(), b.ID()) })
	if pk := t.primaryIndex(); pk != nil && shown {
		out = append([]sql.Index{pk}, out...)
	}
	return out, nil
}

// IndexedAccess and PreciseMatch, the rest of sql.IndexAddressable, serve
// the row-filter pseudo-index of lookup.go.

var _ sql.IndexAddressable = (*Table)(nil)

// declaredIndex is a recorded index as go-mysql-server sees it.
type declaredIndex struct {
	t  *Table
	ix recordedIndex
}

func (d *declaredIndex) ID() string              { return d.ix.Name }
func (d *declaredIndex) Database() string        { return d.t.db.name }
func (d *declaredIndex) Table() string           { return d.t.name }
func (d *declaredIndex) IsUnique() bool          { return false }
func (d *declaredIndex) IsSpatial() bool         { return false }
func (d *declaredIndex) IsFullText() bool        { return false }
func (d *declaredIndex) IsVector() bool          { return false }
func (d *declaredIndex) IsGenerated() bool       { return false }
func (d *declaredIndex) IndexType() string       { return "NONE" }
func (d *declaredIndex) PrefixLengths() []uint16 { return nil }

func (d *declaredIndex) Comment() string {
	if d.ix.Unique {
		return "recorded, not built; UNIQUE not enforced"
	}
	return "recorded, not built"
}

func (d *declaredIndex) Expressions() []string {
	out := make([]string, len(d.ix.Columns))
	for i, c := range d.ix.Columns {
		out[i] = d.t.name + "." + c
	}
	return out
}

func (d *declaredIndex) ColumnExpressionTypes(ctx *sql.Context) []sql.ColumnExpressionType {
	sch := d.t.Schema(ctx)
	out := make([]sql.ColumnExpressionType, 0, len(d.ix.Columns))
	for _, c := range d.ix.Columns {
		if i := sch.IndexOfColName(c); i >= 0 {
			out = append(out, sql.ColumnExpressionType{Type: sch[i].Type, Expression: d.t.name + "." + c})
		}
	}
	return out
}

func (d *declaredIndex) CanSupport(*sql.Context, ...sql.Range) bool { return false }
func (d *declaredIndex) CanSupportOrderBy(sql.Expression) bool      { return false }
func (d *declaredIndex) CoversColumns([]string) bool                { return false }

// managesIndexes reports whether a statement is DDL or SHOW/DESCRIBE without
// a query inside (CREATE TABLE ... AS SELECT and CREATE VIEW read rows).
func managesIndexes(query string) bool {
	words := strings.Fields(strings.ToUpper(query))
	if len(words) == 0 {
		return false
	}
	switch words[0] {
	case "CREATE", "ALTER", "DROP", "SHOW", "DESCRIBE", "DESC":
		return !slices.ContainsFunc(words, func(w string) bool { return strings.Contains(w, "SELECT") })
	}
	return false
}
