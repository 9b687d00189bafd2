package storage

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrInvalidName is what every refusal of a namespace, table or view name
// matches (errors.Is); errors.As finds the *NameError saying why.
var ErrInvalidName = errors.New("invalid name")

// NameError refuses a name that cannot be stored as a path segment.
type NameError struct {
	Kind   string // "database", "table" or "view"
	Name   string
	Reason string
	// TooLong is set when the name is refused for its length only
	// (MySQL's ER_TOO_LONG_IDENT rather than ER_WRONG_*_NAME).
	TooLong bool
}

func (e *NameError) Error() string {
	return fmt.Sprintf("incorrect %s name %q: %s", e.Kind, e.Name, e.Reason)
}

func (e *NameError) Is(target error) bool { return target == ErrInvalidName }

// maxSegmentSize bounds a segment so that every file the layout derives
// from it (<segment>.json, <segment>-<id>) stays under the 255 bytes file
// systems allow. MySQL's 64-character limit on new names is the SQL layer's
// (tables registered from other engines may have longer names).
const maxSegmentSize = 200

// nameEscape starts an escape in a segment: ~ and two upper-case hex digits
// stand for one byte of the name. '~' is unreserved in URIs and plain in
// every file system, so an escaped segment reads the same before and after
// any number of URL decodings, path cleanings and shell expansions.
const nameEscape = '~'

// NameSegment turns a namespace, table or view name into the one path
// segment that stores it; kind ("database", "table", "view") names it in
// errors. It is the only place a name becomes part of a path, so that no
// name can mean anything to a file system or a URI parser:
//
//   - ASCII letters, digits, '-' and '_' are kept as they are, so
//     `my-table` reads naturally on disk;
//   - every other byte (separators '/' and '\', '%', '#', '?', ':',
//     spaces, quotes, control characters, every non-ASCII character, so
//     also look-alikes
//     such as U+2215 DIVISION SLASH or U+FF0E FULLWIDTH FULL STOP, and '~'
//     itself) becomes ~XX; '.' is kept only inside a name, never first
//     (hidden and catalog folders start with '.') or last, so "." and ".."
//     cannot come out;
//   - the layout's own folder names (metadata, data, case ignored) get
//     their first letter escaped, so no table folder looks like a part of
//     another table;
//   - an empty name, NUL (which MySQL refuses too), a name ending in a
//     space (MySQL's rule, as most file systems drop it) and a name whose
//     segment would be longer than 200 bytes are refused.
//
// Segments differing only in case are different folders; callers refuse a
// new name that equals an existing one ignoring case (case-insensitive
// file systems would merge them).
func NameSegment(kind, name string) (string, error) {
	refuse := func(reason string) (string, error) {
		return "", &NameError{Kind: kind, Name: name, Reason: reason}
	}
	switch {
	case name == "":
		return refuse("it is empty")
	case !utf8.ValidString(name):
		return refuse("it is not valid UTF-8")
	case strings.ContainsRune(name, 0):
		return refuse("it contains the NUL character")
	case strings.HasSuffix(name, " "):
		return refuse("it ends with a space")
	case len(name) > maxSegmentSize:
		return "", &NameError{Kind: kind, Name: name, TooLong: true,
			Reason: fmt.Sprintf("it is longer than %d bytes", maxSegmentSize)}
	}
	var b strings.Builder
	for i, r := range name {
		if keepInSegment(r, i == 0, i+utf8.RuneLen(r) == len(name)) {
			b.WriteRune(r)
			continue
		}
		var buf [utf8.UTFMax]byte
		for _, c := range buf[:utf8.EncodeRune(buf[:], r)] {
			fmt.Fprintf(&b, "%c%02X", nameEscape, c)
		}
	}
	seg := b.String()
	if reservedSegment(seg) {
		seg = fmt.Sprintf("%c%02X", nameEscape, seg[0]) + seg[1:]
	}
	if len(seg) > maxSegmentSize {
		return "", &NameError{Kind: kind, Name: name, TooLong: true,
			Reason: fmt.Sprintf("it takes more than %d bytes as a file name", maxSegmentSize)}
	}
	return seg, nil
}

// keepInSegment says r may stand for itself in a segment.
func keepInSegment(r rune, first, last bool) bool {
	switch {
	case r == '.':
		return !first && !last
	case r == '-' || r == '_':
		return true
	}
	// Only ASCII letters and digits: iceberg-go's location provider
	// URL-escapes any other character when it joins "data" or "metadata" to
	// a table's location, and locations are opaque (localio.go), so a folder
	// named Straße would see its data files written under Stra%C3%9Fe.
	return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
}

// reservedSegment says seg is a folder name the layout itself uses inside
// a table folder.
func reservedSegment(seg string) bool {
	return strings.EqualFold(seg, "metadata") || strings.EqualFold(seg, "data")
}

// SegmentName is the name a segment stores; ok is false for a file or
// folder NameSegment does not produce (a hidden folder, a folder another
// tool made), which then names nothing.
func SegmentName(seg string) (name string, ok bool) {
	if !strings.ContainsRune(seg, nameEscape) {
		name = seg
	} else {
		var b []byte
		for i := 0; i < len(seg); i++ {
			if seg[i] != nameEscape {
				b = append(b, seg[i])
				continue
			}
			if i+2 >= len(seg) || !isUpperHex(seg[i+1]) || !isUpperHex(seg[i+2]) {
				return "", false
			}
			b = append(b, unhex(seg[i+1])<<4|unhex(seg[i+2]))
			i += 2
		}
		name = string(b)
	}
	// Only the canonical spelling names something: one name, one folder.
	if again, err := NameSegment("", name); err != nil || again != seg {
		return "", false
	}
	return name, true
}

func isUpperHex(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' }

func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'A' + 10
}

// ExternalName refuses a namespace or table name that icesql does not send
// to an external catalog (REST, SQL, Glue, Hadoop), whatever the operation:
// those catalogs receive names as they are, and a name that means
// something to a URL or a file system would address another object there.
//
//   - empty names, invalid UTF-8, and control characters (NUL, and U+001F,
//     the REST protocol's separator of namespace levels);
//   - "." and "..": iceberg-go's REST client joins the table name to the
//     request path unescaped and cleans the path, so /tables/.. is the
//     namespace itself; a catalog that makes folders of names climbs out;
//   - '/' and '\': a path separator in a URL and in a folder name;
//   - '%': iceberg-go sends table names into the URL path unescaped, so
//     %2F reaches the server as '/', and catalogs whose file IO decodes
//     locations would read %2E%2E as "..";
//   - a name longer than 200 bytes (TooLong).
//
// Catalogs that make a new object's folder of its raw name (SQL, Glue,
// Hadoop) further refuse new names that NameSegment would escape.
func ExternalName(kind, name string) error {
	refuse := func(reason string) error {
		return &NameError{Kind: kind, Name: name, Reason: reason + "; the external catalog would read it as another name or path"}
	}
	switch {
	case name == "":
		return refuse("it is empty")
	case !utf8.ValidString(name):
		return refuse("it is not valid UTF-8")
	case strings.IndexFunc(name, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		return refuse("it contains a control character")
	case name == "." || name == "..":
		return refuse("it is a path step")
	case strings.ContainsAny(name, `/\`):
		return refuse("it contains a path separator")
	case strings.ContainsRune(name, '%'):
		return refuse("it contains '%'")
	case len(name) > maxSegmentSize:
		return &NameError{Kind: kind, Name: name, TooLong: true,
			Reason: fmt.Sprintf("it is longer than %d bytes", maxSegmentSize)}
	}
	return nil
}
