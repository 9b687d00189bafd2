package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	icebergio "github.com/apache/iceberg-go/io"
	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// iceberg-go v0.7.0 encodes a partition field's bound in the manifest list
// from the literal's binary form, and the binary form of the empty string
// (and of an empty binary) is a nil slice, which its Avro encoder writes as
// null. A manifest whose smallest partition value was the empty string got
// lower_bound null, which every reader (Java, PyIceberg, iceberg-go) takes
// as "no non-null value here" and skips the manifest: WHERE name = 'abc'
// found nothing. Java writes an empty value.
//
// manifestListWriter holds a manifest list iceberg-go writes until it is
// closed and then writes it with those bounds empty instead of null. Only a
// bound that must exist is filled: the lower one when the upper one is set
// (a value exists, so the smallest is the empty one), or both when the
// manifest's entries hold a non-null value for the field (all of them are
// then empty). Every other byte of the list is decoded and encoded again
// with the file's own schema text, metadata and codec. Lists written before
// carried forward into a new snapshot get the same repair.
type manifestListWriter struct {
	buf    bytes.Buffer
	fsys   icebergio.IO // reads the manifests the list names
	target icebergio.FileWriter
}

// isManifestList tells the manifest lists iceberg-go writes by their name,
// snap-<snapshot id>-<attempt>-<uuid>.avro (Java's are named alike).
func isManifestList(location string) bool {
	base := path.Base(location)
	return strings.HasPrefix(base, "snap-") && strings.HasSuffix(base, ".avro")
}

func (w *manifestListWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *manifestListWriter) ReadFrom(r io.Reader) (int64, error) { return w.buf.ReadFrom(r) }

func (w *manifestListWriter) Close() error {
	data, err := fillEmptyBounds(w.fsys, w.buf.Bytes())
	if err != nil {
		w.target.Close()
		return fmt.Errorf("write manifest list: %w", err)
	}
	if _, err := w.target.Write(data); err != nil {
		w.target.Close()
		return err
	}
	return w.target.Close()
}

// fillEmptyBounds returns the manifest list data with the bounds described
// above filled in; data itself when none is missing.
func fillEmptyBounds(fsys icebergio.IO, data []byte) ([]byte, error) {
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	var entries []map[string]any
	changed := false
	for {
		var entry map[string]any
		if err := rd.Decode(&entry); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, err
		}
		filled, err := fillEntryBounds(fsys, entry)
		if err != nil {
			return nil, err
		}
		changed = changed || filled
		entries = append(entries, entry)
	}
	if !changed {
		return data, nil
	}
	return reencode(rd, rd.Schema(), entries)
}

// reencode writes entries as an Avro object container file with schema and
// rd's metadata and codec.
func reencode(rd *ocf.Reader, schema *avro.Schema, entries []map[string]any) ([]byte, error) {
	meta := map[string][]byte{}
	var codec ocf.Codec
	for k, v := range rd.Metadata() {
		switch k {
		case "avro.schema":
		case "avro.codec":
			c, err := avroCodec(string(v))
			if err != nil {
				return nil, err
			}
			codec = c
		default:
			meta[k] = v
		}
	}
	opts := []ocf.WriterOpt{ocf.WithMetadata(meta)}
	if codec != nil {
		opts = append(opts, ocf.WithCodec(codec))
	}
	var out bytes.Buffer
	wr, err := ocf.NewWriter(&out, schema, opts...)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if err := wr.Encode(e); err != nil {
			return nil, err
		}
	}
	if err := wr.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// fillEntryBounds fills the missing bounds of one manifest list entry.
func fillEntryBounds(fsys icebergio.IO, entry map[string]any) (bool, error) {
	parts, _ := entry["partitions"].([]any)
	changed := false
	var present map[int]bool // partition fields with a non-null value, read on demand
	for i, p := range parts {
		summary, ok := p.(map[string]any)
		if !ok || summary["lower_bound"] != nil {
			continue
		}
		if summary["upper_bound"] != nil {
			summary["lower_bound"] = []byte{}
			changed = true
			continue
		}
		if present == nil {
			manifest, _ := entry["manifest_path"].(string)
			var err error
			if present, err = nonNullPartitionFields(fsys, manifest); err != nil {
				return false, err
			}
		}
		if present[i] {
			summary["lower_bound"], summary["upper_bound"] = []byte{}, []byte{}
			changed = true
		}
	}
	return changed, nil
}

// nonNullPartitionFields reads a manifest and says which of its partition
// fields (by position in the spec) hold a non-null value in some entry.
func nonNullPartitionFields(fsys icebergio.IO, manifest string) (map[int]bool, error) {
	f, err := fsys.Open(manifest)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", manifest, err)
	}
	defer f.Close()
	rd, err := ocf.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("read manifest %s: %w", manifest, err)
	}
	defer rd.Close()
	var spec []struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(rd.Metadata()["partition-spec"], &spec); err != nil {
		return nil, fmt.Errorf("manifest %s: partition-spec: %w", manifest, err)
	}
	present := map[int]bool{}
	for {
		var entry map[string]any
		if err := rd.Decode(&entry); err != nil {
			if errors.Is(err, io.EOF) {
				return present, nil
			}
			return nil, fmt.Errorf("read manifest %s: %w", manifest, err)
		}
		df, _ := entry["data_file"].(map[string]any)
		partition, _ := df["partition"].(map[string]any)
		for i, field := range spec {
			if partition[field.Name] != nil {
				present[i] = true
			}
		}
	}
}
