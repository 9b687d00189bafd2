package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/ddl"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/engine/internal/sqlval"
	"github.com/icesql/icesql/planner"
	"github.com/icesql/icesql/storage"
)

// CREATE OR REPLACE TABLE and REPLACE TABLE, with or without AS SELECT,
// follow Spark with Iceberg: the table keeps its identity, snapshots and
// history, and gets a new current schema, partition spec, sort order and
// properties (merged over the old ones, as Iceberg's Java library does),
// plus, for AS SELECT, one `append` snapshot without parent holding the new
// rows. All of it is one metadata commit; a statement that fails changes
// nothing. REPLACE TABLE of a missing table is error 1146; CREATE OR
// REPLACE creates it. Old snapshots stay readable by time travel, with
// their own columns.
//
// Differences from Spark: the new columns get fresh field ids (Iceberg's
// Java library reuses the ids of columns with the same name; both are
// valid, since each snapshot reads with its own schema), and the format
// version cannot change.

// replacement is a REPLACE TABLE ... AS SELECT of the running statement,
// whose data is being written.
type replacement struct {
	ident table.Identifier
	r     storage.Replacement
	tbl   *table.Table // the table as replaced, to write the data with
}

// replaceTable runs the replacement part of CREATE TABLE for a statement the
// parser marked as a replacement. done is false when there is nothing to
// replace and CREATE TABLE should create the table as usual.
func (d *Database) replaceTable(ctx *sql.Context, name string, schema sql.PrimaryKeySchema, opts planner.TableOptions) (done bool, err error) {
	real, ok, err := d.resolveTable(ctx, name)
	if err != nil {
		return true, err
	}
	if !ok {
		if opts.Replace == planner.ReplaceOnly {
			return true, sql.ErrTableNotFound.New(name)
		}
		return false, nil
	}
	if opts.Location != "" {
		return true, mysqlerr.NotSupported("REPLACE TABLE %s: LOCATION cannot change; the table keeps its location", real)
	}
	ident := d.ident(real)
	tbl, err := d.e.catalog.LoadTable(ctx, ident)
	if err != nil {
		return true, mysqlerr.CatalogError(err, real)
	}
	r, err := replacementOf(tbl, schema, opts, real)
	if err != nil {
		return true, err
	}
	s := sessionOf(ctx)
	s.dropStage(ident) // rows the transaction wrote under the old definition
	if s.createComment(ctx, name) == "" {
		// No AS SELECT (the CTAS rule remembers the options of those only):
		// the replacement is the whole statement.
		_, err := storage.CommitReplacement(ctx, d.e.catalog, ident, r, nil, snapshotSummary())
		s.unpin(ident)
		return true, replaceError(err, real)
	}
	replaced, err := r.Apply(tbl)
	if err != nil {
		return true, err
	}
	s.beginReplacement(ctx, &replacement{ident: ident, r: r, tbl: replaced})
	return true, nil
}

// replacementOf builds the metadata changes that replace tbl's definition
// with a CREATE TABLE's.
func replacementOf(tbl *table.Table, schema sql.PrimaryKeySchema, opts planner.TableOptions, name string) (storage.Replacement, error) {
	sc, err := icebergSchema(schema)
	if err != nil {
		return storage.Replacement{}, err
	}
	last := tbl.Metadata().LastColumnID()
	next := last
	fresh, err := iceberg.AssignFreshSchemaIDs(sc, func() int { next++; return next })
	if err != nil {
		return storage.Replacement{}, fmt.Errorf("replace %s: number the new columns: %w", name, err)
	}
	props, stale, err := replacedProperties(tbl, fresh, schema, opts)
	if err != nil {
		return storage.Replacement{}, err
	}
	spec := iceberg.UnpartitionedSpec
	if len(opts.PartitionBy) > 0 {
		if spec, err = ddl.PartitionSpec(fresh, opts.PartitionBy, name); err != nil {
			return storage.Replacement{}, err
		}
	}
	order := table.UnsortedSortOrder
	if len(opts.WriteOrderedBy) > 0 {
		if order, err = ddl.ParsedSortOrder(fresh, opts.WriteOrderedBy, name); err != nil {
			return storage.Replacement{}, err
		}
	}
	return storage.Replacement{Schema: fresh, Spec: spec, Order: order, SetProperties: props, RemoveProperties: stale, LastColumnID: last}, nil
}

