package storage

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLocationsAreOpaque checks that a location names the file whose path is
// the location's text, percent signs, '?', '#' and '+' included, as in Java
// Iceberg: Spark writes the partition value it's under the folder
// "name=it%27s", and that folder is what a reader must open.
func TestLocationsAreOpaque(t *testing.T) {
	for _, tc := range []struct{ location, path string }{
		{"file:///wh/t/data/name=it%27s/f.parquet", "/wh/t/data/name=it%27s/f.parquet"},
		{"file:/wh/t/data/name=50%25/f.parquet", "/wh/t/data/name=50%25/f.parquet"}, // Java's form
		{"file://localhost/wh/name=q%3Fu%23e/f", "/wh/name=q%3Fu%23e/f"},
		{"file:///wh/name=q?u#e&r+y/f", "/wh/name=q?u#e&r+y/f"},
		{"file:///my wh/t", "/my wh/t"},
		{"/plain/name=a%2Fb", "/plain/name=a%2Fb"},
	} {
		got, err := osPath(tc.location)
		if err != nil || got != filepath.FromSlash(tc.path) {
			t.Errorf("osPath(%q) = %q, %v; want %q", tc.location, got, err, tc.path)
		}
	}
	for _, bad := range []string{"file://otherhost/x", "s3://bucket/key", "http://h/x"} {
		if p, err := osPath(bad); err == nil {
			t.Errorf("osPath(%q) = %q, want an error", bad, p)
		}
	}
	for _, tc := range []struct{ location, bucket, key string }{
		{"s3://b/t/data/name=it%27s/f.parquet", "b", "t/data/name=it%27s/f.parquet"},
		{"s3a://b/k?x#y", "b", "k?x#y"},
	} {
		bucket, key, err := splitS3(tc.location)
		if err != nil || bucket != tc.bucket || key != tc.key {
			t.Errorf("splitS3(%q) = %q, %q, %v; want %q, %q", tc.location, bucket, key, err, tc.bucket, tc.key)
		}
	}

	// The iceberg-go IO of local tables writes and reads the same file.
	dir := t.TempDir()
	loc, err := LocalLocation(filepath.Join(dir, "it's 50%"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(loc, "%27") || strings.Contains(loc, "%20") {
		t.Errorf("LocalLocation escaped the path: %s", loc)
	}
	name := loc + "/name=it%27s/name=q%3Fu%23e%26r%2By/f.bin"
	fsys := LocalStore{}.IO().(interface {
		WriteFile(string, []byte) error
	})
	if err := fsys.WriteFile(name, []byte("x")); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(dir, "it's 50%", "name=it%27s", "name=q%3Fu%23e%26r%2By", "f.bin")
	if _, err := os.Stat(want); err != nil {
		t.Fatalf("the file is not where its location says: %v", err)
	}
	f, err := LocalStore{}.IO().Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b, err := io.ReadAll(f); err != nil || string(b) != "x" {
		t.Fatalf("read back %q, %v", b, err)
	}
}
