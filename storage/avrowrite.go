package storage

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/apache/iceberg-go"
	"github.com/twmb/avro/ocf"
)

// The fast append (fastappend.go) writes its manifest and manifest list
// itself. iceberg-go's writers build and parse their Avro schema for every
// file and allocate a new deflate compressor for every block (about a
// megabyte each), which was half of a single-row INSERT's CPU. Here the
// schema text is iceberg-go's own, asked for once per format version and
// partition type (avroSchemas), records are encoded by walking that schema
// field by field, and compressors are pooled.

// avroType is a node of an Avro schema as parsed from its JSON text: a
// primitive name (string), a union ([]any) or a complex type (map).
type avroType = any

// avroField is a field of an Avro record schema.
type avroField struct {
	name string
	typ  avroType
}

// recordFields returns the fields of a record schema node.
func recordFields(t avroType) ([]avroField, error) {
	m, ok := t.(map[string]any)
	if !ok || m["type"] != "record" {
		return nil, fmt.Errorf("avro: %v is not a record", t)
	}
	list, _ := m["fields"].([]any)
	out := make([]avroField, 0, len(list))
	for _, f := range list {
		fm, ok := f.(map[string]any)
		if !ok {
			return nil, errors.New("avro: malformed record field")
		}
		name, _ := fm["name"].(string)
		out = append(out, avroField{name: name, typ: fm["type"]})
	}
	return out, nil
}

// avroEnc appends Avro's binary encoding of values to buf.
type avroEnc struct{ buf []byte }

func (e *avroEnc) long(v int64) {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		e.buf = append(e.buf, byte(u)|0x80)
		u >>= 7
	}
	e.buf = append(e.buf, byte(u))
}

func (e *avroEnc) bytes(b []byte) {
	e.long(int64(len(b)))
	e.buf = append(e.buf, b...)
}

func (e *avroEnc) str(s string) {
	e.long(int64(len(s)))
	e.buf = append(e.buf, s...)
}

// value encodes v as schema node t says. The Go values it takes are those
// the manifest writers hand it: nil (only in a union with null), int,
// int32, int64, bool, string, []byte, []int, []int64, map[int]int64,
// map[int][]byte, []iceberg.FieldSummary and recordValue.
func (e *avroEnc) value(t avroType, v any) error {
	switch t := t.(type) {
	case []any: // union: null or one other branch
		for i, branch := range t {
			if (branch == "null") == (v == nil) {
				e.long(int64(i))
				if v == nil {
					return nil
				}
				return e.value(branch, v)
			}
		}
		return fmt.Errorf("avro: no union branch of %v for %T", t, v)
	case string:
		return e.primitive(t, v)
	case map[string]any:
		switch t["type"] {
		case "array":
			return e.array(t, v)
		case "record":
			rv, ok := v.(recordValue)
			if !ok {
				return fmt.Errorf("avro: record %v for %T", t["name"], v)
			}
			fields, err := recordFields(t)
			if err != nil {
				return err
			}
			for _, f := range fields {
				fv, err := rv(f.name)
				if err != nil {
					return err
				}
				if err := e.value(f.typ, fv); err != nil {
					return fmt.Errorf("%s: %w", f.name, err)
				}
			}
			return nil
		case "int", "long", "string", "bytes", "boolean":
			if _, logical := t["logicalType"]; !logical {
				return e.primitive(t["type"].(string), v)
			}
		}
	}
	return fmt.Errorf("avro: unsupported schema %v", t)
}

// recordValue gives a record's field values by name; an unknown name is an
// error, so that a schema with fields this code does not know fails instead
// of writing wrong values.
type recordValue func(name string) (any, error)

func (e *avroEnc) primitive(name string, v any) error {
	switch name {
	case "int", "long":
		switch n := v.(type) {
		case int:
			e.long(int64(n))
		case int32:
			e.long(int64(n))
		case int64:
			e.long(n)
		default:
			return fmt.Errorf("avro: %s for %T", name, v)
		}
	case "string":
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("avro: string for %T", v)
		}
		e.str(s)
	case "bytes":
		b, ok := v.([]byte)
		if !ok {
			return fmt.Errorf("avro: bytes for %T", v)
		}
		e.bytes(b)
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("avro: boolean for %T", v)
		}
		if b {
			e.buf = append(e.buf, 1)
		} else {
			e.buf = append(e.buf, 0)
		}
	default:
		return fmt.Errorf("avro: unsupported type %s", name)
	}
	return nil
}