// replacedProperties returns the properties to set and to remove: the
// statement's over the table's, as Iceberg's Java library merges them,
// except icesql's own column types, which belong to the old columns.
func replacedProperties(tbl *table.Table, fresh *iceberg.Schema, schema sql.PrimaryKeySchema, opts planner.TableOptions) (iceberg.Properties, []string, error) {
	props := sqlval.DeclaredTypeProperties(fresh, schema.Schema)
	maps.Copy(props, opts.Properties)
	if opts.Comment != "" {
		props["comment"] = opts.Comment
	}
	merged := maps.Clone(tbl.Properties())
	maps.Copy(merged, props)
	ddl.DefaultTableProperties(merged)
	if err := validateProperties(merged); err != nil {
		return nil, nil, err
	}
	if v, ok := props["format-version"]; ok {
		if n, _ := strconv.Atoi(v); n != tbl.Metadata().Version() {
			return nil, nil, mysqlerr.NotSupported("REPLACE TABLE %s: format-version %s differs from the table's %d, and a replacement keeps the format version", tbl.Identifier()[len(tbl.Identifier())-1], v, tbl.Metadata().Version())
		}
		delete(props, "format-version")
	}
	for k, v := range merged {
		if _, old := tbl.Properties()[k]; !old || tbl.Properties()[k] != v {
			if _, set := props[k]; !set && k != "format-version" {
				props[k] = v // a default the merge added
			}
		}
	}
	var stale []string
	for k := range tbl.Properties() {
		if _, set := props[k]; !set && strings.HasPrefix(k, "icesql.column.") {
			stale = append(stale, k)
		}
	}
	slices.Sort(stale)
	return props, stale, nil
}

func replaceError(err error, name string) error {
	if errors.Is(err, storage.ErrConflict) {
		return mysqlerr.Conflict("REPLACE TABLE %s conflicted with a concurrent change; retry the statement: %v", name, err)
	}
	return mysqlerr.CatalogError(err, name)
}

// beginReplacement makes the replaced table the one the rest of the
// statement (the AS SELECT's insert) reads and writes.
func (s *Session) beginReplacement(ctx *sql.Context, rep *replacement) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	s.stmt.pins[key(rep.ident)] = rep.tbl
	s.stmt.replacing[key(rep.ident)] = rep
}

// replacementOfStatement returns the replacement the running statement
// started on the table, if any.
func (s *Session) replacementOfStatement(ctx *sql.Context, ident table.Identifier) *replacement {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	return s.stmt.replacing[key(ident)]
}

// endReplacement forgets a replacement whose statement failed.
func (s *Session) endReplacement(ident table.Identifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stmt.replacing, key(ident))
	delete(s.stmt.pins, key(ident))
}

// dropStage forgets what the transaction staged for a table.
func (s *Session) dropStage(ident table.Identifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.staged, key(ident))
}

// stageReplacement stages a replacement and its data files; the commit of
// the statement (REPLACE TABLE is DDL, which commits) publishes both.
func (s *Session) stageReplacement(rep *replacement, files []iceberg.DataFile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.staged[key(rep.ident)] = &stage{ident: rep.ident, files: files, change: &fileChange{replace: rep}}
}

// replacingTable is the target of REPLACE TABLE ... AS SELECT's insert.
type replacingTable struct {
	*Table
	rep *replacement
}

var _ sql.InsertableTable = (*replacingTable)(nil)

// statementTable returns t as the running statement must see it: the
// target of a replacement it started, or t itself.
func (d *Database) statementTable(ctx *sql.Context, t *Table) sql.Table {
	if rep := sessionOf(ctx).replacementOfStatement(ctx, d.ident(t.name)); rep != nil {
		return &replacingTable{Table: t, rep: rep}
	}
	return t
}

// Inserter implements sql.InsertableTable.
func (rt *replacingTable) Inserter(*sql.Context) sql.RowInserter {
	return &replaceInserter{inserter: inserter{t: rt.Table}, rep: rt.rep}
}

// replaceInserter writes the rows of REPLACE TABLE ... AS SELECT and stages
// them with the replacement.
type replaceInserter struct {
	inserter
	rep *replacement
}

// StatementComplete implements sql.EditOpenerCloser.
func (w *replaceInserter) StatementComplete(ctx *sql.Context) error {
	if w.err != nil {
		return w.err
	}
	w.flush(ctx)
	if w.err != nil {
		return w.err
	}
	var files []iceberg.DataFile
	if w.writer != nil {
		written, err := w.writer.finish()
		w.writer = nil
		if err != nil {
			return fmt.Errorf("write data files of %s: %w", w.t, err)
		}
		files = written
	}
	s := sessionOf(ctx)
	s.endReplacement(w.rep.ident)
	s.stageReplacement(w.rep, files)
	return nil
}

// DiscardChanges implements sql.EditOpenerCloser: the replacement is
// dropped, and the table stays as it was.
func (w *replaceInserter) DiscardChanges(ctx *sql.Context, _ error) error {
	w.stop(ctx)
	sessionOf(ctx).endReplacement(w.rep.ident)
	return nil
}
