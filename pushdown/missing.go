package pushdown

import (
	"context"
	"fmt"
	"iter"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"
	"github.com/apache/iceberg-go"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

// A column a data file lacks (added after the file was written, or a file
// another writer wrote without it) reads as NULL, or as the field's
// initial-default on format v3. iceberg-go's reader does so when the file
// holds at least one of the projected columns, and fails with "no leaf
// column readers matched col indices" when it holds none: after ALTER TABLE
// ... ADD COLUMN tier, "SELECT COUNT(tier)" reads only tier, which no old
// file has. Such a task is read with one more column, one the file does
// hold (an anchor), which is dropped again from its batches; iceberg-go then
// applies deletes and defaults as for any file. A file that holds no column
// of the scan's schema at all (every column it has was dropped since) is
// answered without reading it when it has no deletes: its rows are its row
// count, each column its default; with deletes, it is read through a view
// of the table's metadata whose schema has one of its dropped columns back
// under a name no user can give, as the anchor. Filters need no care: the
// caller evaluates its whole WHERE clause above the scan.

// Read is a scan for iceberg-go's reader and what reading files that lack
// every projected column needs.
type Read struct {
	Scan *table.Scan
	// FS reads data file footers; nil skips the search for files that
	// lack every projected column.
	FS icebergio.IO
	// Caches keep the footers FS reads; nil keeps none.
	Caches *Caches
	// Widen is the same scan with the extra columns selected too; with
	// "*" its projection is the whole schema it resolves names in.
	Widen func(extra []string) (*table.Scan, error)
	// Table is the table the scan reads, whose older schemas name the
	// columns dropped since a file was written.
	Table *table.Table
	// Rows, when set, counts the rows the read hands up, one add per
	// batch (Planned.Rows).
	Rows *atomic.Int64
	// Whole, when set, is the same scan with every column of its schema
	// and no row filter: small files are then read through the
	// decoded-file cache of Caches (decodedread.go).
	Whole func() (*table.Scan, error)
}

// droppedAnchor is the name a dropped column is read under; the NUL bytes
// keep it apart from any column name.
const droppedAnchor = "\x00dropped\x00"

// TableRead reads every column of tbl's current schema.
func TableRead(ctx context.Context, tbl *table.Table) Read {
	fs, err := tbl.FS(ctx)
	if err != nil {
		fs = nil // iceberg-go's reader reports it
	}
	scan := func([]string) (*table.Scan, error) { return tbl.Scan(), nil } // every column is selected already
	return Read{Scan: tbl.Scan(), FS: fs, Widen: scan, Table: tbl}
}

// lackingTask is a task whose file holds none of the projected columns:
// read with the column anchor selected too, or with the dropped column,
// or (neither) answered from its row count.
type lackingTask struct {
	task    table.FileScanTask
	anchor  string
	dropped *iceberg.NestedField
	rows    int64 // rows of the task's row groups, when read from neither
}

// classify separates the tasks iceberg-go reads as they are from those
// whose files lack every projected column.
func (r Read) classify(tasks []table.FileScanTask) (plain []table.FileScanTask, lacking []lackingTask, err error) {
	if r.FS == nil || r.Widen == nil {
		return tasks, nil, nil
	}
	proj, err := r.Scan.Projection()
	if err != nil {
		return nil, nil, err
	}
	want, err := iceberg.IndexByID(proj)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range proj.Fields() {
		want[f.ID] = f // lineage columns are not indexed by IndexByID
	}
	var whole *iceberg.Schema // the scan's whole schema, once a file needs an anchor
	trusted, mapping := want, iceberg.NameMapping(nil)
	if r.Table != nil {
		trusted = withoutIdentitySources(want, r.Table.Metadata())
		mapping = r.Table.Metadata().NameMapping()
	}
	for _, t := range tasks {
		if t.File.FileFormat() != iceberg.ParquetFile || statsHoldAny(t.File, trusted) {
			plain = append(plain, t)
			continue
		}
		meta, err := footerOf(r.Caches.footerCache(), r.FS, t.File.FilePath(), t.File.FileSizeBytes())
		if err != nil {
			return nil, nil, err
		}
		ids := fileFieldIDs(meta, mapping)
		if len(ids) == 0 || holdsAny(ids, want) {
			// Neither field ids nor a name mapping say what the file
			// holds: iceberg-go's reader reports what it cannot read.
			plain = append(plain, t)
			continue
		}
		if whole == nil {
			if whole, err = r.schema(); err != nil {
				return nil, nil, err
			}
		}
		l := lackingTask{task: t, anchor: anchorColumn(whole, ids)}
		switch {
		case l.anchor != "":
		case hasDeletes(t):
			if r.Table != nil {
				l.dropped = droppedColumn(r.Table.Metadata(), ids)
			}
			if l.dropped == nil {
				return nil, nil, fmt.Errorf("data file %s holds none of the columns of the table's schemas and has delete files; icesql cannot tell which of its rows are deleted", t.File.FilePath())
			}
		default:
			for _, rg := range taskRowGroups(meta, t) {
				l.rows += meta.RowGroup(rg).NumRows()
			}
		}
		lacking = append(lacking, l)
	}
	return plain, lacking, nil
}

// schema is the whole schema r's scan resolves column names in.
func (r Read) schema() (*iceberg.Schema, error) {
	all, err := r.Widen([]string{"*"})
	if err != nil {
		return nil, err
	}
	return all.Projection()
}

func hasDeletes(t table.FileScanTask) bool {
	return len(t.DeleteFiles) > 0 || len(t.EqualityDeleteFiles) > 0 || len(t.DeletionVectorFiles) > 0
}

// statsHoldAny says the file's column statistics name one of the wanted
// field ids: the file then holds that column (Iceberg writers record
// statistics of the columns they write), and its footer need not be read.
func statsHoldAny(f iceberg.DataFile, want map[int]iceberg.NestedField) bool {
	for _, m := range []map[int]int64{f.ValueCounts(), f.ColumnSizes(), f.NullValueCounts()} {
		for id := range m {
			if _, ok := want[id]; ok {
				return true
			}
		}
	}
	return false
}

// withoutIdentitySources is want without the columns some partition spec
// partitions by identity: Hive-style writers (Impala, DuckDB's fixtures)
// record statistics of such a column in files that do not store it.
func withoutIdentitySources(want map[int]iceberg.NestedField, meta table.Metadata) map[int]iceberg.NestedField {
	out := maps.Clone(want)
	for _, spec := range meta.PartitionSpecs() {
		for _, f := range spec.Fields() {
			if _, ok := f.Transform.(iceberg.IdentityTransform); ok {
				for _, id := range f.SourceIDs {
					delete(out, id)
				}
			}
		}
	}
	return out
}

func holdsAny(ids map[int]bool, want map[int]iceberg.NestedField) bool {
	for id := range want {
		if ids[id] {
			return true
		}
	}
	return false
}

// fileFieldIDs are the field ids of every column of a Parquet file, the
// groups of nested ones included; a column written without one (Hive,
// Impala) has the id the table's name mapping gives its name, as
// iceberg-go's reader resolves it.
func fileFieldIDs(meta *metadata.FileMetaData, mapping iceberg.NameMapping) map[int]bool {
	ids := map[int]bool{}
	walkFileFields(meta, mapping, func(_ int, _ pqschema.Node, id int) { ids[id] = true })
	return ids
}

// walkFileFields calls fn with each node on the path of each leaf column of
// a Parquet file (the leaf's index among the file's columns), with the field
// id it has or the name mapping gives it; nodes with neither are skipped.
func walkFileFields(meta *metadata.FileMetaData, mapping iceberg.NameMapping, fn func(col int, node pqschema.Node, id int)) {
	for i := range meta.Schema.NumColumns() {
		col := meta.Schema.Column(i)
		level := []iceberg.MappedField(mapping)
		path := col.ColumnPath()
		var nodes []pqschema.Node
		for n := col.SchemaNode(); n != nil && n.Parent() != nil; n = n.Parent() {
			nodes = append([]pqschema.Node{n}, nodes...)
		}
		for depth, n := range nodes {
			if id := n.FieldID(); id >= 0 {
				fn(i, n, int(id))
				level = nil
				continue
			}
			var m *iceberg.MappedField
			for j := range level {
				if depth < len(path) && slices.Contains(level[j].Names, path[depth]) {
					m = &level[j]
					break
				}
			}
			if m == nil {
				level = nil
				continue
			}
			if m.ID() >= 0 {
				fn(i, n, m.ID())
			}
			level = m.Fields
		}
	}
}

// anchorColumn is a top-level column of schema that the file holds, a
// primitive one when there is one (the cheapest to decode); "" when the
// file holds none.
func anchorColumn(schema *iceberg.Schema, ids map[int]bool) string {
	nested := ""
	for _, f := range schema.Fields() {
		if !ids[f.ID] {
			continue
		}
		// A uuid column may be stored without its annotation, which
		// iceberg-go cannot read (plainuuid.go).
		if _, ok := f.Type.(iceberg.PrimitiveType); ok && !f.Type.Equals(iceberg.UUIDType{}) {
			return f.Name
		}
		if nested == "" {
			nested = f.Name
		}
	}
	return nested
}

// droppedColumn is a top-level column of one of the table's schemas that
// the file holds, primitive if one is; nil when the file holds none.
func droppedColumn(meta table.Metadata, ids map[int]bool) *iceberg.NestedField {
	var nested *iceberg.NestedField
	for _, sc := range meta.Schemas() {
		for _, f := range sc.Fields() {
			if !ids[f.ID] {
				continue
			}
			if _, ok := f.Type.(iceberg.PrimitiveType); ok {
				return &f
			}
			if nested == nil {
				nested = &f
			}
		}
	}
	return nested
}

// droppedScan is a scan of the columns of proj and of the dropped column,
// over a view of r's table whose schema is the scan's with the dropped
// column added back as droppedAnchor. The view is never committed.
func (r Read) droppedScan(proj *iceberg.Schema, dropped iceberg.NestedField) (*table.Scan, error) {
	whole, err := r.schema()
	if err != nil {
		return nil, err
	}
	dropped.Name, dropped.Required = droppedAnchor, false
	return r.viewScan(proj, append(slices.Clone(whole.Fields()), dropped), droppedAnchor)
}

// viewScan is a scan of the columns of proj, and of the extra ones, over a
// view of r's table whose current schema has the given fields. The view is
// never committed.
func (r Read) viewScan(proj *iceberg.Schema, fields []iceberg.NestedField, extra ...string) (*table.Scan, error) {
	meta := r.Table.Metadata()
	b, err := table.MetadataBuilderFromBase(meta, r.Table.MetadataLocation())
	if err != nil {
		return nil, err
	}
	schema := iceberg.NewSchema(0, fields...)
	if meta.Version() < 3 && hasDefaults(schema) {
		// Writers before v3 (PyIceberg) record defaults too, which the
		// builder refuses below v3; iceberg-go's reader fills them alike.
		if err := b.SetFormatVersion(3); err != nil {
			return nil, err
		}
	}
	if err := b.AddSchema(schema); err != nil {
		return nil, err
	}
	if err := b.SetCurrentSchemaID(-1); err != nil {
		return nil, err
	}
	names := slices.Clone(extra)
	for _, f := range proj.Fields() {
		names = append(names, f.Name)
		if (f.ID == iceberg.RowIDFieldID || f.ID == iceberg.LastUpdatedSequenceNumberFieldID) && meta.Version() < 3 {
			if err := b.SetFormatVersion(3); err != nil { // row lineage is v3's
				return nil, err
			}
		}
	}
	view, err := b.Build()
	if err != nil {
		return nil, err
	}
	fs := func(context.Context) (icebergio.IO, error) { return r.FS, nil }
	return table.New(r.Table.Identifier(), view, r.Table.MetadataLocation(), fs, nil).Scan(table.WithSelectedFields(names...)), nil
}

// hasDefaults says a field of schema, nested or not, has a default.
func hasDefaults(schema *iceberg.Schema) bool {
	byID, err := iceberg.IndexByID(schema)
	if err != nil {
		return false
	}
	for _, f := range byID {
		if f.InitialDefault != nil || f.WriteDefault != nil {
			return true
		}
	}
	return false
}

// openRead starts reading tasks as r says: the plain ones together, each
// anchor's tasks with the anchor selected, the rest from row counts.
func openRead(ctx context.Context, r Read, tasks []table.FileScanTask) (*arrow.Schema, iter.Seq2[arrow.RecordBatch, error], error) {
	plain, lacking, err := r.classify(tasks)
	if err != nil {
		return nil, nil, err
	}
	var plainUUID []table.FileScanTask
	if plain, plainUUID, err = r.splitPlainUUID(plain); err != nil {
		return nil, nil, err
	}
	var decoded *decodedRead
	if plain, decoded, err = r.decoded(plain); err != nil { // decodedread.go
		return nil, nil, err
	}
	schema, seq, err := r.Scan.ReadTasks(ctx, splitForCores(plain))
	if err != nil || decoded == nil && len(lacking) == 0 && len(plainUUID) == 0 {
		return schema, seq, err
	}
	var segs []iter.Seq2[arrow.RecordBatch, error]
	if decoded != nil {
		segs = append(segs, decoded.batches(ctx, schema))
	}
	if len(plain) > 0 {
		segs = append(segs, seq)
	}
	if len(plainUUID) > 0 {
		useq, err := r.readUUIDAsFixed(ctx, schema, plainUUID)
		if err != nil {
			return nil, nil, fmt.Errorf("read uuid columns stored without the UUID annotation: %w", err)
		}
		segs = append(segs, useq)
	}
	byAnchor := map[string][]table.FileScanTask{}
	var anchors []string
	var counted []lackingTask
	var proj *iceberg.Schema
	for _, l := range lacking {
		if l.dropped != nil {
			if proj == nil {
				if proj, err = r.Scan.Projection(); err != nil {
					return nil, nil, err
				}
			}
			wide, err := r.droppedScan(proj, *l.dropped)
			if err != nil {
				return nil, nil, fmt.Errorf("read data file %s with its dropped column %s: %w", l.task.File.FilePath(), l.dropped.Name, err)
			}
			_, wseq, err := wide.ReadTasks(ctx, []table.FileScanTask{l.task})
			if err != nil {
				return nil, nil, err
			}
			segs = append(segs, narrowed(schema, wseq))
			continue
		}
		if l.anchor == "" {
			counted = append(counted, l)
			continue
		}
		if _, ok := byAnchor[l.anchor]; !ok {
			anchors = append(anchors, l.anchor)
		}
		byAnchor[l.anchor] = append(byAnchor[l.anchor], l.task)
	}
	for _, a := range anchors {
		wide, err := r.Widen([]string{a})
		if err != nil {
			return nil, nil, fmt.Errorf("read with column %s: %w", a, err)
		}
		_, wseq, err := wide.ReadTasks(ctx, splitForCores(byAnchor[a]))
		if err != nil {
			return nil, nil, err
		}
		segs = append(segs, narrowed(schema, wseq))
	}
	if len(counted) > 0 {
		if proj == nil {
			if proj, err = r.Scan.Projection(); err != nil {
				return nil, nil, err
			}
		}
		segs = append(segs, defaultRows(ctx, schema, proj, counted))
	}
	return schema, concat(segs), nil
}

// concat streams the batches of each sequence in turn.
func concat(segs []iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, s := range segs {
			for rec, err := range s {
				if !yield(rec, err) {
					return
				}
				if err != nil {
					return
				}
			}
		}
	}
}

