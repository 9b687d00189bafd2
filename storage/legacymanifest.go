package storage

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/twmb/avro/ocf"
)

// Some writers (Hive and Impala through older Iceberg Java releases, as in
// Impala's test tables) wrote v2 manifests whose Avro header holds only the
// schema: no "format-version", no "content". The spec makes both required
// for v2 manifests, and iceberg-go v0.7.0 enforces it (manifest.go,
// ReadManifest): without "format-version" it reads the file as a v1
// manifest, and then refuses a delete manifest with "manifest file's
// 'content' metadata indicates "data", but entry from manifest list
// indicates "deletes"". Java Iceberg reads such tables because it trusts the
// manifest list, not the manifest's header.
//
// manifestRepairIO works around it without touching the metadata: when an
// Avro file without "format-version" turns out to be a manifest, the header
// it hands to iceberg-go gains the two keys, derived from the file itself:
// the format version from its entry schema (only v2+ entries have
// sequence_number) and the content from its first entry's data_file.content
// (0 data, 1 position deletes, 2 equality deletes). The blocks after the
// header are passed on byte for byte. Files with a "format-version" are
// passed through unread.
type manifestRepairIO struct {
	icebergio.IO
}

// repairManifests wraps a table's file IO: it repairs legacy manifests as
// they are read, fills the empty partition bounds iceberg-go leaves null in
// the manifest lists it writes (emptybounds.go), and writes Parquet integer
// columns without arrow-go's INT annotations, as Java does (plainint.go).
func repairManifests(fsys icebergio.IO) icebergio.IO { return manifestRepairIO{IO: fsys} }

var (
	_ icebergio.ReadFileIO  = manifestRepairIO{}
	_ icebergio.WriteFileIO = manifestRepairIO{}
)

func (m manifestRepairIO) Open(name string) (icebergio.File, error) {
	f, err := m.IO.Open(name)
	if err != nil || !strings.HasSuffix(name, ".avro") {
		return f, err
	}
	data, repaired, err := repairAvro(f)
	if err != nil || !repaired {
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			f.Close()
			return nil, serr
		}
		return f, nil // not a legacy manifest: iceberg-go reports what is wrong with it
	}
	f.Close()
	return &memFile{Reader: bytes.NewReader(data), name: path.Base(name), size: int64(len(data))}, nil
}

