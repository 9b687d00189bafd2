package storage

import (
	"fmt"
	"strings"

	"github.com/apache/iceberg-go"
)

// A namespace of the warehouse is its folder, <root>/<namespace>, and its
// tables are placed in it (the Hadoop layout other engines read, and the
// folder DROP DATABASE removes and maintenance stays inside). A namespace
// "location" property that names another place would be a promise the
// warehouse does not keep, so it is refused, as Java's Hadoop catalog
// refuses a custom location and as SQL's CREATE NAMESPACE ... LOCATION is
// (1235); the namespace's own folder, in any spelling (file://, the
// served bucket's s3://), is accepted.

// namespaceLocationProperty is the namespace property Spark, the REST
// specification and Hive keep a namespace's location in.
const namespaceLocationProperty = "location"

// checkNamespaceLocation refuses props whose location is not the folder of
// namespace name.
func (w *Warehouse) checkNamespaceLocation(name string, props iceberg.Properties) error {
	loc, ok := props[namespaceLocationProperty]
	if !ok {
		return nil
	}
	folder := w.nsFolder(name)
	if w.sameLocation(loc, folder) {
		return nil
	}
	return fmt.Errorf("%w: namespace %s cannot have the location %q: the warehouse keeps each namespace in its own folder, %s, and places its tables there; leave the location out", ErrPlacement, name, loc, folder)
}

// sameLocation says a and b name one folder of the warehouse.
func (w *Warehouse) sameLocation(a, b string) bool {
	norm := func(s string) string {
		return strings.TrimRight(localFileLocation(w.buckets.apply(strings.TrimRight(s, "/")+"/")), "/")
	}
	return norm(a) == norm(b)
}