// narrowed gives the batches of seq with only the columns of schema.
func narrowed(schema *arrow.Schema, seq iter.Seq2[arrow.RecordBatch, error]) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for rec, err := range seq {
			if err != nil {
				yield(nil, err)
				return
			}
			out, err := project(schema, rec)
			rec.Release()
			if !yield(out, err) || err != nil {
				return
			}
		}
	}
}

// project is rec's columns of schema, found by name.
func project(schema *arrow.Schema, rec arrow.RecordBatch) (arrow.RecordBatch, error) {
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		idx := rec.Schema().FieldIndices(f.Name)
		if len(idx) == 0 {
			return nil, fmt.Errorf("widened scan returned no column %s", f.Name)
		}
		cols[i] = rec.Column(idx[0])
		if !arrow.TypeEqual(cols[i].DataType(), f.Type) {
			return nil, fmt.Errorf("widened scan returned column %s as %s, want %s", f.Name, cols[i].DataType(), f.Type)
		}
	}
	return array.NewRecordBatch(schema, cols, rec.NumRows()), nil
}

// defaultRows are the rows of tasks whose files hold no column of the
// table: every column its initial-default (NULL when it has none), as
// iceberg-go fills a column a file lacks, and the row lineage columns
// derived from the task as iceberg-go derives them.
func defaultRows(ctx context.Context, schema *arrow.Schema, proj *iceberg.Schema, tasks []lackingTask) iter.Seq2[arrow.RecordBatch, error] {
	return func(yield func(arrow.RecordBatch, error) bool) {
		for _, l := range tasks {
			for start := int64(0); start < l.rows; start += nativeBatchRows {
				n := min(l.rows-start, nativeBatchRows)
				rec, err := defaultBatch(ctx, schema, proj, l.task, start, n)
				if !yield(rec, err) || err != nil {
					return
				}
			}
		}
	}
}

