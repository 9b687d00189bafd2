package planner

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// TableOptions are the table settings of a Spark CREATE TABLE that have no
// MySQL syntax. The Parser carries them to the engine in the MySQL table
// COMMENT (see EncodeTableOptions), the one free-form table option that
// go-mysql-server hands to CreateTable.
type TableOptions struct {
	// Properties are the TBLPROPERTIES, values as written (numbers and
	// booleans in their literal spelling).
	Properties map[string]string `json:"properties,omitempty"`
	// Comment is the table comment, from Spark's COMMENT 'x' or MySQL's
	// COMMENT='x'.
	Comment string `json:"comment,omitempty"`
	// Location is the table location from LOCATION 'x'.
	Location string `json:"location,omitempty"`
	// PartitionBy holds the PARTITIONED BY terms in order, each as written
	// with normalized spacing: "region", "days(ts)", "bucket(16, id)".
	PartitionBy []string `json:"partition_by,omitempty"`
	// WriteOrderedBy holds the terms of icesql's WRITE ORDERED BY clause,
	// the table's sort order, each as written with normalized spacing:
	// "id DESC NULLS LAST".
	WriteOrderedBy []string `json:"write_ordered_by,omitempty"`
	// Replace is set by CREATE OR REPLACE TABLE (ReplaceOrCreate) and
	// REPLACE TABLE (ReplaceOnly), which the parser turns into CREATE TABLE.
	Replace string `json:"replace,omitempty"`
}

// tableOptionsMarker starts a comment that holds encoded TableOptions.
const tableOptionsMarker = "icesql:"

// EncodeTableOptions returns the table COMMENT that carries o. Options with
// nothing but a comment encode as that comment itself, so plain comments stay
// readable; everything else is the marker "icesql:" followed by JSON.
func EncodeTableOptions(o TableOptions) string {
	if len(o.Properties) == 0 && o.Location == "" && len(o.PartitionBy) == 0 && len(o.WriteOrderedBy) == 0 && o.Replace == "" &&
		!strings.HasPrefix(o.Comment, tableOptionsMarker) {
		return o.Comment
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // keep '<', '>' and '&' readable
	if err := enc.Encode(o); err != nil {
		// Strings and maps of strings always encode.
		panic(fmt.Sprintf("encode table options: %v", err))
	}
	return tableOptionsMarker + strings.TrimSuffix(b.String(), "\n")
}

// DecodeTableOptions reads the table COMMENT written by EncodeTableOptions. A
// comment without the marker is a plain comment: TableOptions{Comment: comment}.
func DecodeTableOptions(comment string) (TableOptions, error) {
	encoded, ok := strings.CutPrefix(comment, tableOptionsMarker)
	if !ok {
		return TableOptions{Comment: comment}, nil
	}
	var o TableOptions
	dec := json.NewDecoder(strings.NewReader(encoded))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&o); err != nil {
		return TableOptions{}, fmt.Errorf("decode table options %q: %w", comment, err)
	}
	if dec.More() {
		return TableOptions{}, fmt.Errorf("decode table options %q: text after the JSON object", comment)
	}
	return o, nil
}

// sqlString quotes s as a MySQL string literal. The vitess lexer always
// treats a backslash as an escape, so backslashes are doubled.
func sqlString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(s) + "'"
}
