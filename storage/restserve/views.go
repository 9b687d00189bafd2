package restserve

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
)

// Views are icesql's stored Iceberg views (storage/views.go): the views
// CREATE VIEW makes are the views the REST API serves, and the other way
// round.

func viewIdent(r *http.Request) table.Identifier {
	return append(namespace(r), r.PathValue("view"))
}

func (h *Handler) listViews(r *http.Request) (any, error) {
	ns := namespace(r)
	if err := h.checkNamespace(r, ns); err != nil {
		return nil, err
	}
	var ids []table.Identifier
	for id, err := range h.wh.ListViews(r.Context(), ns) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return identifiers(r, ids)
}

// viewResult is the specification's LoadViewResult: the metadata as the
// file holds it.
func (h *Handler) viewResult(r *http.Request, v *view.View) (any, error) {
	data, err := h.wh.Store().ReadFile(r.Context(), v.MetadataLocation())
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", v.MetadataLocation(), err)
	}
	return map[string]any{"metadata-location": v.MetadataLocation(), "metadata": json.RawMessage(data), "config": map[string]string{}}, nil
}

func (h *Handler) loadView(r *http.Request) (any, error) {
	v, err := h.wh.LoadView(r.Context(), viewIdent(r))
	if err != nil {
		return nil, err
	}
	return h.viewResult(r, v)
}

func (h *Handler) viewExists(r *http.Request) (any, error) {
	_, err := h.wh.LoadView(r.Context(), viewIdent(r))
	return nil, err
}

// createView creates a view; like tables, views are placed by the
// warehouse, so a requested location is overridden.
func (h *Handler) createView(r *http.Request) (any, error) {
	var req struct {
		Name        string             `json:"name"`
		Location    string             `json:"location"`
		Schema      *iceberg.Schema    `json:"schema"`
		ViewVersion *view.Version      `json:"view-version"`
		Properties  iceberg.Properties `json:"properties"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Name == "" || req.Schema == nil || req.ViewVersion == nil {
		return nil, badRequest("create view: the request needs a name, a schema and a view-version")
	}
	ns := namespace(r)
	if err := h.checkNamespace(r, ns); err != nil {
		return nil, err
	}
	v, err := h.wh.CreateView(r.Context(), append(slices.Clone(ns), req.Name), req.ViewVersion, req.Schema,
		catalog.WithViewProperties(req.Properties))
	if err != nil {
		if !isKnown(err) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return h.viewResult(r, v)
}

// replaceView commits a new version of a view: the updates a client sends
// for it are add-schema, add-view-version and set-current-view-version.
// Property and location changes are refused (400): icesql's views keep the
// properties they were created with.
func (h *Handler) replaceView(r *http.Request) (any, error) {
	// The updates decode twice: with iceberg-go, which refuses an unknown
	// type, and as JSON objects, to read their fields.
	var req struct {
		Requirements view.Requirements `json:"requirements"`
		Updates      view.Updates      `json:"updates"`
	}
	var raw struct {
		Updates []json.RawMessage `json:"updates"`
	}
	body, err := readBody(r)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, badRequest("malformed request body: %v", err)
	}
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, badRequest("malformed request body: %v", err)
	}
	ident := viewIdent(r)
	cur, err := h.wh.LoadView(r.Context(), ident)
	if err != nil {
		return nil, err
	}
	for _, q := range req.Requirements {
		if err := q.Validate(cur.Metadata()); err != nil {
			return nil, apiError(http.StatusConflict, "CommitFailedException", "replace view %s: %v", strings.Join(ident, "."), err)
		}
	}
	schemas := map[int]*iceberg.Schema{}
	for id, sc := range cur.Schemas() {
		schemas[id] = sc
	}
	var version *view.Version
	var lastSchema *iceberg.Schema
	for _, u := range raw.Updates {
		var upd struct {
			Action        string          `json:"action"`
			Schema        *iceberg.Schema `json:"schema"`
			ViewVersion   *view.Version   `json:"view-version"`
			ViewVersionID int64           `json:"view-version-id"`
		}
		if err := json.Unmarshal(u, &upd); err != nil {
			return nil, badRequest("malformed view update: %v", err)
		}
		switch upd.Action {
		case "add-schema":
			if upd.Schema == nil {
				return nil, badRequest("add-schema without a schema")
			}
			schemas[upd.Schema.ID] = upd.Schema
			lastSchema = upd.Schema
		case "add-view-version":
			if upd.ViewVersion == nil {
				return nil, badRequest("add-view-version without a view-version")
			}
			version = upd.ViewVersion
		case "set-current-view-version":
			if upd.ViewVersionID != -1 && (version == nil || version.VersionID != upd.ViewVersionID) {
				return nil, badRequest("set-current-view-version %d: only the version the request adds can become current", upd.ViewVersionID)
			}
		default:
			return nil, badRequest("view update %q is not supported: icesql's views change by a new version only", upd.Action)
		}
	}
	if version == nil {
		return nil, badRequest("replace view %s: the request adds no view version", strings.Join(ident, "."))
	}
	sc := schemas[version.SchemaID]
	if version.SchemaID == -1 {
		sc = lastSchema
	}
	if sc == nil {
		return nil, badRequest("replace view %s: the view version's schema %d is unknown", strings.Join(ident, "."), version.SchemaID)
	}
	v, err := h.wh.ReplaceView(r.Context(), ident, version, sc)
	if err != nil {
		if !isKnown(err) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return h.viewResult(r, v)
}

func (h *Handler) dropView(r *http.Request) (any, error) {
	return nil, h.wh.DropView(r.Context(), viewIdent(r))
}

func (h *Handler) renameView(r *http.Request) (any, error) {
	var req struct {
		Source      *identifier `json:"source"`
		Destination *identifier `json:"destination"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Source == nil || req.Destination == nil {
		return nil, badRequest("rename: the request needs a source and a destination")
	}
	if err := h.checkNamespace(r, req.Destination.Namespace); err != nil {
		return nil, err
	}
	if _, err := h.wh.RenameView(r.Context(), req.Source.ident(), req.Destination.ident()); err != nil {
		if !isKnown(err) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return nil, nil
}
