package storage

import (
	"maps"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// Java Iceberg's table.newAppend() is a MergeAppend: unless a table sets
// commit.manifest-merge.enabled=false, an append that leaves at least
// commit.manifest.min-count-to-merge (100) small manifests in a bin of
// commit.manifest.target-size-bytes (8 MB) rewrites them as one. iceberg-go
// defaults the property to false. Tables icesql creates store it as true
// (engine/tabledefaults.go); a table registered from another engine usually
// does not set it, and there each single-row INSERT added one manifest for
// good, every later query planning over all of them. Appends here follow
// Java's default; a table that sets the property either way keeps its
// choice, and iceberg-go's own defaults for the count and size are Java's.
//
// The default is given to the append's transaction only, through the
// metadata it starts from (WithProperties).

// javaAppendDefaults are the properties whose Java default differs from
// iceberg-go's, for appends.
var javaAppendDefaults = iceberg.Properties{table.ManifestMergeEnabledKey: "true"}

// mergingAppends returns tbl as an append should see it: with Java's
// defaults for the properties the table does not set. cat commits the
// append, as tbl's own catalog would.
func mergingAppends(tbl *table.Table, cat table.CatalogIO) *table.Table {
	props := tbl.Metadata().Properties()
	var add iceberg.Properties
	for k, v := range javaAppendDefaults {
		if _, set := props[k]; !set {
			if add == nil {
				add = iceberg.Properties{}
			}
			add[k] = v
		}
	}
	if add == nil {
		return tbl
	}
	return WithProperties(tbl, add, cat)
}

// WithProperties returns tbl as seen with the properties in set added to
// (or replacing) its own, for a write that reads them; cat commits through
// the result, as tbl's own catalog would (nil: it never commits). It wraps
// tbl's metadata instead of building new metadata with them:
// iceberg-go's MetadataBuilder deep-copies metadata it built itself, every
// snapshot's summary map included, and the table's writers start a builder
// from the metadata they are given, so a per-statement rebuild made a
// single-row INSERT's cost grow with the table's history (sharedmeta.go).
func WithProperties(tbl *table.Table, set iceberg.Properties, cat table.CatalogIO) *table.Table {
	meta := tbl.Metadata()
	if o, ok := meta.(*propertiesOverlay); ok {
		meta = o.Metadata
	}
	props := maps.Clone(tbl.Metadata().Properties())
	if props == nil {
		props = iceberg.Properties{}
	}
	maps.Copy(props, set)
	return table.New(tbl.Identifier(), &propertiesOverlay{Metadata: meta, props: props}, tbl.MetadataLocation(), tbl.FS, cat)
}

// propertiesOverlay is a table's metadata with other properties. It is
// given to writers only: a commit sends the catalog the new snapshot, not
// the properties, so the table's stored properties stay as they were.
type propertiesOverlay struct {
	table.Metadata
	props iceberg.Properties
}

func (m *propertiesOverlay) Properties() iceberg.Properties { return m.props }

// Equals compares the metadata underneath, with or without the overlay.
func (m *propertiesOverlay) Equals(other table.Metadata) bool {
	if o, ok := other.(*propertiesOverlay); ok {
		other = o.Metadata
	}
	return m.Metadata.Equals(other)
}
