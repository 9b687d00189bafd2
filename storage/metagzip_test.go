package storage

import (
	"bytes"
	"compress/gzip"
	"context"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	icebergio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
)

func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 7, 100, gzipChunkSize - 1, gzipChunkSize, gzipChunkSize + 3, 3 * gzipChunkSize} {
		a, b := make([]byte, r.IntN(5000)), make([]byte, n)
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), int64(len(b))); got != want {
			t.Fatalf("len(a)=%d len(b)=%d: combined %08x, want %08x", len(a), n, got, want)
		}
	}
}

// gunzipStrict reads a gzip file as one member, checking its CRC and length.
func gunzipStrict(t *testing.T, data []byte) []byte {
	t.Helper()
	r, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	r.Multistream(false)
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decompress: %v", err)
	}
	if rest, _ := io.ReadAll(r); len(rest) != 0 {
		t.Fatal("more than one gzip member")
	}
	return out
}

// TestGzipMetadataFiles commits to a table with
// write.metadata.compression-codec=gzip until its snapshot list and log
// span several kept chunks, expires snapshots from the start of the list,
// and checks each metadata file: named as its base's property says, one
// gzip member whose content is byte for byte iceberg-go's MarshalJSON of
// the metadata, read back by a fresh warehouse and by iceberg-go.
func TestGzipMetadataFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema)
	if err != nil {
		t.Fatal(err)
	}
	metaDir := filepath.Join(dir, "db", "t", "metadata")
	check := func(name string, meta table.Metadata, version int, gz bool) {
		t.Helper()
		plain := filepath.Join(metaDir, "v"+strconv.Itoa(version)+".metadata.json")
		zipped := filepath.Join(metaDir, "v"+strconv.Itoa(version)+".gz.metadata.json")
		want, err := marshalMetadata(meta)
		if err != nil {
			t.Fatal(err)
		}
		file, other := plain, zipped
		if gz {
			file, other = zipped, plain
		}
		if _, err := os.Stat(other); err == nil {
			t.Fatalf("%s: %s exists beside %s", name, other, file)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if gz {
			data = gunzipStrict(t, data)
		}
		if !bytes.Equal(data, want) {
			t.Fatalf("%s: %s differs from MarshalJSON:\n got %.300s\nwant %.300s", name, file, data, want)
		}
		fresh := openTestWarehouse(t, dir)
		back, err := fresh.LoadTable(ctx, ident)
		if err != nil {
			t.Fatalf("%s: a fresh warehouse: %v", name, err)
		}
		if !back.Metadata().Equals(meta) || back.MetadataLocation() != "file://"+file {
			t.Fatalf("%s: a fresh warehouse loads %s, other metadata", name, back.MetadataLocation())
		}
		viaGo, err := table.NewFromLocation(ctx, ident, "file://"+file, func(context.Context) (icebergio.IO, error) { return icebergio.LocalFS{}, nil }, nil)
		if err != nil {
			t.Fatalf("%s: iceberg-go reads %s: %v", name, file, err)
		}
		if len(viaGo.Metadata().Snapshots()) != len(meta.Snapshots()) {
			t.Fatalf("%s: iceberg-go reads %d snapshots, want %d", name, len(viaGo.Metadata().Snapshots()), len(meta.Snapshots()))
		}
	}
	check("created", tbl.Metadata(), 1, false)
	// The commit that sets the property is written as its base says.
	meta, _, err := w.CommitTable(ctx, ident, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{table.MetadataCompressionKey: "GZIP"})})
	if err != nil {
		t.Fatal(err)
	}
	check("property set", meta, 2, false)
	version := 2
	for i := range 90 {
		tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, int64(i)), iceberg.Properties{"engine-name": "test"})
		if err != nil {
			t.Fatal(err)
		}
		version++
		if i%15 == 0 || i == 89 {
			check("append "+strconv.Itoa(i), tbl.Metadata(), version, true)
		}
	}
	if n := len(w.metas.snaps.tables[tbl.Metadata().TableUUID()].snaps.gz); n < 2 {
		t.Fatalf("%d kept chunks of the snapshot list, want several", n)
	}
	// Expiring the oldest snapshots changes the list's start: no kept chunk
	// of the old list may be reused.
	var oldest []int64
	for _, s := range tbl.Metadata().Snapshots()[:3] {
		oldest = append(oldest, s.SnapshotID)
	}
	meta, _, err = w.CommitTable(ctx, ident, nil, []table.Update{table.NewRemoveSnapshotsUpdate(oldest, false)})
	if err != nil {
		t.Fatal(err)
	}
	version++
	check("expired", meta, version, true)
	tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1000), nil)
	if err != nil {
		t.Fatal(err)
	}
	version++
	check("after expiry", tbl.Metadata(), version, true)
	// Turning the property off: the next file is still compressed, the one
	// after it plain.
	meta, _, err = w.CommitTable(ctx, ident, nil, []table.Update{table.NewSetPropertiesUpdate(iceberg.Properties{table.MetadataCompressionKey: "none"})})
	if err != nil {
		t.Fatal(err)
	}
	version++
	check("property unset", meta, version, true)
	tbl, err = AppendFiles(ctx, w, ident, writeFile(t, tbl, 1001), nil)
	if err != nil {
		t.Fatal(err)
	}
	version++
	check("plain again", tbl.Metadata(), version, false)
}

// TestGzipMetadataCreate creates a table with the property: its first file
// is compressed, and the version hint and listing find the newest version
// under either name.
func TestGzipMetadataCreate(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	w := openTestWarehouse(t, dir)
	mustCreateNamespace(t, w, "db")
	ident := table.Identifier{"db", "t"}
	tbl, err := w.CreateTable(ctx, ident, testSchema, catalog.WithProperties(iceberg.Properties{table.MetadataCompressionKey: "gzip"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(tbl.MetadataLocation(), "/v1.gz.metadata.json") {
		t.Fatalf("created at %s", tbl.MetadataLocation())
	}
	if _, err := AppendFiles(ctx, w, ident, writeFile(t, tbl, 1, 2), nil); err != nil {
		t.Fatal(err)
	}
	v, file, err := openTestWarehouse(t, dir).latestFile(ctx, "file://"+filepath.Join(dir, "db", "t"))
	if err != nil || v != 2 || !strings.HasSuffix(file, "/v2.gz.metadata.json") {
		t.Fatalf("latest %d %s %v", v, file, err)
	}
	hint, err := os.ReadFile(filepath.Join(dir, "db", "t", "metadata", "version-hint.text"))
	if err != nil || string(hint) != "2" {
		t.Fatalf("version hint %q %v", hint, err)
	}
}
