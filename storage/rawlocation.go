package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/twmb/avro/ocf"
)

// A table location is an opaque string, and Java Iceberg keeps it as the
// user gave it: a warehouse "/tmp/my warehouse" holds files named
// "file:/tmp/my warehouse/db/t/data/....parquet", and every engine (Hadoop's
// Path, PyIceberg, DuckDB) opens that very path. iceberg-go v0.7.0 parses
// the location as a URL and joins "data" and "metadata" to it, so the
// locations it makes for data files, manifests and manifest lists come out
// URL-escaped ("file:///tmp/my%20warehouse/..."), which names another
// folder.
//
// rawLocationIO undoes that for one table: a location that starts with the
// escaped form of the table's location is the same file under the location
// as given. It opens, creates and removes such files there, and rewrites
// the locations inside the Avro files (manifest lists, manifests) it writes,
// so that what lands on disk names the files where they are; the metadata
// JSON gets the same rewrite (rawMetadataJSON). Locations after the table's
// own (partition folders such as "name=it%27s") stay as they are.
type rawLocationIO struct {
	icebergio.IO
	escaped, raw string // the table location's two forms, without a trailing slash
}

// withRawLocation wraps fsys for the table at location, or returns it as
// it is when iceberg-go writes that location unchanged.
func withRawLocation(fsys icebergio.IO, location string) icebergio.IO {
	escaped, raw, ok := escapedLocation(location)
	if !ok {
		return fsys
	}
	return rawLocationIO{IO: fsys, escaped: escaped, raw: raw}
}

// escapedLocation is location as iceberg-go's location provider spells it
// when it joins a file name to it, and location itself; ok is false when
// the two are the same, or location is not a local path.
func escapedLocation(location string) (escaped, raw string, ok bool) {
	raw = strings.TrimSuffix(location, "/")
	if _, err := osPath(raw); err != nil {
		return "", "", false // S3 and other stores: keys are escaped by their own rules
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", false
	}
	escaped = strings.TrimSuffix(u.JoinPath("x").String(), "/x")
	return escaped, raw, escaped != raw
}

// name maps a location iceberg-go made to the one the table's files have.
func (r rawLocationIO) name(n string) string {
	if strings.HasPrefix(n, r.escaped+"/") {
		return r.raw + n[len(r.escaped):]
	}
	return n
}

func (r rawLocationIO) Open(name string) (icebergio.File, error) { return r.IO.Open(r.name(name)) }

func (r rawLocationIO) Remove(name string) error { return r.IO.Remove(r.name(name)) }

func (r rawLocationIO) ReadFile(name string) ([]byte, error) {
	if rf, ok := r.IO.(icebergio.ReadFileIO); ok {
		return rf.ReadFile(r.name(name))
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (r rawLocationIO) Create(name string) (icebergio.FileWriter, error) {
	w, ok := r.IO.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("create %s: file IO %T cannot write", name, r.IO)
	}
	f, err := w.Create(r.name(name))
	if err != nil || !strings.HasSuffix(name, ".avro") {
		return f, err
	}
	return &rawAvroWriter{io: r, target: f}, nil
}

func (r rawLocationIO) WriteFile(name string, p []byte) error {
	w, ok := r.IO.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("write %s: file IO %T cannot write", name, r.IO)
	}
	if strings.HasSuffix(name, ".avro") {
		fixed, err := r.rawAvro(p)
		if err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
		p = fixed
	}
	return w.WriteFile(r.name(name), p)
}

func (r rawLocationIO) WalkDir(root string, fn fs.WalkDirFunc) error {
	if l, ok := r.IO.(icebergio.ListableIO); ok {
		return l.WalkDir(r.name(root), fn)
	}
	return fmt.Errorf("walk %s: file IO %T cannot list", root, r.IO)
}

func (r rawLocationIO) Stat(name string) (fs.FileInfo, error) {
	if s, ok := r.IO.(icebergio.StatIO); ok {
		return s.Stat(r.name(name))
	}
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// rawAvroWriter holds an Avro file until it is closed, then writes it with
// its locations rewritten.
type rawAvroWriter struct {
	buf    bytes.Buffer
	io     rawLocationIO
	target icebergio.FileWriter
}

func (w *rawAvroWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *rawAvroWriter) ReadFrom(rd io.Reader) (int64, error) { return w.buf.ReadFrom(rd) }

func (w *rawAvroWriter) Close() error {
	data, err := w.io.rawAvro(w.buf.Bytes())
	if err != nil {
		w.target.Close()
		return err
	}
	if _, err := w.target.Write(data); err != nil {
		w.target.Close()
		return err
	}
	return w.target.Close()
}

// rawAvro rewrites every string of an Avro object container file that
// starts with the escaped location; data itself when none does.
func (r rawLocationIO) rawAvro(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, avroMagic) {
		return data, nil
	}
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("rewrite locations: %w", err)
	}
	defer rd.Close()
	var entries []map[string]any
	changed := false
	for {
		var e map[string]any
		if err := rd.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("rewrite locations: %w", err)
		}
		changed = r.rawStrings(e) || changed
		entries = append(entries, e)
	}
	if !changed {
		return data, nil
	}
	return reencode(rd, rd.Schema(), entries)
}

// rawStrings rewrites the locations among v's strings in place.
func (r rawLocationIO) rawStrings(v any) bool {
	changed := false
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok {
				if m := r.name(s); m != s {
					v[k], changed = m, true
				}
				continue
			}
			changed = r.rawStrings(x) || changed
		}
	case []any:
		for i, x := range v {
			if s, ok := x.(string); ok {
				if m := r.name(s); m != s {
					v[i], changed = m, true
				}
				continue
			}
			changed = r.rawStrings(x) || changed
		}
	}
	return changed
}

// rawMetadataJSON rewrites the locations iceberg-go escaped (the manifest
// lists of snapshots, statistics files) in a table's metadata JSON.
func rawMetadataJSON(data []byte, location string) ([]byte, error) {
	escaped, raw, ok := escapedLocation(location)
	if !ok {
		return data, nil
	}
	quoted, err := json.Marshal(raw + "/")
	if err != nil {
		return nil, err
	}
	return bytes.ReplaceAll(data, []byte(`"`+escaped+"/"), quoted[:len(quoted)-1]), nil
}
