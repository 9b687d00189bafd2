package storage

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strconv"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/puffin"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/table/dv"
	"github.com/icesql/icesql/sqltests/fixtures"
)

// fixture is rel in the shared fixtures (read in place; see their README.md).
func fixture(t *testing.T, rel string) string {
	t.Helper()
	return fixtures.Path(t, rel)
}

// newV3Table creates an unpartitioned format-version 3 table.
func newV3Table(t *testing.T) *table.Table {
	t.Helper()
	w := openTestWarehouse(t, t.TempDir())
	mustCreateNamespace(t, w, "db")
	tbl, err := w.CreateTable(context.Background(), table.Identifier{"db", "t"}, testSchema,
		catalog.WithProperties(iceberg.Properties{"format-version": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	return tbl
}

// dataFile is the manifest entry of a data file of rows rows; DVs need only
// its path, spec and partition.
func dataFile(t *testing.T, path string, rows int64) iceberg.DataFile {
	t.Helper()
	b, err := iceberg.NewDataFileBuilder(*iceberg.UnpartitionedSpec, iceberg.EntryContentData, path, iceberg.ParquetFile, nil, nil, nil, rows, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return b.Build()
}

// blob returns the bytes of the DV entry df points at.
func blob(t *testing.T, df iceberg.DataFile) []byte {
	t.Helper()
	data, err := os.ReadFile(trimScheme(df.FilePath()))
	if err != nil {
		t.Fatal(err)
	}
	off, size := *df.ContentOffset(), *df.ContentSizeInBytes()
	return data[off : off+size]
}

func trimScheme(p string) string {
	if len(p) > 7 && p[:7] == "file://" {
		return p[7:]
	}
	return p
}

func positionsOf(bm *dv.RoaringPositionBitmap) []int64 {
	var out []int64
	for p := range bm.Positions() {
		out = append(out, int64(p))
	}
	return out
}

// TestDVBytesMatchJava writes the positions of Java's golden position
// indexes (Iceberg's TestBitmapPositionDeleteIndex) as DVs and compares
// the blobs byte for byte, then reads them back with iceberg-go's DV reader.
func TestDVBytesMatchJava(t *testing.T) {
	ctx := context.Background()
	tbl := newV3Table(t)
	for name, positions := range map[string][]int64{
		"small-alternating-values-position-index.bin": {1, 3, 5, 7, 9},
		"small-and-large-values-position-index.bin":   {100, 101, 2147483747, 2147483748},
	} {
		want, err := os.ReadFile(fixture(t, "apache-iceberg/core/src/test/resources/org/apache/iceberg/deletes/"+name))
		if err != nil {
			t.Fatal(err)
		}
		df := dataFile(t, "file:///data/"+name+".parquet", 3_000_000_000)
		dvs, superseded, err := WriteDeletionVectors(ctx, tbl, []DVTarget{{File: df, Positions: positions}})
		if err != nil {
			t.Fatal(err)
		}
		if len(dvs) != 1 || len(superseded) != 0 {
			t.Fatalf("%s: wrote %d DVs superseding %d, want 1 and 0", name, len(dvs), len(superseded))
		}
		if got := blob(t, dvs[0]); !bytes.Equal(got, want) {
			t.Errorf("%s: blob\n%x\nwant (Java)\n%x", name, got, want)
		}
		fsys, _ := tbl.FS(ctx)
		bm, err := dv.ReadDV(fsys, dvs[0])
		if err != nil {
			t.Fatal(err)
		}
		if got := positionsOf(bm); !slices.Equal(got, positions) {
			t.Errorf("%s: read back %v, want %v", name, got, positions)
		}
		if ref := dvs[0].ReferencedDataFile(); ref == nil || *ref != df.FilePath() || dvs[0].Count() != int64(len(positions)) {
			t.Errorf("%s: entry names %v with %d rows, want %s with %d", name, ref, dvs[0].Count(), df.FilePath(), len(positions))
		}
	}
}

// TestDVBytesMatchSpark reads the DVs Spark 4.0 / Iceberg 1.10 wrote for the
// Impala fixture table iceberg_v3_deletion_vectors, writes the same
// positions with icesql's writer and compares the blobs byte for byte.
func TestDVBytesMatchSpark(t *testing.T) {
	ctx := context.Background()
	tbl := newV3Table(t)
	path := fixture(t, "impala/testdata/data/iceberg_test/iceberg_v3/iceberg_v3_deletion_vectors/data/00000-9-08e88179-85b6-4635-8b34-94b49abc87d9-00001-deletes.puffin")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := puffin.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Blobs()) == 0 {
		t.Fatal("the Spark Puffin file holds no blobs")
	}
	for _, meta := range r.Blobs() {
		if meta.Type != puffin.BlobTypeDeletionVector {
			t.Fatalf("blob type %s, want %s", meta.Type, puffin.BlobTypeDeletionVector)
		}
		spark, err := r.ReadBlobByMetadata(meta)
		if err != nil {
			t.Fatal(err)
		}
		card, err := strconv.ParseInt(meta.Properties["cardinality"], 10, 64)
		if err != nil {
			t.Fatalf("blob cardinality %q: %v", meta.Properties["cardinality"], err)
		}
		bm, err := dv.DeserializeDV(spark, card)
		if err != nil {
			t.Fatal(err)
		}
		positions := positionsOf(bm)
		df := dataFile(t, meta.Properties["referenced-data-file"], 1)
		dvs, _, err := WriteDeletionVectors(ctx, tbl, []DVTarget{{File: df, Positions: positions}})
		if err != nil {
			t.Fatal(err)
		}
		if got := blob(t, dvs[0]); !bytes.Equal(got, spark) {
			t.Errorf("positions %v: blob\n%x\nwant (Spark)\n%x", positions, got, spark)
		}
	}
}
