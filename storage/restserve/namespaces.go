package restserve

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
)

// config answers GET /v1/config: the prefix of every other path and the
// endpoints served, so that clients call none that is not.
func (h *Handler) config(r *http.Request) (any, error) {
	if wh := r.URL.Query().Get("warehouse"); wh != "" && wh != h.cfg.Prefix && wh != h.wh.Root() {
		return nil, apiError(http.StatusNotFound, "NoSuchWarehouseException", "no warehouse %q: this catalog serves %q", wh, h.cfg.Prefix)
	}
	endpoints := []string{}
	for _, rt := range h.table() {
		endpoints = append(endpoints, rt.method+" "+rt.path)
	}
	return map[string]any{
		"defaults":  map[string]string{},
		"overrides": map[string]string{"prefix": h.cfg.Prefix},
		"endpoints": endpoints,
	}, nil
}

// namespace is the {namespace} path parameter: its levels are separated by
// the unit separator (%1F), as the specification says.
func namespace(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("namespace"), "\x1f")
}

// page cuts names to the page the pageToken and pageSize query parameters
// ask for. The token is the offset of the page; an empty token is the first
// page, as PyIceberg sends it.
func page[T any](r *http.Request, all []T) ([]T, *string, error) {
	q := r.URL.Query()
	start := 0
	if t := q.Get("pageToken"); t != "" {
		n, err := strconv.Atoi(t)
		if err != nil || n < 0 || n > len(all) {
			return nil, nil, badRequest("invalid pageToken %q", t)
		}
		start = n
	}
	end := len(all)
	if s := q.Get("pageSize"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, nil, badRequest("invalid pageSize %q: it must be a positive number", s)
		}
		end = min(end, start+n)
	}
	var next *string
	if end < len(all) {
		t := strconv.Itoa(end)
		next = &t
	}
	return all[start:end], next, nil
}

func (h *Handler) listNamespaces(r *http.Request) (any, error) {
	if parent := r.URL.Query().Get("parent"); parent != "" {
		ok, err := h.wh.CheckNamespaceExists(r.Context(), strings.Split(parent, "\x1f"))
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, apiError(http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: %s", parent)
		}
		// Namespaces have one level: none has children.
		return map[string]any{"namespaces": []table.Identifier{}}, nil
	}
	all, err := h.wh.ListNamespaces(r.Context(), nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(all, func(a, b table.Identifier) int { return strings.Compare(a[0], b[0]) })
	got, next, err := page(r, all)
	if err != nil {
		return nil, err
	}
	if got == nil {
		got = []table.Identifier{}
	}
	return map[string]any{"namespaces": got, "next-page-token": next}, nil
}

func (h *Handler) createNamespace(r *http.Request) (any, error) {
	var req struct {
		Namespace  table.Identifier   `json:"namespace"`
		Properties iceberg.Properties `json:"properties"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if len(req.Namespace) != 1 || req.Namespace[0] == "" {
		return nil, badRequest("namespace %q: icesql's namespaces have exactly one level", strings.Join(req.Namespace, "."))
	}
	if req.Properties == nil {
		req.Properties = iceberg.Properties{}
	}
	if err := h.wh.CreateNamespace(r.Context(), req.Namespace, req.Properties); err != nil {
		return nil, err
	}
	return map[string]any{"namespace": req.Namespace, "properties": req.Properties}, nil
}

func (h *Handler) loadNamespace(r *http.Request) (any, error) {
	ns := namespace(r)
	props, err := h.wh.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		return nil, err
	}
	// The namespace's folder, as the S3 API names it when it serves the
	// warehouse (as the tables' locations are).
	if loc, ok := props["location"]; ok && h.cfg.S3 != nil {
		props["location"] = h.cfg.S3.toClient(h.wh.Root(), loc)
	}
	return map[string]any{"namespace": ns, "properties": props}, nil
}

func (h *Handler) namespaceExists(r *http.Request) (any, error) {
	ok, err := h.wh.CheckNamespaceExists(r.Context(), namespace(r))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apiError(http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: %s", strings.Join(namespace(r), "."))
	}
	return nil, nil
}

// dropNamespace drops an empty namespace. SQL's DROP DATABASE drops the
// tables with it, as MySQL does; the REST API refuses, as its specification
// says.
func (h *Handler) dropNamespace(r *http.Request) (any, error) {
	ns := namespace(r)
	if ok, err := h.wh.CheckNamespaceExists(r.Context(), ns); err != nil {
		return nil, err
	} else if !ok {
		return nil, apiError(http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: %s", strings.Join(ns, "."))
	}
	for id, err := range h.wh.ListTables(r.Context(), ns) {
		if err != nil {
			return nil, err
		}
		return nil, apiError(http.StatusConflict, "NamespaceNotEmptyException", "namespace %s is not empty: it holds table %s", ns[0], id[1])
	}
	for id, err := range h.wh.ListViews(r.Context(), ns) {
		if err != nil {
			return nil, err
		}
		return nil, apiError(http.StatusConflict, "NamespaceNotEmptyException", "namespace %s is not empty: it holds view %s", ns[0], id[1])
	}
	return nil, h.wh.DropNamespace(r.Context(), ns)
}

func (h *Handler) updateNamespaceProperties(r *http.Request) (any, error) {
	var req struct {
		Removals []string           `json:"removals"`
		Updates  iceberg.Properties `json:"updates"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	for _, k := range req.Removals {
		if _, ok := req.Updates[k]; ok {
			return nil, apiError(http.StatusUnprocessableEntity, "UnprocessableEntityException", "property %q is both removed and updated", k)
		}
	}
	sum, err := h.wh.UpdateNamespaceProperties(r.Context(), namespace(r), req.Removals, req.Updates)
	if err != nil {
		return nil, err
	}
	return propertiesSummary(sum), nil
}

// propertiesSummary is the response to a property update: every list is
// present, empty rather than null (PyIceberg requires "missing").
func propertiesSummary(sum catalog.PropertiesUpdateSummary) map[string][]string {
	orEmpty := func(s []string) []string {
		if s == nil {
			return []string{}
		}
		slices.Sort(s)
		return s
	}
	return map[string][]string{"updated": orEmpty(sum.Updated), "removed": orEmpty(sum.Removed), "missing": orEmpty(sum.Missing)}
}

// identifiers is the response of a listing of tables or views.
func identifiers(r *http.Request, ids []table.Identifier) (any, error) {
	got, next, err := page(r, ids)
	if err != nil {
		return nil, err
	}
	out := make([]identifier, 0, len(got))
	for _, id := range got {
		out = append(out, identifier{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	return map[string]any{"identifiers": out, "next-page-token": next}, nil
}

// identifier is the specification's TableIdentifier.
type identifier struct {
	Namespace table.Identifier `json:"namespace"`
	Name      string           `json:"name"`
}

func (id identifier) ident() table.Identifier {
	return append(slices.Clone(id.Namespace), id.Name)
}

// checkNamespace fails with 404 when ns does not exist.
func (h *Handler) checkNamespace(r *http.Request, ns table.Identifier) error {
	ok, err := h.wh.CheckNamespaceExists(r.Context(), ns)
	if err != nil {
		return err
	}
	if !ok {
		return apiError(http.StatusNotFound, "NoSuchNamespaceException", "Namespace does not exist: %s", strings.Join(ns, "."))
	}
	return nil
}
