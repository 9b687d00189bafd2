package engine_test

import (
	"testing"

	"github.com/apache/iceberg-go"
)

// TestTimestampLTZIsTimestamptz checks the Iceberg types of Spark's
// timestamp spellings, as Spark maps them: TIMESTAMP_LTZ is timestamptz,
// TIMESTAMP_NTZ timestamp. MySQL's TIMESTAMP stays timestamp (icesql stores
// it as DATETIME(6)), in CREATE TABLE and in ALTER TABLE ADD COLUMN.
func TestTimestampLTZIsTimestamptz(t *testing.T) {
	dir := t.TempDir()
	conn := openDB(t, dir)
	mustExec(t, conn,
		"CREATE DATABASE db", "USE db",
		"CREATE TABLE t (ltz TIMESTAMP_LTZ, ntz TIMESTAMP_NTZ, plain TIMESTAMP, dt DATETIME(6))",
		"ALTER TABLE t ADD COLUMN ltz2 timestamp_ltz",
	)
	tbl := loadWithIcebergGo(t, dir, "db", "t")
	want := map[string]iceberg.Type{
		"ltz": iceberg.PrimitiveTypes.TimestampTz, "ltz2": iceberg.PrimitiveTypes.TimestampTz,
		"ntz": iceberg.PrimitiveTypes.Timestamp, "plain": iceberg.PrimitiveTypes.Timestamp, "dt": iceberg.PrimitiveTypes.Timestamp,
	}
	for name, typ := range want {
		f, ok := tbl.Schema().FindFieldByName(name)
		if !ok || !f.Type.Equals(typ) {
			t.Errorf("column %s: Iceberg type %v, want %v", name, f.Type, typ)
		}
	}
	for k, v := range tbl.Properties() {
		if k != "commit.manifest-merge.enabled" {
			t.Errorf("unexpected table property %s=%s (a remembered TIMESTAMP would bring back its 1970-2038 range)", k, v)
		}
	}
}
