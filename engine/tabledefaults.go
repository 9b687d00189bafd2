package engine

import (
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/table"
)

// defaultTableProperties fills in the properties icesql sets on the tables
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
// write.metadata.delete-after-commit.enabled is false in both libraries: a
// table keeps every metadata file it ever had. Each one holds the whole
// snapshot list, so ten thousand single-row INSERTs left about 37 GB of
// metadata files (the sum of lists of 1 to 10,000 snapshots) and filled the
// disk. With it, a commit deletes the files that drop out of the metadata
// log, which keeps write.metadata.previous-versions-max (100) of them; time
// travel reads snapshots, not old metadata files.
func defaultTableProperties(props iceberg.Properties) {
	if _, set := props[table.ManifestMergeEnabledKey]; !set {
		props[table.ManifestMergeEnabledKey] = "true"
	}
	if _, set := props[table.MetadataDeleteAfterCommitEnabledKey]; !set {
		props[table.MetadataDeleteAfterCommitEnabledKey] = "true"
	}
}