func defaultBatch(ctx context.Context, schema *arrow.Schema, proj *iceberg.Schema, t table.FileScanTask, start, n int64) (arrow.RecordBatch, error) {
	empty := array.NewRecordBatch(arrow.NewSchema(nil, nil), nil, n)
	defer empty.Release()
	filled, err := table.ToRequestedSchema(ctx, proj, iceberg.NewSchema(0), empty,
		table.SchemaOptions{UseLargeTypes: largeTypes(schema)})
	if err != nil {
		return nil, fmt.Errorf("defaults of data file %s: %w", t.File.FilePath(), err)
	}
	defer filled.Release()
	cols := make([]arrow.Array, schema.NumFields())
	for i, f := range schema.Fields() {
		var lineage arrow.Array
		switch field, _ := proj.FindFieldByName(f.Name); {
		case field.ID == iceberg.RowIDFieldID && t.FirstRowID != nil:
			lineage = sequence(*t.FirstRowID+start, 1, n)
		case field.ID == iceberg.LastUpdatedSequenceNumberFieldID && t.DataSequenceNumber != nil:
			lineage = sequence(*t.DataSequenceNumber, 0, n)
		}
		if lineage != nil {
			defer lineage.Release()
			cols[i] = lineage
			continue
		}
		idx := filled.Schema().FieldIndices(f.Name)
		if len(idx) == 0 || !arrow.TypeEqual(filled.Column(idx[0]).DataType(), f.Type) {
			return nil, fmt.Errorf("defaults of data file %s: no column %s of type %s", t.File.FilePath(), f.Name, f.Type)
		}
		cols[i] = filled.Column(idx[0])
	}
	return array.NewRecordBatch(schema, cols, n), nil
}

// largeTypes says the scan reads strings, binaries and lists as Arrow's
// large (64-bit offset) types.
func largeTypes(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		switch f.Type.ID() {
		case arrow.LARGE_STRING, arrow.LARGE_BINARY, arrow.LARGE_LIST:
			return true
		}
	}
	return false
}

// sequence is first, first+step, ... (n values).
func sequence(first, step, n int64) arrow.Array {
	b := array.NewInt64Builder(memory.DefaultAllocator)
	defer b.Release()
	b.Reserve(int(n))
	for i := range n {
		b.UnsafeAppend(first + i*step)
	}
	return b.NewArray()
}
