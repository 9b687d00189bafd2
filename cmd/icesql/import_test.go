package main

import (
	"bytes"
	"context"
	gosql "database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/icesql/icesql/engine"
	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/s3test"
)

// importCmd runs icesql import in process.
func importCmd(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err = run(append([]string{"import"}, args...), strings.NewReader(""), &out, &errOut)
	return out.String(), errOut.String(), err
}

// query runs statements on the warehouse and returns the last one's rows,
// one line per row, values separated by "|".
func query(t *testing.T, warehouse string, stmts ...string) string {
	t.Helper()
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Config{Warehouse: warehouse})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	db := gosql.OpenDB(e.Connector())
	defer db.Close()
	for _, s := range stmts[:len(stmts)-1] {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	rows, err := db.QueryContext(ctx, stmts[len(stmts)-1])
	if err != nil {
		t.Fatalf("%s: %v", stmts[len(stmts)-1], err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out []string
	for rows.Next() {
		vals := make([]gosql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		var line []string
		for _, v := range vals {
			if v.Valid {
				line = append(line, v.String)
			} else {
				line = append(line, "NULL")
			}
		}
		out = append(out, strings.Join(line, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(out, "\n")
}

// parquetFiles lists the Parquet files under a table's folder.
func parquetFiles(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".parquet") {
			files = append(files, p)
		}
		return nil
	})
	return files
}

const ordersCSV = `order_id,customer,amount,placed,note
1,"Smith, John",12.5,2024-01-15 10:00:00,NULL
2,Ann,7,2024-01-16 11:30:00.250000,"said ""hi"""
3,Bob,,2024-02-01 00:00:00,
`

func TestImportCSVCreate(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	src := filepath.Join(dir, "orders.csv")
	os.WriteFile(src, []byte(ordersCSV), 0o644)
	stdout, stderr, err := importCmd(t, "--warehouse", wh, "--progress", "none", "--partition-by", "days(placed), bucket(4, order_id)", "shop.orders", src)
	if err != nil {
		t.Fatalf("import: %v\n%s%s", err, stdout, stderr)
	}
	if !regexp.MustCompile(`^imported 3 rows from 1 file into shop.orders: \d+ data files?, snapshot \d+, [0-9.]+ s \(\d+ rows/s\)\n$`).MatchString(stdout) {
		t.Errorf("summary %q", stdout)
	}
	if got, want := query(t, wh, "SELECT column_name, column_type FROM information_schema.columns WHERE table_schema = 'shop' AND table_name = 'orders' ORDER BY ordinal_position"),
		"order_id|bigint\ncustomer|longtext\namount|double\nplaced|datetime(6)\nnote|longtext"; got != want {
		t.Errorf("columns\n%s\nwant\n%s", got, want)
	}
	if got, want := query(t, wh, "SELECT * FROM shop.orders ORDER BY order_id"),
		"1|Smith, John|12.5|2024-01-15 10:00:00.000000|NULL\n2|Ann|7|2024-01-16 11:30:00.250000|said \"hi\"\n3|Bob|NULL|2024-02-01 00:00:00.000000|NULL"; got != want {
		t.Errorf("rows\n%s\nwant\n%s", got, want)
	}
	if got := query(t, wh, "SELECT COUNT(*) FROM shop.orders.partitions"); got != "3" {
		t.Errorf("%s partitions, want 3 (days(placed) x bucket)", got)
	}
	if got := query(t, wh, "SELECT COUNT(*) FROM shop.orders.snapshots"); got != "1" {
		t.Errorf("%s snapshots, want 1", got)
	}

	// Create again: the table exists.
	_, _, err = importCmd(t, "--warehouse", wh, "shop.orders", src)
	if err == nil || !strings.Contains(err.Error(), "already exists: import into it with --mode append or --mode overwrite") {
		t.Errorf("second create: %v", err)
	}
}

// TestImportModes: append adds the rows, overwrite replaces them, each as
// one snapshot; flags may follow the arguments.
func TestImportModes(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	src := filepath.Join(dir, "orders.csv")
	os.WriteFile(src, []byte(ordersCSV), 0o644)
	if _, _, err := importCmd(t, "--warehouse", wh, "--mode", "append", "shop.orders", src); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("append to a missing table: %v", err)
	}
	// A table with its own types: INT ids, DECIMAL amounts, columns in
	// another order, and one the file lacks.
	query(t, wh, "CREATE DATABASE shop", "CREATE TABLE shop.orders (note STRING, amount DECIMAL(10,2), order_id INT, customer STRING, placed DATETIME(6), extra BIGINT)", "SELECT 1")
	for _, args := range [][]string{
		{"--warehouse", wh, "--mode", "append", "shop.orders", src},
		{"shop.orders", src, "--warehouse", wh, "--mode", "append"},
	} {
		if out, errOut, err := importCmd(t, append(args, "--progress", "none")...); err != nil {
			t.Fatalf("append: %v\n%s%s", err, out, errOut)
		}
	}
	if got, want := query(t, wh, "SELECT order_id, amount, extra, COUNT(*) FROM shop.orders GROUP BY order_id, amount, extra ORDER BY order_id"),
		"1|12.50|NULL|2\n2|7.00|NULL|2\n3|NULL|NULL|2"; got != want {
		t.Errorf("after two appends\n%s\nwant\n%s", got, want)
	}
	os.WriteFile(src, []byte("order_id,amount\n9,1.25\n"), 0o644)
	if out, errOut, err := importCmd(t, "--warehouse", wh, "--mode", "overwrite", "--progress", "none", "shop.orders", src); err != nil {
		t.Fatalf("overwrite: %v\n%s%s", err, out, errOut)
	}
	if got := query(t, wh, "SELECT order_id, amount, customer FROM shop.orders"); got != "9|1.25|NULL" {
		t.Errorf("after overwrite: %s", got)
	}
	if got := query(t, wh, "SELECT operation FROM shop.orders.snapshots ORDER BY committed_at"); got != "append\nappend\noverwrite" {
		t.Errorf("snapshots:\n%s", got)
	}
	if _, _, err := importCmd(t, "--warehouse", wh, "--mode", "append", "--partition-by", "days(placed)", "shop.orders", src); err == nil || !strings.Contains(err.Error(), "--partition-by applies to --mode create") {
		t.Errorf("--partition-by with append: %v", err)
	}
}

func TestImportParquetAndJSONLines(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	jsonl := filepath.Join(dir, "events.jsonl")
	os.WriteFile(jsonl, []byte(`{"id": 1, "kind": "click", "at": "2024-03-01T10:00:00Z", "props": {"x": 1}}
{"id": 2, "kind": null, "at": "2024-03-01T11:00:00+01:00"}
`), 0o644)
	if out, errOut, err := importCmd(t, "--warehouse", wh, "--progress", "none", "ev.events", jsonl); err != nil {
		t.Fatalf("jsonl: %v\n%s%s", err, out, errOut)
	}
	// timestamptz is shown in the session time zone (UTC here).
	if got, want := query(t, wh, "SELECT id, kind, at, props FROM ev.events ORDER BY id"),
		"1|click|2024-03-01 10:00:00.000000|{\"x\": 1}\n2|NULL|2024-03-01 10:00:00.000000|NULL"; got != want {
		t.Errorf("jsonl rows\n%s\nwant\n%s", got, want)
	}
	// Export the table as Parquet with the engine's own files, and import
	// the folder into a new table.
	files := parquetFiles(t, filepath.Join(wh, "ev", "events", "data"))
	pq := filepath.Join(dir, "pq")
	os.MkdirAll(pq, 0o755)
	for i, f := range files {
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(pq, fmt.Sprintf("part-%d.parquet", i)), b, 0o644)
	}
	if out, errOut, err := importCmd(t, "--warehouse", wh, "--progress", "none", "ev.events2", pq); err != nil {
		t.Fatalf("parquet: %v\n%s%s", err, out, errOut)
	}
	if got, want := query(t, wh, "SELECT id, kind, at, props FROM ev.events2 ORDER BY id"),
		"1|click|2024-03-01 10:00:00.000000|{\"x\": 1}\n2|NULL|2024-03-01 10:00:00.000000|NULL"; got != want {
		t.Errorf("parquet rows\n%s\nwant\n%s", got, want)
	}
}

// bigCSV writes n rows of id,name,amount,day with a bad amount at row bad
// (from 1; 0 for none) and returns the file.
func bigCSV(t *testing.T, dir string, n, bad int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,name,amount,day\n")
	for i := 1; i <= n; i++ {
		amount := fmt.Sprintf("%d.%02d", i%1000, i%100)
		if i == bad {
			amount = "n/a"
		}
		fmt.Fprintf(&b, "%d,name %d,%s,2024-%02d-%02d\n", i, i, amount, i%12+1, i%28+1)
	}
	p := filepath.Join(dir, "big.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestImportBadRows: a bad row stops the import with its line and column,
// and the table is as it was (no table, no files); --max-errors skips and
// lists it.
func TestImportBadRows(t *testing.T) {
	dir := t.TempDir()
	wh := filepath.Join(dir, "wh")
	const n = 300_000
	src := bigCSV(t, dir, n, n-5)
	_, _, err := importCmd(t, "--warehouse", wh, "--progress", "none", "db.t", src)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf(`big.csv line %d, column "amount": value "n/a" is not a DOUBLE`, n-4)) ||
		!strings.Contains(err.Error(), "--max-errors") {
		t.Fatalf("error %v", err)
	}
	if files := parquetFiles(t, wh); len(files) != 0 {
		t.Errorf("the failed import left %d files: %v", len(files), files)
	}
	if got := query(t, wh, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'db'"); got != "0" {
		t.Errorf("the failed import left its table")
	}

	// Into an existing table, with small files so that some are complete
	// when the bad row comes.
	query(t, wh, "CREATE TABLE db.t (id BIGINT, name STRING, amount DOUBLE, day DATE) TBLPROPERTIES ('write.target-file-size-bytes' = '100000')", "INSERT INTO db.t VALUES (0, 'x', 1, '2024-01-01')", "SELECT 1")
	before := parquetFiles(t, wh)
	if _, _, err := importCmd(t, "--warehouse", wh, "--progress", "none", "--mode", "append", "db.t", src); err == nil {
		t.Fatal("the import of a bad row succeeded")
	}
	if after := parquetFiles(t, wh); len(after) != len(before) {
		t.Errorf("the failed import left files: %d before, %d after", len(before), len(after))
	}
	if got := query(t, wh, "SELECT COUNT(*) FROM db.t"); got != "1" {
		t.Errorf("%s rows after the failed import, want 1", got)
	}

	stdout, stderr, err := importCmd(t, "--warehouse", wh, "--progress", "lines", "--progress-interval", "1ms", "--mode", "append", "--max-errors", "1", "db.t", src)
	if err != nil {
		t.Fatalf("import with --max-errors: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, fmt.Sprintf(`skipped: %s line %d, column "amount": value "n/a" is not a DOUBLE`, src, n-4)) {
		t.Errorf("stderr does not list the skipped row:\n%s", stderr)
	}
	if !regexp.MustCompile(`(?m)^import: \d+ rows, \d+ rows/s, [0-9.]+ MiB of [0-9.]+ MiB`).MatchString(stderr) {
		t.Errorf("no progress lines on stderr:\n%.2000s", stderr)
	}
	if !strings.Contains(stdout, fmt.Sprintf("imported %d rows", n-1)) || !strings.Contains(stdout, "skipped 1 bad row") {
		t.Errorf("summary %q", stdout)
	}
	// The rows match the file's.
	if got, want := query(t, wh, "SELECT COUNT(*), SUM(id), COUNT(DISTINCT name), CAST(SUM(amount) AS DECIMAL(20,2)) FROM db.t WHERE id > 0"),
		fmt.Sprintf("%d|%d|%d|%s", n-1, n*(n+1)/2-(n-5), n-1, sumAmounts(n, n-5)); got != want {
		t.Errorf("imported rows: %s, want %s", got, want)
	}
}

func sumAmounts(n, skip int) string {
	var cents int64
	for i := 1; i <= n; i++ {
		if i != skip {
			cents += int64(i%1000)*100 + int64(i%100)
		}
	}
	return fmt.Sprintf("%d.%02d", cents/100, cents%100)
}

func TestImportFlagErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"db.t"}, ""},
		{[]string{"--mode", "upsert", "db.t", "x.csv"}, `--mode "upsert"`},
		{[]string{"--delimiter", "ab", "db.t", "x.csv"}, `--delimiter "ab"`},
		{[]string{"t", "x.csv"}, `want DB.TABLE`},
		{[]string{"--header", "maybe", "db.t", "x.csv"}, `--header "maybe"`},
	} {
		_, _, err := importCmd(t, append([]string{"--warehouse", t.TempDir()}, tc.args...)...)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// TestImportFromS3 imports a prefix of CSV files, and one Parquet object,
// from a real S3 server (moto) into a local warehouse.
func TestImportFromS3(t *testing.T) {
	endpoint := s3test.StartServer(t)
	root := s3test.NewBucket(t, endpoint) // s3://bucket/warehouse: here the source
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretAccessKey)
	t.Setenv("AWS_REGION", s3test.Region)
	ctx := context.Background()
	st, err := storage.NewS3Store(ctx, root, storage.S3Config{Endpoint: endpoint, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{
		"src/part-1.csv":     "id,name\n1,a\n2,b\n",
		"src/sub/part-2.csv": "id,name\n3,c\n",
		"src/_SUCCESS":       "",
	} {
		if err := st.WriteFile(ctx, root+"/"+name, []byte(content)); err != nil {
			t.Fatal(err)
		}
	}
	wh := filepath.Join(t.TempDir(), "wh")
	s3flags := []string{"--warehouse", wh, "--s3-endpoint", endpoint, "--s3-path-style", "--progress", "none"}
	if out, errOut, err := importCmd(t, append(s3flags, "db.t", root+"/src")...); err != nil {
		t.Fatalf("import: %v\n%s%s", err, out, errOut)
	}
	if got := query(t, wh, "SELECT * FROM db.t ORDER BY id"); got != "1|a\n2|b\n3|c" {
		t.Errorf("rows from S3:\n%s", got)
	}
	// A Parquet object: the table's own data file, uploaded.
	files := parquetFiles(t, filepath.Join(wh, "db", "t", "data"))
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := st.WriteFile(ctx, root+"/pq/one.parquet", data); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := importCmd(t, append(s3flags, "db.p", root+"/pq/one.parquet")...); err != nil {
		t.Fatalf("import: %v\n%s%s", err, out, errOut)
	}
	if got := query(t, wh, "SELECT COUNT(*) FROM db.p"); got == "0" {
		t.Errorf("no rows from the Parquet object")
	}
}