func (m manifestRepairIO) ReadFile(name string) ([]byte, error) {
	f, err := m.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

func (m manifestRepairIO) Create(name string) (icebergio.FileWriter, error) {
	w, ok := m.IO.(icebergio.WriteFileIO)
	if !ok {
		return nil, fmt.Errorf("create %s: file IO %T cannot write", name, m.IO)
	}
	f, err := w.Create(name)
	switch {
	case err != nil:
		return nil, err
	case isManifestList(name):
		return &manifestListWriter{fsys: m.IO, target: f}, nil // emptybounds.go
	case isParquet(name):
		return &plainIntWriter{target: f}, nil // plainint.go
	}
	return f, nil
}

func (m manifestRepairIO) WriteFile(name string, p []byte) error {
	w, ok := m.IO.(icebergio.WriteFileIO)
	if !ok {
		return fmt.Errorf("write %s: file IO %T cannot write", name, m.IO)
	}
	if isManifestList(name) {
		fixed, err := fillEmptyBounds(m.IO, p)
		if err != nil {
			return fmt.Errorf("write manifest list %s: %w", name, err)
		}
		p = fixed
	}
	return w.WriteFile(name, p)
}

// avroHeader is the header of an Avro object container file.
type avroHeader struct {
	meta map[string][]byte
	keys []string // in file order
	end  int      // offset of the sync marker that ends the header
}

var avroMagic = []byte{'O', 'b', 'j', 1}

// readAvroHeader parses the header at the start of data.
func readAvroHeader(data []byte) (avroHeader, error) {
	if !bytes.HasPrefix(data, avroMagic) {
		return avroHeader{}, errors.New("not an Avro object container file")
	}
	h := avroHeader{meta: map[string][]byte{}}
	pos := len(avroMagic)
	long := func() (int64, error) {
		v, n := binary.Varint(data[pos:])
		if n <= 0 {
			return 0, errors.New("truncated Avro header")
		}
		pos += n
		return v, nil
	}
	bytesVal := func() ([]byte, error) {
		n, err := long()
		if err != nil || n < 0 || int64(len(data)-pos) < n {
			return nil, errors.New("truncated Avro header")
		}
		b := data[pos : pos+int(n)]
		pos += int(n)
		return b, nil
	}
	for {
		count, err := long()
		if err != nil {
			return avroHeader{}, err
		}
		if count == 0 {
			break
		}
		if count < 0 {
			count = -count
			if _, err := long(); err != nil { // the block's size in bytes
				return avroHeader{}, err
			}
		}
		for ; count > 0; count-- {
			k, err := bytesVal()
			if err != nil {
				return avroHeader{}, err
			}
			v, err := bytesVal()
			if err != nil {
				return avroHeader{}, err
			}
			h.keys = append(h.keys, string(k))
			h.meta[string(k)] = v
		}
	}
	if len(data)-pos < 16 {
		return avroHeader{}, errors.New("truncated Avro header")
	}
	h.end = pos
	return h, nil
}

// encode writes the header with its metadata as one map block.
func (h avroHeader) encode() []byte {
	var b bytes.Buffer
	b.Write(avroMagic)
	var buf [binary.MaxVarintLen64]byte
	long := func(v int64) { b.Write(buf[:binary.PutVarint(buf[:], v)]) }
	long(int64(len(h.keys)))
	for _, k := range h.keys {
		long(int64(len(k)))
		b.WriteString(k)
		long(int64(len(h.meta[k])))
		b.Write(h.meta[k])
	}
	long(0)
	return b.Bytes()
}

// repairAvro reads f and, if it is a manifest list or manifest with
// nullable required fields (nullable.go) or a manifest whose header lacks
// "format-version", returns it repaired.
func repairAvro(f icebergio.File) ([]byte, bool, error) {
	head := make([]byte, 4)
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head, avroMagic) {
		return nil, false, err
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, false, err
	}
	plain, required, err := requireFields(data)
	if err != nil {
		return nil, false, err
	}
	if required {
		data = plain
	}
	changed := required
	for _, repair := range []func([]byte) ([]byte, bool, error){repairManifest, upperFileFormats} {
		fixed, repaired, err := repair(data)
		if err != nil {
			return nil, false, err
		}
		if repaired {
			data, changed = fixed, true
		}
	}
	return data, changed, nil
}

// DuckDB writes a data file's file_format in lower case ("parquet"); the
// spec's names, which Java and PyIceberg compare without regard to case,
// are upper case, and iceberg-go compares with "PARQUET" exactly, so such
// a file was "not Parquet" and its table unreadable. upperFileFormats
// returns data, if it is a manifest with a format named in lower case,
// with the names upper case. Only a manifest whose (decompressed) blocks
// hold such a name is decoded and written again, with its own codec.
func upperFileFormats(data []byte) ([]byte, bool, error) {
	h, err := readAvroHeader(data)
	if err != nil {
		return nil, false, err
	}
	if _, ok := manifestVersion(h.meta["avro.schema"]); !ok {
		return nil, false, nil
	}
	body, err := avroBlocks(data, h)
	if err != nil {
		return nil, false, err
	}
	found := false
	var buf [binary.MaxVarintLen64]byte
	for _, name := range []string{"parquet", "avro", "orc", "puffin"} {
		// an Avro string: its length as a zig-zag varint, then its bytes
		n := binary.PutVarint(buf[:], int64(len(name)))
		if bytes.Contains(body, append(buf[:n:n], name...)) {
			found = true
		}
	}
	if !found {
		return nil, false, nil
	}
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, false, fmt.Errorf("read manifest: %w", err)
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
			return nil, false, fmt.Errorf("read manifest entry: %w", err)
		}
		if df, ok := e["data_file"].(map[string]any); ok {
			if f, ok := df["file_format"].(string); ok && strings.ToUpper(f) != f {
				df["file_format"], changed = strings.ToUpper(f), true
			}
		}
		entries = append(entries, e)
	}
	if !changed {
		return nil, false, nil
	}
	out, err := reencode(rd, rd.Schema(), entries)
	if err != nil {
		return nil, false, fmt.Errorf("rewrite manifest: %w", err)
	}
	return out, true, nil
}

