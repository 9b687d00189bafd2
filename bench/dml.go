package main

import (
	"context"
	gosql "database/sql"
	"fmt"
	"log"
	"path/filepath"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/icesql/icesql/engine"
)

// The -dml benchmark: UPDATE and DELETE of 1% of the rows of a table spread
// over many files, in each write mode (copy-on-write, merge-on-read). It
// prints, per statement, how many data files it removed (rewrote), what it
// added and how many bytes it wrote, from the snapshot summary, and its
// time.
//
// Two shapes of 1%: "scattered" rows (id % 100 = k) sit in every file, the
// worst case for copy-on-write; "clustered" rows (a range of ids) sit in
// one file.

var dmlSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64},
	{Name: "grp", Type: arrow.PrimitiveTypes.Int64},
	{Name: "payload", Type: arrow.BinaryTypes.String},
}, nil)

func runDML(ctx context.Context, work string, rows, files int, profile string) error {
	e, err := engine.Open(ctx, engine.Config{Warehouse: filepath.Join(work, "warehouse")})
	if err != nil {
		return err
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE DATABASE dml"); err != nil {
		return err
	}
	perFile := int64(rows / files)
	for _, mode := range []string{"copy-on-write", "merge-on-read"} {
		name := map[string]string{"copy-on-write": "cow", "merge-on-read": "mor"}[mode]
		ddl := fmt.Sprintf(`CREATE TABLE dml.%s (id BIGINT, grp BIGINT, payload STRING) TBLPROPERTIES (
			'write.delete.mode' = '%s', 'write.update.mode' = '%s')`, name, mode, mode)
		if _, err := db.ExecContext(ctx, ddl); err != nil {
			return fmt.Errorf("%s: %w", ddl, err)
		}
		start := time.Now()
		for f := range int64(files) {
			if _, err := e.Import(ctx, "dml", name, fileRows(f*perFile, perFile), nil); err != nil {
				return fmt.Errorf("load %s: %w", name, err)
			}
		}
		n, nfiles, bytes, err := tableSize(ctx, db, name)
		if err != nil {
			return err
		}
		fmt.Printf("bench dml_load mode=%s rows=%d data_files=%d bytes=%d ms=%d\n", mode, n, nfiles, bytes, time.Since(start).Milliseconds())

		hi := int64(rows) / 100
		var deleted int64
		statements := []struct{ op, shape, sql string }{
			{"delete", "scattered", fmt.Sprintf("DELETE FROM dml.%s WHERE id %% 100 = 7", name)},
			{"update", "scattered", fmt.Sprintf("UPDATE dml.%s SET grp = grp + 1 WHERE id %% 100 = 13", name)},
			{"delete", "clustered", fmt.Sprintf("DELETE FROM dml.%s WHERE id >= %d AND id < %d", name, 2*hi, 3*hi)},
			{"update", "clustered", fmt.Sprintf("UPDATE dml.%s SET grp = grp + 1 WHERE id >= %d AND id < %d", name, 5*hi, 6*hi)},
		}
		profilePath := ""
		if profile != "" {
			profilePath = profile + "." + name
		}
		stop, err := startProfile(profilePath)
		if err != nil {
			return err
		}
		for _, st := range statements {
			start, startCPU := time.Now(), cpuTime()
			res, err := db.ExecContext(ctx, st.sql)
			if err != nil {
				return fmt.Errorf("%s: %w", st.sql, err)
			}
			el, cpu := time.Since(start), cpuTime()-startCPU
			changed, _ := res.RowsAffected()
			if st.op == "delete" {
				deleted += changed
			}
			s, err := lastSummary(ctx, db, name)
			if err != nil {
				return err
			}
			fmt.Printf("bench dml_%s_%s mode=%s rows=%d ms=%d cpu_ms=%d files_rewritten=%s data_files_added=%s delete_files_added=%s bytes_written=%s operation=%s\n",
				st.op, st.shape, mode, changed, el.Milliseconds(), cpu.Milliseconds(), s["deleted-data-files"], s["added-data-files"], s["added-delete-files"], s["added-files-size"], s["operation"])
		}
		stop()
		n2, _, _, err := tableSize(ctx, db, name)
		if err != nil {
			return err
		}
		if want := n - deleted; n2 != want {
			log.Printf("  %s: %d rows after the deletes, want %d", name, n2, want)
		}
	}
	return nil
}

// fileRows is one file's rows: ids from first, count of them.
func fileRows(first, count int64) array.RecordReader {
	b := array.NewRecordBuilder(memory.DefaultAllocator, dmlSchema)
	defer b.Release()
	ids := b.Field(0).(*array.Int64Builder)
	grps := b.Field(1).(*array.Int64Builder)
	payload := b.Field(2).(*array.StringBuilder)
	for id := first; id < first+count; id++ {
		ids.Append(id)
		grps.Append(id % 1000)
		payload.Append(fmt.Sprintf("row %d of the dml benchmark", id))
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	rdr, err := array.NewRecordReader(dmlSchema, []arrow.RecordBatch{rec})
	if err != nil {
		panic(err) // the schema is the records'
	}
	return rdr
}

func tableSize(ctx context.Context, db *gosql.DB, name string) (rows, files, bytes int64, err error) {
	err = db.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*) FROM dml.%s", name)).Scan(&rows)
	if err == nil {
		err = db.QueryRowContext(ctx, fmt.Sprintf("SELECT COUNT(*), CAST(COALESCE(SUM(file_size_in_bytes), 0) AS SIGNED) FROM dml.%s.data_files", name)).Scan(&files, &bytes)
	}
	return rows, files, bytes, err
}

// lastSummary is the summary of the table's current snapshot.
func lastSummary(ctx context.Context, db *gosql.DB, name string) (map[string]string, error) {
	keys := []string{"operation", "deleted-data-files", "added-data-files", "added-delete-files", "added-files-size"}
	out := map[string]string{}
	for _, k := range keys {
		var v gosql.NullString
		q := fmt.Sprintf("SELECT summary['%s'] FROM dml.%s.snapshots WHERE snapshot_id NOT IN (SELECT parent_id FROM dml.%s.snapshots WHERE parent_id IS NOT NULL)", k, name, name)
		if err := db.QueryRowContext(ctx, q).Scan(&v); err != nil {
			return nil, fmt.Errorf("%s: %w", q, err)
		}
		out[k] = v.String
		if !v.Valid {
			out[k] = "0"
		}
	}
	return out, nil
}
