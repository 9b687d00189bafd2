package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/twmb/avro/ocf"
)

// TestOCFFileReadsBack writes Avro container files of a few records (left
// uncompressed) and of many (deflated) with the fast append's encoder, and
// reads them back with an Avro library: the codec, the records and the
// metadata must all come back.
func TestOCFFileReadsBack(t *testing.T) {
	schema := `{"type":"record","name":"r","fields":[{"name":"a","type":"long"},{"name":"s","type":["null","string"]},` +
		`{"name":"m","type":["null",{"type":"array","logicalType":"map","items":{"type":"record","name":"kv","fields":[{"name":"key","type":"int"},{"name":"value","type":"bytes"}]}}]}]}`
	var root avroType
	if err := json.Unmarshal([]byte(schema), &root); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 2000} {
		var enc avroEnc
		for i := range n {
			rec := recordValue(func(name string) (any, error) {
				switch name {
				case "a":
					return int64(i - 1000), nil
				case "s":
					if i%3 == 0 {
						return nil, nil
					}
					return fmt.Sprint("row ", i), nil
				case "m":
					return map[int][]byte{2: {byte(i)}, 1: {}}, nil
				}
				return nil, fmt.Errorf("field %q", name)
			})
			if err := enc.value(root, rec); err != nil {
				t.Fatal(err)
			}
		}
		data, err := ocfFile(map[string][]byte{"avro.schema": []byte(schema), "format-version": []byte("2")}, n, enc.buf)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := ocf.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		wantCodec := "deflate"
		if n < 10 {
			wantCodec = "null"
		}
		if got := string(rd.Metadata()["avro.codec"]); got != wantCodec || string(rd.Metadata()["format-version"]) != "2" {
			t.Errorf("%d records: codec %q, format-version %q", n, got, rd.Metadata()["format-version"])
		}
		for i := 0; ; i++ {
			var got map[string]any
			if err := rd.Decode(&got); err != nil {
				if !errors.Is(err, io.EOF) {
					t.Fatal(err)
				}
				if i != n {
					t.Errorf("read %d records of %d", i, n)
				}
				break
			}
			want := fmt.Sprint(int64(i - 1000))
			if fmt.Sprint(got["a"]) != want || (i%3 == 0) != (got["s"] == nil) || fmt.Sprint(got["m"]) != fmt.Sprintf("[map[key:1 value:[]] map[key:2 value:[%d]]]", byte(i)) {
				t.Fatalf("record %d of %d: %v", i, n, got)
			}
		}
		rd.Close()
	}
}
