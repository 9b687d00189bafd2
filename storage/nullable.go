package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/twmb/avro"
	"github.com/twmb/avro/ocf"
)

// BigQuery writes manifest lists and manifests whose every field is a
// nullable union ["null", T], the fields the Iceberg spec makes required
// (manifest_path, partition_spec_id, status, data_file, file_path,
// record_count, ...) included. Avro's schema resolution lets a reader read
// a union writer into a plain field as long as no value is null, and Java
// Iceberg reads such files; iceberg-go v0.7.0 refuses them ("manifest_path:
// reader string vs writer null"). requireFields hands iceberg-go the file
// re-encoded with those fields plain, the values unchanged; a file where a
// required field does hold a null is passed on as it is (iceberg-go then
// reports it).

// requiredFields are, per Avro record name of the spec's manifest and
// manifest list schemas, the fields the spec requires. The key/value
// records of a map (an array of records) are required, with both fields.
var requiredFields = map[string][]string{
	"manifest_file": {"manifest_path", "manifest_length", "partition_spec_id", "content", "sequence_number",
		"min_sequence_number", "added_snapshot_id", "added_files_count", "existing_files_count", "deleted_files_count",
		"added_rows_count", "existing_rows_count", "deleted_rows_count"},
	"manifest_entry": {"status", "data_file"},
	"data_file":      {"content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes"},
	"r2":             {"content", "file_path", "file_format", "partition", "record_count", "file_size_in_bytes"},
}

// requireFields returns data with the required fields of a manifest or
// manifest list made plain, and whether it changed anything.
func requireFields(data []byte) ([]byte, bool, error) {
	h, err := readAvroHeader(data)
	if err != nil {
		return nil, false, err
	}
	var schema any
	if err := json.Unmarshal(h.meta["avro.schema"], &schema); err != nil {
		return nil, false, nil // not JSON: iceberg-go reports it
	}
	rec, _ := schema.(map[string]any)
	if _, ok := requiredFields[fmt.Sprint(rec["name"])]; !ok {
		return nil, false, nil
	}
	if !unwrapRequired(schema, false) {
		return nil, false, nil
	}
	text, err := json.Marshal(schema)
	if err != nil {
		return nil, false, err
	}
	plain, err := avro.Parse(string(text))
	if err != nil {
		return nil, false, fmt.Errorf("required fields made plain: %w", err)
	}
	rd, err := ocf.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, false, err
	}
	defer rd.Close()
	var entries []map[string]any
	for {
		var e map[string]any
		if err := rd.Decode(&e); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, false, err
		}
		// An unpartitioned table's partition is an empty record, which
		// decodes as nil.
		if df, ok := e["data_file"].(map[string]any); ok && df["partition"] == nil {
			df["partition"] = map[string]any{}
		}
		entries = append(entries, e)
	}
	out, err := reencode(rd, plain, entries)
	if err != nil {
		return nil, false, nil // a required value is null: leave the file as it is
	}
	return out, true, nil
}

// unwrapRequired replaces, in an Avro schema parsed as JSON, each nullable
// union in a required position by its other branch; inMap says node is a
// map's key/value record. It reports whether it changed anything.
func unwrapRequired(node any, inMap bool) bool {
	changed := false
	switch n := node.(type) {
	case []any:
		for _, b := range n {
			changed = unwrapRequired(b, false) || changed
		}
	case map[string]any:
		switch n["type"] {
		case "record":
			required := map[string]bool{}
			for _, f := range requiredFields[fmt.Sprint(n["name"])] {
				required[f] = true
			}
			fields, _ := n["fields"].([]any)
			for _, f := range fields {
				field, _ := f.(map[string]any)
				if field == nil {
					continue
				}
				name := fmt.Sprint(field["name"])
				if required[name] || inMap && (name == "key" || name == "value") {
					if plain, ok := nonNull(field["type"]); ok {
						field["type"], changed = plain, true
					}
				}
				changed = unwrapRequired(field["type"], false) || changed
			}
		case "array":
			if plain, ok := nonNull(n["items"]); ok {
				n["items"], changed = plain, true
			}
			changed = unwrapRequired(n["items"], n["logicalType"] == "map") || changed
		}
	}
	return changed
}

// nonNull is the other branch of a two-branch union with "null".
func nonNull(t any) (any, bool) {
	u, ok := t.([]any)
	if !ok || len(u) != 2 {
		return nil, false
	}
	switch {
	case u[0] == "null":
		return u[1], true
	case u[1] == "null":
		return u[0], true
	}
	return nil, false
}
