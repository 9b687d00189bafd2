package main

import (
	"context"
	gosql "database/sql"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/schollz/progressbar/v3"
	"github.com/sirupsen/logrus"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/importer"
	"github.com/icesql/icesql/storage"
)

const importUsage = `Usage: icesql import [flags] DB.TABLE SOURCE
  SOURCE is a .csv/.tsv, .parquet or .jsonl file (.gz for text), a folder of
  them, or an s3://bucket/prefix. For text, the columns and their types are
  inferred from the first rows: delimiter, header line, NULL markers,
  numbers, booleans, dates and timestamps.
`

// importFlags are import's own flags.
type importFlags struct {
	mode, partitionBy, format, delimiter, header string
	nulls                                        []string
	maxErrors, sampleRows                        int
	progress                                     string
	interval                                     time.Duration
}

func runImport(args []string, stdout, stderr io.Writer) error {
	fs, cfg := commonFlags("import", stderr)
	var f importFlags
	fs.StringVar(&f.mode, "mode", "create", "create: a new table (the database too); append: add the rows to an existing table; overwrite: replace an existing table's rows")
	fs.StringVar(&f.partitionBy, "partition-by", "", "with --mode create, the new table's partitioning, e.g. 'days(ts), bucket(16, id)'")
	fs.StringVar(&f.format, "format", "", "csv, parquet or jsonl (default: from the file names)")
	fs.StringVar(&f.delimiter, "delimiter", "", `CSV field delimiter, one character or \t (default: inferred among , tab ; |)`)
	fs.StringVar(&f.header, "header", "auto", "whether CSV files start with a line of column names: auto, yes or no")
	fs.Func("null", `a text read as NULL in CSV; repeat for several (default: empty, \N, NULL and null)`, func(v string) error {
		f.nulls = append(f.nulls, v)
		return nil
	})
	fs.IntVar(&f.maxErrors, "max-errors", 0, "skip up to this many rows that do not convert, and list them; one more fails the import")
	fs.IntVar(&f.sampleRows, "sample-rows", 10000, "rows read to infer the columns' types")
	fs.StringVar(&f.progress, "progress", "auto", "bar (a progress bar), lines (a line every --progress-interval), none, or auto (bar on a terminal, else lines)")
	fs.DurationVar(&f.interval, "progress-interval", 5*time.Second, "time between progress lines")
	fs.Usage = func() {
		fmt.Fprint(stderr, importUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	// Flags may come before, between or after the two arguments.
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil
			}
			return exitCode(2)
		}
		if fs.NArg() == 0 {
			break
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(pos) != 2 {
		fmt.Fprint(stderr, "icesql import: want a table and a source\n\n"+importUsage)
		return exitCode(2)
	}
	if err := finishCatalogFlags(fs, cfg); err != nil {
		return err
	}
	opts, err := f.readerOptions()
	if err != nil {
		return err
	}
	ns, name, err := splitTableName(pos[0], cfg.CatalogName)
	if err != nil {
		return err
	}
	switch f.mode {
	case "create", "append", "overwrite":
	default:
		return fmt.Errorf("--mode %q: want create, append or overwrite", f.mode)
	}
	if f.partitionBy != "" && f.mode != "create" {
		return fmt.Errorf("--partition-by applies to --mode create: the table %s.%s keeps its partitioning", ns, name)
	}
	logrus.SetLevel(logrus.ErrorLevel)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	e, err := openEngine(ctx, *cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	imp := &importRun{e: e, s3: cfg.S3, ns: ns, name: name, flags: f, stdout: stdout, stderr: stderr}
	return imp.run(ctx, pos[1], opts)
}

// readerOptions are the importer's options the flags say.
func (f importFlags) readerOptions() (importer.Options, error) {
	opts := importer.Options{Format: importer.Format(f.format), Nulls: f.nulls, SampleRows: f.sampleRows}
	switch opts.Format {
	case "", importer.CSV, importer.Parquet, importer.JSONL:
	default:
		return opts, fmt.Errorf("--format %q: want csv, parquet or jsonl", f.format)
	}
	switch d := f.delimiter; {
	case d == "":
	case d == `\t` || strings.EqualFold(d, "tab"):
		opts.Delimiter = '\t'
	case len([]rune(d)) == 1 && d != "\"" && d != "\n" && d != "\r":
		opts.Delimiter = []rune(d)[0]
	default:
		return opts, fmt.Errorf("--delimiter %q: want one character other than a quote or a line break", d)
	}
	switch f.header {
	case "auto":
	case "yes", "true":
		opts.Header = importer.HeaderYes
	case "no", "false":
		opts.Header = importer.HeaderNo
	default:
		return opts, fmt.Errorf("--header %q: want auto, yes or no", f.header)
	}
	switch f.progress {
	case "auto", "bar", "lines", "none":
	default:
		return opts, fmt.Errorf("--progress %q: want auto, bar, lines or none", f.progress)
	}
	return opts, nil
}

// splitTableName splits db.table (or catalog.db.table).
func splitTableName(s, catalogName string) (string, string, error) {
	parts := strings.Split(s, ".")
	if len(parts) == 3 && strings.EqualFold(parts[0], catalogName) {
		parts = parts[1:]
	}
	if len(parts) != 2 || parts[0] == "" || parts[1] == "" {
		return "", "", fmt.Errorf("table %q: want DB.TABLE", s)
	}
	return parts[0], parts[1], nil
}

type importRun struct {
	e              *engine.Engine
	s3             storage.S3Config
	ns, name       string
	flags          importFlags
	stdout, stderr io.Writer
}

func (r *importRun) run(ctx context.Context, location string, opts importer.Options) error {
	start := time.Now()
	fsys, err := r.sourceFS(ctx, location)
	if err != nil {
		return err
	}
	src, err := importer.Open(ctx, fsys, location, opts)
	if err != nil {
		return err
	}
	ident := table.Identifier{r.ns, r.name}
	exists, err := r.e.Catalog().CheckTableExists(ctx, ident)
	if err != nil {
		return fmt.Errorf("look up %s.%s: %w", r.ns, r.name, err)
	}
	created := false
	switch {
	case r.flags.mode == "create" && exists:
		return fmt.Errorf("table %s.%s already exists: import into it with --mode append or --mode overwrite", r.ns, r.name)
	case r.flags.mode != "create" && !exists:
		return fmt.Errorf("table %s.%s does not exist: create it with --mode create", r.ns, r.name)
	case r.flags.mode == "create":
		if err := r.createTable(ctx, src); err != nil {
			return err
		}
		created = true
	}
	res, skipped, err := r.load(ctx, src)
	if err != nil {
		if created {
			r.dropTable() // as it was: no table
		}
		var rowErr *importer.RowError
		if errors.As(err, &rowErr) && created {
			return fmt.Errorf("%w\nnothing was imported; fix the row, skip bad rows with --max-errors N, or let more rows decide the column types with --sample-rows N (now %d)", err, r.flags.sampleRows)
		}
		if errors.As(err, &rowErr) && r.flags.maxErrors == 0 {
			return fmt.Errorf("%w\nnothing was imported; fix the row, or skip bad rows with --max-errors N", err)
		}
		return fmt.Errorf("%w\nnothing was imported", err)
	}
	secs := time.Since(start).Seconds()
	snapshot := "no snapshot (no rows)"
	if res.SnapshotID != 0 {
		snapshot = fmt.Sprintf("snapshot %d", res.SnapshotID)
	}
	fmt.Fprintf(r.stdout, "imported %s from %s into %s.%s: %s, %s, %.1f s (%.0f rows/s)\n",
		plural(res.Rows, "row"), plural(int64(src.Files()), "file"), r.ns, r.name,
		plural(int64(res.Files), "data file"), snapshot, secs, float64(res.Rows)/max(secs, 1e-9))
	if skipped > 0 {
		fmt.Fprintf(r.stdout, "skipped %s that did not convert (listed above)\n", plural(int64(skipped), "bad row"))
	}
	return nil
}

// createTable creates the table with the source's columns (and the
// database when needed).
func (r *importRun) createTable(ctx context.Context, src *importer.Source) error {
	var cols []string
	for _, c := range src.Columns() {
		cols = append(cols, quoteName(c.Name)+" "+c.SQLType)
	}
	stmt := fmt.Sprintf("CREATE TABLE %s.%s (%s)", quoteName(r.ns), quoteName(r.name), strings.Join(cols, ", "))
	if r.flags.partitionBy != "" {
		stmt += " PARTITIONED BY (" + r.flags.partitionBy + ")"
	}
	db := gosql.OpenDB(r.e.Connector())
	defer db.Close()
	if _, err := db.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteName(r.ns)); err != nil {
		return fmt.Errorf("create database %s: %w", r.ns, err)
	}
	if _, err := db.ExecContext(ctx, stmt); err != nil {
		return fmt.Errorf("create table %s.%s: %w\n(the statement: %s)", r.ns, r.name, err, stmt)
	}
	return nil
}

// dropTable drops the table a failed import created.
func (r *importRun) dropTable() {
	ctx := context.Background()
	db := gosql.OpenDB(r.e.Connector())
	defer db.Close()
	if _, err := db.ExecContext(ctx, fmt.Sprintf("DROP TABLE %s.%s", quoteName(r.ns), quoteName(r.name))); err != nil {
		fmt.Fprintf(r.stderr, "icesql import: drop the table the import created: %v\n", err)
	}
}

func quoteName(s string) string { return "`" + strings.ReplaceAll(s, "`", "``") + "`" }

// maxListed is how many skipped rows are listed one by one.
const maxListed = 20

// load reads the source into the table.
func (r *importRun) load(ctx context.Context, src *importer.Source) (engine.ImportResult, int, error) {
	tbl, err := r.e.Catalog().LoadTable(ctx, table.Identifier{r.ns, r.name})
	if err != nil {
		return engine.ImportResult{}, 0, err
	}
	schema, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return engine.ImportResult{}, 0, err
	}
	listed := 0
	rd, err := src.Read(ctx, schema, importer.ReadOptions{
		MaxErrors: r.flags.maxErrors,
		OnBadRow: func(e *importer.RowError) {
			if listed++; listed <= maxListed {
				fmt.Fprintf(r.stderr, "skipped: %v\n", e)
			} else if listed == maxListed+1 {
				fmt.Fprintf(r.stderr, "skipped: more bad rows (not listed)\n")
			}
		},
	})
	if err != nil {
		return engine.ImportResult{}, 0, err
	}
	defer rd.Release()
	var rows atomic.Int64
	stopProgress := r.showProgress(src, rd, &rows)
	res, err := r.e.ImportTable(ctx, r.ns, r.name, rd, engine.ImportOptions{
		Overwrite: r.flags.mode == "overwrite",
		Progress:  func(n int64) { rows.Store(n) },
	})
	stopProgress()
	return res, rd.Skipped(), err
}