// avroCodec is the codec of an Avro file's "avro.codec": nil for none.
func avroCodec(name string) (ocf.Codec, error) {
	switch name {
	case "", "null":
		return nil, nil
	case "deflate":
		return ocf.DeflateCodec(-1), nil
	case "snappy":
		return ocf.SnappyCodec(), nil
	case "zstandard":
		return ocf.ZstdCodec(nil, nil)
	}
	return nil, fmt.Errorf("unknown Avro codec %q", name)
}

// avroBlocks is the content of the data blocks of the Avro file data (whose
// header is h), decompressed with its codec and concatenated.
func avroBlocks(data []byte, h avroHeader) ([]byte, error) {
	codec, err := avroCodec(string(h.meta["avro.codec"]))
	if err != nil || codec == nil {
		return data[h.end+16:], err
	}
	defer codec.Close()
	var out []byte
	pos := h.end + 16 // the header's sync marker
	for pos < len(data) {
		if _, n := binary.Varint(data[pos:]); n > 0 { // the block's count of objects
			pos += n
		} else {
			return nil, errors.New("truncated Avro block")
		}
		size, n := binary.Varint(data[pos:])
		if n <= 0 || size < 0 || int64(len(data)-pos-n) < size+16 {
			return nil, errors.New("truncated Avro block")
		}
		pos += n
		block, err := codec.Decompress(data[pos : pos+int(size)])
		if err != nil {
			return nil, fmt.Errorf("decompress Avro block (%s): %w", codec.Name(), err)
		}
		out = append(out, block...)
		pos += int(size) + 16 // the block and its sync marker
	}
	return out, nil
}

// repairManifest returns data, if it is a manifest whose header lacks
// "format-version", with the repaired header.
func repairManifest(data []byte) ([]byte, bool, error) {
	h, err := readAvroHeader(data)
	if err != nil {
		return nil, false, err
	}
	if _, ok := h.meta["format-version"]; ok {
		return nil, false, nil
	}
	version, isManifest := manifestVersion(h.meta["avro.schema"])
	if !isManifest {
		return nil, false, nil
	}
	content := "data"
	if version >= 2 {
		if content, err = firstEntryContent(data); err != nil {
			return nil, false, err
		}
	}
	h.meta["format-version"] = []byte(fmt.Sprint(version))
	h.keys = append(h.keys, "format-version")
	if _, ok := h.meta["content"]; !ok {
		h.meta["content"] = []byte(content)
		h.keys = append(h.keys, "content")
	}
	return append(h.encode(), data[h.end:]...), true, nil
}

// manifestVersion tells a manifest's entry schema from any other Avro
// schema, and a v2 entry (with sequence_number) from a v1 entry.
func manifestVersion(schema []byte) (int, bool) {
	var rec struct {
		Name   string `json:"name"`
		Fields []struct {
			Name string `json:"name"`
		} `json:"fields"`
	}
	if json.Unmarshal(schema, &rec) != nil || rec.Name != "manifest_entry" {
		return 0, false
	}
	version, hasDataFile := 1, false
	for _, f := range rec.Fields {
		switch f.Name {
		case "sequence_number":
			version = 2
		case "data_file":
			hasDataFile = true
		}
	}
	return version, hasDataFile
}

// firstEntryContent is "deletes" when the manifest's first entry is a
// delete file, else "data" (also for an empty manifest).
func firstEntryContent(data []byte) (string, error) {
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return "", fmt.Errorf("read legacy manifest: %w", err)
	}
	defer rd.Close()
	var entry map[string]any
	if err := rd.Decode(&entry); err != nil {
		if errors.Is(err, io.EOF) {
			return "data", nil
		}
		return "", fmt.Errorf("read legacy manifest entry: %w", err)
	}
	df, _ := entry["data_file"].(map[string]any)
	switch c := df["content"].(type) {
	case int32:
		if c != 0 {
			return "deletes", nil
		}
	case int64:
		if c != 0 {
			return "deletes", nil
		}
	case int:
		if c != 0 {
			return "deletes", nil
		}
	}
	return "data", nil
}

// memFile is a repaired manifest served from memory.
type memFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (fs.FileInfo, error) { return memInfo{name: f.name, size: f.size}, nil }

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
