package restserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/apache/iceberg-go/table"
)

// checkRequirements validates reqs against meta with iceberg-go. A failed
// requirement is 409 CommitFailedException with the message Java's
// UpdateRequirement gives, which Java clients and tests match.
func checkRequirements(meta table.Metadata, reqs []table.Requirement) error {
	for _, q := range reqs {
		if err := q.Validate(meta); err != nil {
			return apiError(http.StatusConflict, "CommitFailedException", "%s", requirementMessage(q, meta, err))
		}
	}
	return nil
}

// requirementMessage says why q failed on meta in Java's words. The
// requirement types are unexported; their JSON is the specification's.
func requirementMessage(q table.Requirement, meta table.Metadata, err error) string {
	var f struct {
		UUID       string `json:"uuid"`
		Ref        string `json:"ref"`
		SnapshotID *int64 `json:"snapshot-id"`
		FieldID    int    `json:"last-assigned-field-id"`
		SchemaID   int    `json:"current-schema-id"`
		PartID     int    `json:"last-assigned-partition-id"`
		SpecID     int    `json:"default-spec-id"`
		OrderID    int    `json:"default-sort-order-id"`
	}
	if data, merr := json.Marshal(q); merr == nil {
		_ = json.Unmarshal(data, &f)
	}
	changed := func(what string, want, got any) string {
		return fmt.Sprintf("Requirement failed: %s changed: expected id %v != %v", what, want, got)
	}
	switch q.GetType() {
	case "assert-create":
		return "Requirement failed: table already exists"
	case "assert-table-uuid":
		return fmt.Sprintf("Requirement failed: UUID does not match: expected %s != %s", f.UUID, meta.TableUUID())
	case "assert-ref-snapshot-id":
		for name, ref := range meta.Refs() {
			if name != f.Ref {
				continue
			}
			kind := strings.ToLower(string(ref.SnapshotRefType))
			if f.SnapshotID == nil {
				return fmt.Sprintf("Requirement failed: %s %s was created concurrently", kind, f.Ref)
			}
			return fmt.Sprintf("Requirement failed: %s %s has changed: expected id %d != %d", kind, f.Ref, *f.SnapshotID, ref.SnapshotID)
		}
		if f.SnapshotID != nil {
			return fmt.Sprintf("Requirement failed: branch or tag %s is missing, expected %d", f.Ref, *f.SnapshotID)
		}
	case "assert-last-assigned-field-id":
		return changed("last assigned field id", f.FieldID, meta.LastColumnID())
	case "assert-current-schema-id":
		return changed("current schema", f.SchemaID, meta.CurrentSchema().ID)
	case "assert-last-assigned-partition-id":
		got := "none"
		if p := meta.LastPartitionSpecID(); p != nil {
			got = fmt.Sprint(*p)
		}
		return changed("last assigned partition id", f.PartID, got)
	case "assert-default-spec-id":
		return changed("default partition spec", f.SpecID, meta.DefaultPartitionSpec())
	case "assert-default-sort-order-id":
		return changed("default sort order", f.OrderID, meta.DefaultSortOrder())
	}
	return "Requirement failed: " + err.Error()
}
