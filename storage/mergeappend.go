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
// metadata it starts from: the commit sends the catalog the new snapshot,
// not the properties, so the table's stored properties stay as they were.

// javaAppendDefaults are the properties whose Java default differs from
// iceberg-go's, for appends.
var javaAppendDefaults = iceberg.Properties{table.ManifestMergeEnabledKey: "true"}

// mergingAppends returns tbl as an append should see it: with Java's
// defaults for the properties the table does not set. cat commits the
// append, as tbl's own catalog would.
func mergingAppends(tbl *table.Table, cat table.CatalogIO) *table.Table {
	meta := tbl.Metadata()
	props := meta.Properties()
	var add iceberg.Properties
	for k, v := range javaAppendDefaults {
		if _, set := props[k]; !set {
			if add == nil {
				add = maps.Clone(props)
				if add == nil {
					add = iceberg.Properties{}
				}
			}
			add[k] = v
		}
	}
	if add == nil {
		return tbl
	}
	return table.New(tbl.Identifier(), &appendDefaults{Metadata: meta, props: add}, tbl.MetadataLocation(), tbl.FS, cat)
}

// appendDefaults is a table's metadata with the properties an append reads
// completed by Java's defaults.
type appendDefaults struct {
	table.Metadata
	props iceberg.Properties
}

func (m *appendDefaults) Properties() iceberg.Properties { return m.props }

// Equals compares the metadata underneath, with or without the defaults.
func (m *appendDefaults) Equals(other table.Metadata) bool {
	if o, ok := other.(*appendDefaults); ok {
		other = o.Metadata
	}
	return m.Metadata.Equals(other)
}
