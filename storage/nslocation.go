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
//
// A warehouse written before that rule may hold a namespace whose stored
// location names another place. The warehouse never placed anything by
// it, and does not now: its tables were and are created in the folder.
// But clients read the location and act on it (Trino and icesql's own
// REST client place a new table below it, Spark shows it as where the
// namespace lives), so the warehouse never hands it out: loading the
// namespace's properties answers the folder as its location, and the
// stored value under ignoredLocationProperty, so that its owner sees that
// it is ignored. The stored file is left as it is (a read does not
// write); a properties update keeps it unless the update removes the
// location or sets it to the folder, and setting it elsewhere is refused
// as for any namespace, as is setting ignoredLocationProperty. Existing
// tables are found by name in the folder and work as before.

// namespaceLocationProperty is the namespace property Spark, the REST
// specification and Hive keep a namespace's location in.
const namespaceLocationProperty = "location"

// ignoredLocationProperty is the property a loaded namespace shows a
// stored location in that names another place than its folder.
const ignoredLocationProperty = "icesql.ignored-location"

// checkNamespaceLocation refuses props, set on namespace name, whose
// location is not its folder or that set ignoredLocationProperty, which
// the warehouse answers.
func (w *Warehouse) checkNamespaceLocation(name string, props iceberg.Properties) error {
	if _, ok := props[ignoredLocationProperty]; ok {
		return fmt.Errorf("%w: namespace %s cannot set %s: the warehouse answers it, with a location the namespace was given outside its folder before such locations were refused; set or remove the location instead", ErrPlacement, name, ignoredLocationProperty)
	}
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

// answeredProperties is the stored properties of namespace name as the
// warehouse answers them: a location naming another place than its folder
// is answered as the folder, the stored value as ignoredLocationProperty.
// stored is not changed.
func (w *Warehouse) answeredProperties(name string, stored iceberg.Properties) iceberg.Properties {
	loc, ok := stored[namespaceLocationProperty]
	if !ok || w.sameLocation(loc, w.nsFolder(name)) {
		return stored
	}
	out := make(iceberg.Properties, len(stored)+1)
	for k, v := range stored {
		out[k] = v
	}
	out[ignoredLocationProperty] = loc
	out[namespaceLocationProperty] = w.nsFolder(name)
	return out
}

// sameLocation says a and b name one folder of the warehouse.
func (w *Warehouse) sameLocation(a, b string) bool {
	norm := func(s string) string {
		return strings.TrimRight(localFileLocation(w.buckets.apply(strings.TrimRight(s, "/")+"/")), "/")
	}
	return norm(a) == norm(b)
}
