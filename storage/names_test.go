package storage

import (
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNameSegment(t *testing.T) {
	for _, c := range []struct {
		name, seg string
	}{
		{"orders", "orders"},
		{"my-table_2", "my-table_2"},
		{"Straße", "Stra~C3~9Fe"},
		{"表", "~E8~A1~A8"},
		{"v1.2", "v1.2"},
		{".", "~2E"},
		{"..", "~2E~2E"},
		{"...", "~2E.~2E"},
		{".icesql", "~2Eicesql"},
		{"a.", "a~2E"},
		{"%2E%2E", "~252E~252E"},
		{"%2E%2E%2F%2E%2E%2Fvictim", "~252E~252E~252F~252E~252E~252Fvictim"},
		{"a/b", "a~2Fb"},
		{`a\b`, "a~5Cb"},
		{"a#b", "a~23b"},
		{"a?b", "a~3Fb"},
		{"a b", "a~20b"},
		{"a\nb", "a~0Ab"},
		{"a~b", "a~7Eb"},
		{"c:", "c~3A"},
		{"a\u2215b", "a~E2~88~95b"},            // DIVISION SLASH
		{"\uff0e\uff0e", "~EF~BC~8E~EF~BC~8E"}, // FULLWIDTH FULL STOP
		{"a\u202eb", "a~E2~80~AEb"},            // RIGHT-TO-LEFT OVERRIDE
		{"metadata", "~6Detadata"},
		{"Data", "~44ata"},
		{"database", "database"},
	} {
		got, err := NameSegment("table", c.name)
		if err != nil || got != c.seg {
			t.Errorf("NameSegment(%q) = %q, %v; want %q", c.name, got, err, c.seg)
			continue
		}
		// The segment means nothing to a URI parser or a file system.
		if u, err := url.PathUnescape(got); err != nil || u != got {
			t.Errorf("segment %q of %q changes when URL-decoded (%q, %v)", got, c.name, u, err)
		}
		if got == "." || got == ".." || strings.HasPrefix(got, ".") || strings.ContainsAny(got, "/\\%#?") {
			t.Errorf("segment %q of %q is not a plain file name", got, c.name)
		}
		if back, ok := SegmentName(got); !ok || back != c.name {
			t.Errorf("SegmentName(%q) = %q, %v; want %q", got, back, ok, c.name)
		}
	}
	for _, c := range []struct {
		name    string
		tooLong bool
	}{
		{"", false}, {"a\x00b", false}, {"trailing ", false}, {"\xff", false},
		{strings.Repeat("x", 201), true}, {strings.Repeat("x", 1000), true},
		{strings.Repeat("/", 67), true}, // 201 bytes escaped
	} {
		_, err := NameSegment("table", c.name)
		var ne *NameError
		if !errors.As(err, &ne) || !errors.Is(err, ErrInvalidName) || ne.TooLong != c.tooLong {
			t.Errorf("NameSegment(%.20q) = %v; want a NameError (too long: %v)", c.name, err, c.tooLong)
		}
	}
	for _, ok := range []string{strings.Repeat("x", 200), strings.Repeat("/", 66)} {
		if _, err := NameSegment("table", ok); err != nil {
			t.Errorf("NameSegment(%.10q... of %d bytes): %v; want a segment of at most 200 bytes", ok, len(ok), err)
		}
	}
	// A segment another tool made, or an escape in lower case, names nothing.
	for _, seg := range []string{".icesql", "a b", "a%2Fb", "a~2fb", "a~", "~6", "metadata", "a~41"} {
		if n, ok := SegmentName(seg); ok {
			t.Errorf("SegmentName(%q) = %q; want no name", seg, n)
		}
	}
}

func TestInside(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "w")
	if err := os.MkdirAll(filepath.Join(root, "d", "t"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(dir, "outside")
	if err := os.Mkdir(outside, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "d", "t", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "nothing"), filepath.Join(root, "d", "t", "dangling")); err != nil {
		t.Fatal(err)
	}
	rootURI, err := LocalLocation(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		loc    string
		strict bool
		ok     bool
	}{
		{rootURI + "/d/t/data/x.parquet", true, true},
		{root + "/d/t/data/x.parquet", true, true},
		{rootURI + "/d/t/not-yet/deeper", true, true},
		{rootURI, false, true},
		{rootURI, true, false},
		{rootURI + "/", true, false},
		{rootURI + "/d/../../outside", false, false},
		{rootURI + "/d/t/%2E%2E/%2E%2E/%2E%2E/outside", false, false},
		{rootURI + "/d/%2E%2E%2F%2E%2E%2Foutside", false, false},
		{rootURI + "/d/t/link/x", false, false}, // a link leading out
		{rootURI + "/d/t/link", true, false},    // the link itself resolves outside
		{rootURI + "x/d", false, false},         // a sibling folder sharing the prefix
		{"file:" + root + "/d", false, true},    // RFC 8089's file:/path, as Java writes it
		{"file:" + root + "/../outside", false, false},
		{"file:d/t", false, false},                  // file: with a relative path names nothing
		{"d/t", false, false},                       // relative
		{"s3://bucket" + root + "/d", false, false}, // another scheme
		{outside, false, false},
	} {
		err := Inside(rootURI, c.loc, c.strict)
		if (err == nil) != c.ok {
			t.Errorf("Inside(root, %q, strict=%v) = %v; want ok=%v", c.loc, c.strict, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrOutside) {
			t.Errorf("Inside(root, %q): %v does not match ErrOutside", c.loc, err)
		}
	}
	// A warehouse reached through a link is still itself.
	linked := filepath.Join(dir, "wlink")
	if err := os.Symlink(root, linked); err != nil {
		t.Fatal(err)
	}
	if err := Inside(linked, rootURI+"/d/t", true); err != nil {
		t.Errorf("a warehouse named through a link: %v", err)
	}
	if err := Inside("s3://b/w", "s3://b/w/d/t/x", true); err != nil {
		t.Errorf("s3: %v", err)
	}
	if err := Inside("s3://b/w", "s3://b/w/d/../../x", false); err == nil {
		t.Errorf("s3 with ..: accepted")
	}
	if err := Inside("s3://b/w", "s3://other/w/d", false); err == nil {
		t.Errorf("s3 other bucket: accepted")
	}
}
