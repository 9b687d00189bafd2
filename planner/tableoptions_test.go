package planner

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

func equalOptions(a, b TableOptions) bool {
	return maps.Equal(a.Properties, b.Properties) && a.Comment == b.Comment &&
		a.Location == b.Location && slices.Equal(a.PartitionBy, b.PartitionBy)
}

func TestTableOptionsRoundTrip(t *testing.T) {
	for _, o := range []TableOptions{
		{},
		{Comment: "plain"},
		{Comment: "icesql: looks encoded"},
		{Comment: `quotes ' " and \ backslash, <html> & newline` + "\n"},
		{Location: "s3://b/p"},
		{PartitionBy: []string{"days(ts)", "bucket(16, id)"}},
		{Properties: map[string]string{"format-version": "2", "": "empty key"}, Comment: "c", Location: "l", PartitionBy: []string{"a"}},
	} {
		encoded := EncodeTableOptions(o)
		got, err := DecodeTableOptions(encoded)
		if err != nil {
			t.Errorf("DecodeTableOptions(%q): %v", encoded, err)
			continue
		}
		if !equalOptions(got, o) {
			t.Errorf("round trip of %+v: got %+v via %q", o, got, encoded)
		}
	}
}

func TestEncodeTableOptions(t *testing.T) {
	tests := []struct {
		o    TableOptions
		want string
	}{
		{TableOptions{}, ""},
		{TableOptions{Comment: "plain"}, "plain"},
		{TableOptions{Location: "a<b"}, `icesql:{"location":"a<b"}`},
		{TableOptions{Comment: "c", PartitionBy: []string{"x"}}, `icesql:{"comment":"c","partition_by":["x"]}`},
	}
	for _, tt := range tests {
		if got := EncodeTableOptions(tt.o); got != tt.want {
			t.Errorf("EncodeTableOptions(%+v) = %q, want %q", tt.o, got, tt.want)
		}
	}
}

func TestDecodeTableOptionsErrors(t *testing.T) {
	for _, comment := range []string{
		"icesql:",
		"icesql: fast table",
		`icesql:{"partition":["x"]}`,
		`icesql:{"comment":"a"} trailing`,
		`icesql:{"comment":1}`,
	} {
		if _, err := DecodeTableOptions(comment); err == nil || !strings.Contains(err.Error(), "decode table options") {
			t.Errorf("DecodeTableOptions(%q) = %v, want a decode error", comment, err)
		}
	}
}
