package ddl

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// DefaultTableProperties fills in the properties icesql sets on the tables
// it creates unless the user gave them.
//
// commit.manifest-merge.enabled is true in Iceberg's Java library and false
// in iceberg-go. Without merging, every INSERT adds one manifest for good:
// after ten thousand single-row INSERTs each commit rewrites a manifest list
// of ten thousand entries and each query opens ten thousand manifests. With
// it, appends merge small manifests once there are
// commit.manifest.min-count-to-merge (100) of them, as Spark's do. The
// property is stored in the table, so SHOW CREATE TABLE shows it and other
// engines writing the table merge too.
//
// Every other property keeps Iceberg's default unless the user sets it.
// write.metadata.delete-after-commit.enabled in particular stays false: with
// it, a commit deletes the metadata files that drop out of the metadata log,
// and a Spark writer committing to the same table at the same moment failed
// with "Metadata file for version N is missing" (the file its retry needed
// was gone).
func DefaultTableProperties(props iceberg.Properties) {
	if _, set := props[table.ManifestMergeEnabledKey]; !set {
		props[table.ManifestMergeEnabledKey] = "true"
	}
}