// array encodes v, a list or an Iceberg map (an array of key/value
// records), as one block.
func (e *avroEnc) array(t map[string]any, v any) error {
	items := t["items"]
	n := 0
	var each func(i int) error
	switch v := v.(type) {
	case []int:
		n, each = len(v), func(i int) error { return e.value(items, v[i]) }
	case []int64:
		n, each = len(v), func(i int) error { return e.value(items, v[i]) }
	case []iceberg.FieldSummary:
		n, each = len(v), func(i int) error { return e.value(items, fieldSummaryRecord(v[i])) }
	case map[int]int64:
		keys := slices.Sorted(maps.Keys(v))
		n, each = len(keys), func(i int) error { return e.value(items, keyValueRecord(keys[i], v[keys[i]])) }
	case map[int][]byte:
		keys := slices.Sorted(maps.Keys(v))
		n, each = len(keys), func(i int) error { return e.value(items, keyValueRecord(keys[i], v[keys[i]])) }
	default:
		return fmt.Errorf("avro: array for %T", v)
	}
	if n > 0 {
		e.long(int64(n))
		for i := range n {
			if err := each(i); err != nil {
				return err
			}
		}
	}
	e.long(0)
	return nil
}

func keyValueRecord(k int, v any) recordValue {
	return func(name string) (any, error) {
		switch name {
		case "key":
			return k, nil
		case "value":
			return v, nil
		}
		return nil, fmt.Errorf("avro: map entry field %q", name)
	}
}

func fieldSummaryRecord(s iceberg.FieldSummary) recordValue {
	return func(name string) (any, error) {
		switch name {
		case "contains_null":
			return s.ContainsNull, nil
		case "contains_nan":
			if s.ContainsNaN == nil {
				return nil, nil
			}
			return *s.ContainsNaN, nil
		case "lower_bound":
			return optionalBytes(s.LowerBound), nil
		case "upper_bound":
			return optionalBytes(s.UpperBound), nil
		}
		return nil, fmt.Errorf("avro: partition field summary field %q", name)
	}
}

func optionalBytes(b *[]byte) any {
	if b == nil {
		return nil
	}
	return *b
}

// deflaters are pooled raw-deflate compressors: each holds about a
// megabyte of state.
var deflaters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(io.Discard, flate.DefaultCompression)
	return w
}}

// smallBlock is the size of records below which a file is not compressed:
// deflate's Huffman tables cost more than a small commit's whole manifest
// (a third of a millisecond), to save a few hundred bytes of a file whose
// schema in its header is larger. Avro requires every reader to read
// uncompressed ("null") blocks.
const smallBlock = 4 << 10

// ocfFile returns an Avro object container file with the given metadata
// (avro.schema among it) holding count records, whose encodings are
// concatenated in records, in one block: deflated unless it is small.
func ocfFile(meta map[string][]byte, count int, records []byte) ([]byte, error) {
	var sync [16]byte
	for i := range sync {
		sync[i] = byte(rand.N(256))
	}
	codec := "deflate"
	if len(records) < smallBlock {
		codec = "null"
	}
	meta = maps.Clone(meta)
	meta["avro.codec"] = []byte(codec)
	e := avroEnc{buf: make([]byte, 0, 1024+len(records))}
	e.buf = append(e.buf, 'O', 'b', 'j', 1)
	e.long(int64(len(meta)))
	for _, k := range slices.Sorted(maps.Keys(meta)) {
		e.str(k)
		e.bytes(meta[k])
	}
	e.long(0)
	e.buf = append(e.buf, sync[:]...)
	if count == 0 {
		return e.buf, nil
	}
	if codec == "null" {
		e.long(int64(count))
		e.bytes(records)
		e.buf = append(e.buf, sync[:]...)
		return e.buf, nil
	}
	var packed bytes.Buffer
	z := deflaters.Get().(*flate.Writer)
	z.Reset(&packed)
	_, err := z.Write(records)
	if err == nil {
		err = z.Close()
	}
	deflaters.Put(z)
	if err != nil {
		return nil, err
	}
	e.long(int64(count))
	e.bytes(packed.Bytes())
	e.buf = append(e.buf, sync[:]...)
	return e.buf, nil
}

// avroSchemas keeps the Avro schemas iceberg-go writes manifests and
// manifest lists with, parsed, by format version and partition type.
type avroSchemas struct {
	mu sync.Mutex
	m  map[string]parsedSchema
}

type parsedSchema struct {
	text string
	root avroType
}

// get returns the schema under key, making it with make (which returns the
// metadata of an Avro file iceberg-go wrote) the first time.
func (c *avroSchemas) get(key string, make func() (map[string][]byte, error)) (parsedSchema, error) {
	c.mu.Lock()
	s, ok := c.m[key]
	c.mu.Unlock()
	if ok {
		return s, nil
	}
	meta, err := make()
	if err != nil {
		return parsedSchema{}, err
	}
	text := meta["avro.schema"]
	var root avroType
	if err := json.Unmarshal(text, &root); err != nil {
		return parsedSchema{}, fmt.Errorf("iceberg-go's Avro schema: %w", err)
	}
	s = parsedSchema{text: string(text), root: root}
	c.mu.Lock()
	if c.m == nil || len(c.m) > 256 {
		c.m = map[string]parsedSchema{}
	}
	c.m[key] = s
	c.mu.Unlock()
	return s, nil
}

// fileMetadata reads the metadata of an Avro object container file.
func fileMetadata(data []byte) (map[string][]byte, error) {
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	return rd.Metadata(), nil
}
