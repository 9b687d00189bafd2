package s3serve

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/icesql/icesql/storage"
	"github.com/icesql/icesql/storage/sigv4auth"
)

// TestPutDurability: a table's bulk files (.parquet, .avro, ...) are
// answered without waiting for their sync, and every other PUT, a
// metadata file or any If-None-Match: * create, waits for the syncs
// started before it: after a background sync failed (its data may be
// lost) such PUTs fail and create nothing, while a server without
// background syncs syncs every PUT itself.
func TestPutDurability(t *testing.T) {
	root := t.TempDir()
	s, err := New(root, "warehouse", sigv4auth.New(nil, "s3"))
	if err != nil {
		t.Fatal(err)
	}
	var body string
	put := func(key, content string, header ...string) int {
		r := httptest.NewRequest(http.MethodPut, "/warehouse/"+key, strings.NewReader(content))
		r.RemoteAddr = "127.0.0.1:1"
		for i := 0; i+1 < len(header); i += 2 {
			r.Header.Set(header[i], header[i+1])
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		body = w.Body.String()
		return w.Code
	}
	exists := func(key string) bool {
		_, err := os.Stat(filepath.Join(root, filepath.FromSlash(key)))
		return err == nil
	}
	for _, key := range []string{"db/t/data/a.parquet", "db/t/metadata/m.avro", "db/t/metadata/v1.metadata.json", "notes.txt"} {
		if code := put(key, "content"); code != http.StatusOK || !exists(key) {
			t.Fatalf("PUT %s: %d", key, code)
		}
	}
	if err := s.syncs.Wait(); err != nil {
		t.Fatal(err)
	}

	// A background sync that fails: its file is closed under it.
	f, err := os.CreateTemp(t.TempDir(), "lost")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	s.syncs.Start(f, filepath.Dir(f.Name()))

	if code := put("db/t/data/b.parquet", "rows"); code != http.StatusOK || !exists("db/t/data/b.parquet") {
		t.Errorf("a data file PUT after a failed sync: %d; it does not wait for syncs", code)
	}
	for _, c := range []struct {
		key    string
		header []string
	}{
		{"db/t/metadata/v2.metadata.json", nil},
		{"db/t/metadata/v3.metadata.json", []string{"If-None-Match", "*"}},
		{"db/t/data/c.parquet", []string{"If-None-Match", "*"}},
		{"notes2.txt", nil},
	} {
		if code := put(c.key, "{}", c.header...); code != http.StatusInternalServerError || exists(c.key) || !strings.Contains(body, storage.ErrSyncFailed.Error()) {
			t.Errorf("PUT %s %v after a failed sync: %d %s (created: %v), want 500 with the sync failure and nothing created", c.key, c.header, code, body, exists(c.key))
		}
	}

	// Without background syncs every PUT syncs itself.
	s.syncs = nil
	if code := put("db/t/data/d.parquet", "rows"); code != http.StatusOK || !exists("db/t/data/d.parquet") {
		t.Errorf("PUT without background syncs: %d", code)
	}
}
