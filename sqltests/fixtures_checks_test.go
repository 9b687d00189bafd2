package sqltests

import (
	"context"
	gosql "database/sql"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/icesql/icesql/sqltests/fixtures"
)

// TestFixtureMissingManifestList: snapshot 7342794868382145167 of
// equality_deletes/mytable lost its manifest list upstream. Time travel to it
// fails with an error naming the file; the table's other snapshots read.
func TestFixtureMissingManifestList(t *testing.T) {
	fx := fixtures.Dir(t)
	idx := loadFixtureIndex(t, fx)
	conn := fixtureServer(t, fixtureRemap(fx, idx))
	ctx := context.Background()
	mustExec(t, conn, "CREATE DATABASE fx")
	dir := filepath.Join(fx, "duckdb-iceberg/data/persistent/equality_deletes/warehouse/mydb/mytable")
	mustExec(t, conn, "CALL system.register_table('fx.t', '"+dir+"')")

	_, err := queryRows(ctx, conn, "SELECT count(*) FROM fx.t VERSION AS OF 7342794868382145167")
	if err == nil || !regexp.MustCompile(`snap-7342794868382145167-\S+\.avro: no such file`).MatchString(err.Error()) {
		t.Fatalf("time travel to the snapshot without manifest list: got %v, want an error naming its missing manifest list", err)
	}
	for q, want := range map[string]string{
		"SELECT count(*) FROM fx.t":                                   "2",
		"SELECT count(*) FROM fx.t VERSION AS OF 1916084761853986166": "2",
		"SELECT count(*) FROM fx.t VERSION AS OF 853766660775201079":  "4",
	} {
		rows, err := queryRows(ctx, conn, q)
		if err != nil || len(rows) != 1 || rows[0][0] == nil || *rows[0][0] != want {
			t.Errorf("%s: got %v, %v; want %s", q, rows, err, want)
		}
	}
}

// TestFixtureMetadataValidation registers the canonical metadata files of
// Java Iceberg's test resources: the valid ones register, the invalid ones
// are refused with the reason.
func TestFixtureMetadataValidation(t *testing.T) {
	fx := fixtures.Dir(t)
	conn := fixtureServer(t, nil)
	mustExec(t, conn, "CREATE DATABASE meta")
	res := filepath.Join(fx, "apache-iceberg/core/src/test/resources")
	valid := []string{
		"TableMetadataV1Valid.json", "TableMetadataV2Valid.json", "TableMetadataV2ValidMinimal.json",
		"TableMetadataV3ValidMinimal.json", "TableMetadataStatisticsFiles.json",
		"TableMetadataPartitionStatisticsFiles.json",
	}
	for i, f := range valid {
		name := "meta.valid" + string(rune('a'+i))
		if _, err := conn.ExecContext(context.Background(), "CALL system.register_table(?, ?)", name, filepath.Join(res, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Each file is refused for the first problem found; the file without a
	// current schema lacks last-partition-id too, which iceberg-go checks first.
	invalid := map[string]string{
		"TableMetadataUnsupportedVersion.json":       `unsupported format version 42`,
		"TableMetadataV2MissingPartitionSpecs.json":  `(?i)partition-specs`,
		"TableMetadataV2MissingLastPartitionId.json": `(?i)last-partition-id`,
		"TableMetadataV2MissingSortOrder.json":       `(?i)sort-orders`,
		"TableMetadataV2MissingSchemas.json":         `(?i)no valid schema`,
		"TableMetadataV2CurrentSchemaNotFound.json":  `(?i)current-schema-id|last-partition-id`,
		"TableMetadataV1MissingSchemaType.json":      `(?i)type`,
	}
	for f, reason := range invalid {
		_, err := conn.ExecContext(context.Background(), "CALL system.register_table('meta.bad', ?)", filepath.Join(res, f))
		switch {
		case err == nil:
			t.Errorf("%s: registered, want it refused", f)
			mustExec(t, conn, "DROP TABLE meta.bad")
		case !regexp.MustCompile(regexp.QuoteMeta(f) + ` is not valid Iceberg table metadata: .*` + reason).MatchString(err.Error()):
			t.Errorf("%s: error %q does not name the file and the reason (%s)", f, err, reason)
		}
	}
	bad := filepath.Join(fx, "duckdb-iceberg/data/persistent/bad_data/bad_iceberg_metadata.json")
	if _, err := conn.ExecContext(context.Background(), "CALL system.register_table('meta.bad', ?)", bad); err == nil ||
		!regexp.MustCompile(`bad_iceberg_metadata\.json is not valid Iceberg table metadata`).MatchString(err.Error()) {
		t.Errorf("bad_iceberg_metadata.json: got %v, want a refusal naming the file", err)
	}
}

// TestFixtureNewestMetadata registers every fixture table by its folder and
// checks that the metadata file chosen is the one tables.json names (the
// same current snapshot), whatever version-hint.text says.
func TestFixtureNewestMetadata(t *testing.T) {
	fx := fixtures.Dir(t)
	idx := loadFixtureIndex(t, fx)
	conn := fixtureServer(t, fixtureRemap(fx, idx))
	ctx := context.Background()
	mustExec(t, conn, "CREATE DATABASE byfile")
	mustExec(t, conn, "CREATE DATABASE byfolder")
	for _, tb := range idx.Tables {
		name := fixtureName(tb.Dir)
		var want, got gosql.NullInt64
		var r1, f1, r2, f2 gosql.NullInt64
		errFile := conn.QueryRowContext(ctx, "CALL system.register_table(?, ?)", "byfile."+name,
			filepath.Join(fx, tb.Dir, "metadata", tb.MetadataFile)).Scan(&want, &r1, &f1)
		errFolder := conn.QueryRowContext(ctx, "CALL system.register_table(?, ?)", "byfolder."+name,
			filepath.Join(fx, tb.Dir)).Scan(&got, &r2, &f2)
		if (errFile == nil) != (errFolder == nil) || want != got || r1 != r2 || f1 != f2 {
			t.Errorf("%s: by folder got snapshot %v (%v), by %s got %v (%v)", tb.Dir, got, errFolder, tb.MetadataFile, want, errFile)
		}
	}
}

func mustExec(t *testing.T, conn *gosql.Conn, q string) {
	t.Helper()
	if _, err := conn.ExecContext(context.Background(), q); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