// showProgress shows the import's progress until the returned function is
// called: a bar (bytes read of the total, with the rows, rows/s and the
// time left) on a terminal, else a line now and then.
func (r *importRun) showProgress(src *importer.Source, rd *importer.Reader, rows *atomic.Int64) func() {
	mode := r.flags.progress
	if mode == "auto" {
		mode = "lines"
		if f, ok := r.stderr.(*os.File); ok && isTerminal(f) {
			mode = "bar"
		}
	}
	if mode == "none" {
		return func() {}
	}
	start := time.Now()
	total := src.Bytes()
	status := func() string {
		secs := time.Since(start).Seconds()
		return fmt.Sprintf("%d rows, %.0f rows/s", rows.Load(), float64(rows.Load())/max(secs, 1e-9))
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	var tick time.Duration
	var update func()
	switch mode {
	case "bar":
		bar := progressbar.NewOptions64(total,
			progressbar.OptionSetWriter(r.stderr),
			progressbar.OptionSetDescription("importing"),
			progressbar.OptionShowBytes(true),
			progressbar.OptionShowTotalBytes(true),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetWidth(30),
			progressbar.OptionThrottle(100*time.Millisecond),
			progressbar.OptionClearOnFinish(),
		)
		tick = 200 * time.Millisecond
		update = func() {
			bar.Describe(status())
			_ = bar.Set64(min(rd.BytesRead(), total))
		}
		defer func() {
			go func() {
				<-done
				_ = bar.Finish()
				close(finished)
			}()
		}()
	default:
		tick = max(r.flags.interval, 10*time.Millisecond)
		update = func() {
			read := rd.BytesRead()
			line := fmt.Sprintf("import: %s, %s of %s", status(), mib(read), mib(total))
			if secs := time.Since(start).Seconds(); read > 0 && read < total {
				line += fmt.Sprintf(", about %.0f s left", secs*float64(total-read)/float64(read))
			}
			fmt.Fprintln(r.stderr, line)
		}
		defer func() {
			go func() { <-done; close(finished) }()
		}()
	}
	stopTicker := make(chan struct{})
	tickerDone := make(chan struct{})
	go func() {
		defer close(tickerDone)
		t := time.NewTicker(tick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				update()
			case <-stopTicker:
				return
			}
		}
	}()
	return func() {
		close(stopTicker)
		<-tickerDone
		close(done)
		<-finished
	}
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

// sourceFS is where the source is: the local disk, or an object store for
// s3:// sources (reached with the --s3-* flags, as an s3:// warehouse).
func (r *importRun) sourceFS(ctx context.Context, location string) (importer.FS, error) {
	if strings.HasPrefix(location, "s3://") {
		return newS3Source(ctx, location, r.s3) // import_s3.go
	}
	return importer.LocalFS{}, nil
}
