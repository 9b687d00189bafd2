// Package restserve serves the embedded warehouse as an Iceberg REST
// catalog (the Apache Iceberg REST catalog OpenAPI specification), so that
// Spark, Trino, PyIceberg and DuckDB use icesql's tables through their REST
// catalog clients. Every change goes through the warehouse's own commit path
// (storage.Warehouse.CommitTable: validation of the requirements against the
// newest metadata, then the create-if-absent of the next metadata file), the
// one SQL writes take, so a REST commit and a SQL commit on one table never
// lose each other.
package restserve

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/icesql/icesql/storage"
)

// Config says how the catalog is served.
type Config struct {
	// Prefix is the warehouse name clients name (the REST "warehouse"
	// property) and the path prefix the config endpoint hands out;
	// DefaultPrefix when empty.
	Prefix string
	// Authenticate, when set, checks every request before it is served:
	// an error matching ErrForbidden is answered 403, any other 401. Nil
	// serves everyone (a loopback address without credentials).
	Authenticate func(*http.Request) error
	// MaxBody bounds a request body in bytes (DefaultMaxBody when zero);
	// a longer body is answered 413.
	MaxBody int64
	// S3, when set, is the S3 API served over the warehouse folder: tables
	// are handed out with its locations and the configuration a client's
	// S3 file IO needs to reach it.
	S3 *S3
	// Tokens, when set, serves the OAuth2 token endpoint (POST
	// /v1/oauth/tokens) with its accounts; Authenticate should accept its
	// tokens (Tokens.Verify).
	Tokens *Tokens
}

// DefaultPrefix is the warehouse name when Config.Prefix is empty; it is
// also the default bucket name of the S3 API served beside the catalog.
const DefaultPrefix = "warehouse"

// DefaultMaxBody is large enough for a commit adding thousands of
// snapshots' worth of updates, small enough that a hostile client cannot
// make the server buffer much.
const DefaultMaxBody = 32 << 20

// ErrForbidden is what an Authenticate func returns for a request whose
// credentials are valid but do not allow it (403, not 401).
var ErrForbidden = errors.New("forbidden")

// Handler is the REST catalog as an http.Handler. It answers under /v1/
// and /_iceberg/v1/ (the path AIStor serves its catalog at).
type Handler struct {
	wh  *storage.Warehouse
	cfg Config
	mux *http.ServeMux
}

// New returns the REST catalog over wh.
func New(wh *storage.Warehouse, cfg Config) *Handler {
	if cfg.Prefix == "" {
		cfg.Prefix = DefaultPrefix
	}
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	h := &Handler{wh: wh, cfg: cfg, mux: http.NewServeMux()}
	h.routes()
	return h
}

// route is one endpoint: its method and path as the specification writes
// them (the config endpoint lists them), and its handler.
type route struct {
	method, path string
	serve        func(*http.Request) (any, error)
}

func (h *Handler) table() []route {
	return []route{
		{"GET", "/v1/{prefix}/namespaces", h.listNamespaces},
		{"POST", "/v1/{prefix}/namespaces", h.createNamespace},
		{"GET", "/v1/{prefix}/namespaces/{namespace}", h.loadNamespace},
		{"HEAD", "/v1/{prefix}/namespaces/{namespace}", h.namespaceExists},
		{"DELETE", "/v1/{prefix}/namespaces/{namespace}", h.dropNamespace},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/properties", h.updateNamespaceProperties},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/tables", h.listTables},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables", h.createTable},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", h.loadTable},
		{"HEAD", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", h.tableExists},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", h.commitTable},
		{"DELETE", "/v1/{prefix}/namespaces/{namespace}/tables/{table}", h.dropTable},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/register", h.registerTable},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics", h.reportMetrics},
		{"POST", "/v1/{prefix}/tables/rename", h.renameTable},
		{"POST", "/v1/{prefix}/transactions/commit", h.commitTransaction},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/views", h.listViews},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/views", h.createView},
		{"GET", "/v1/{prefix}/namespaces/{namespace}/views/{view}", h.loadView},
		{"HEAD", "/v1/{prefix}/namespaces/{namespace}/views/{view}", h.viewExists},
		{"POST", "/v1/{prefix}/namespaces/{namespace}/views/{view}", h.replaceView},
		{"DELETE", "/v1/{prefix}/namespaces/{namespace}/views/{view}", h.dropView},
		{"POST", "/v1/{prefix}/views/rename", h.renameView},
	}
}

// routes registers every endpoint without its prefix: ServeHTTP strips
// the prefix (clients that skip the config endpoint send none).
func (h *Handler) routes() {
	h.mux.Handle("GET /v1/config", h.json(h.config))
	for _, rt := range h.table() {
		h.mux.Handle(rt.method+" "+strings.Replace(rt.path, "/{prefix}", "", 1), h.json(rt.serve))
	}
	h.mux.Handle("/", h.json(func(r *http.Request) (any, error) {
		return nil, apiError(http.StatusNotFound, "NotFoundException", "no such endpoint: %s %s", r.Method, r.URL.Path)
	}))
}

// roots are the first path segments after /v1/ that are endpoints rather
// than a prefix.
var roots = map[string]bool{"config": true, "namespaces": true, "tables": true, "transactions": true, "views": true, "oauth": true}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p := strings.TrimPrefix(r.URL.Path, "/_iceberg"); p == "/v1/oauth/tokens" {
		h.serveToken(w, r) // its body holds the credentials
		return
	}
	if h.cfg.Authenticate != nil {
		if err := h.cfg.Authenticate(r); err != nil {
			status, typ := http.StatusUnauthorized, "NotAuthorizedException"
			if errors.Is(err, ErrForbidden) {
				status, typ = http.StatusForbidden, "ForbiddenException"
			}
			writeError(w, apiError(status, typ, "%v", err))
			return
		}
	}
	esc := r.URL.EscapedPath()
	esc = strings.TrimPrefix(esc, "/_iceberg")
	rest, ok := strings.CutPrefix(esc, "/v1/")
	if !ok {
		writeError(w, apiError(http.StatusNotFound, "NotFoundException", "no such endpoint: %s (the catalog answers under /v1/ and /_iceberg/v1/)", r.URL.Path))
		return
	}
	first, after, _ := strings.Cut(rest, "/")
	if !roots[first] {
		if p, err := url.PathUnescape(first); err != nil || p != h.cfg.Prefix {
			writeError(w, apiError(http.StatusNotFound, "NoSuchWarehouseException", "no warehouse %q: this catalog serves %q", first, h.cfg.Prefix))
			return
		}
		rest = after
	}
	esc = "/v1/" + rest
	path, err := url.PathUnescape(esc)
	if err != nil {
		writeError(w, apiError(http.StatusBadRequest, "BadRequestException", "malformed path %q: %v", esc, err))
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawPath = path, esc
	if r.Body != nil {
		r2.Body = http.MaxBytesReader(w, r.Body, h.cfg.MaxBody)
	}
	h.mux.ServeHTTP(w, r2)
}

// json adapts an endpoint: its result is the JSON response (204 when nil),
// its error the specification's error response.
func (h *Handler) json(serve func(*http.Request) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		out, err := serve(r)
		if err != nil {
			writeError(w, err)
			return
		}
		if out == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		data, err := json.Marshal(out)
		if err != nil {
			writeError(w, fmt.Errorf("encode response: %w", err))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	})
}

// decode reads a request body as JSON into v: a malformed body is 400,
// one over the size limit 413.
func decode(r *http.Request, v any) error {
	data, err := readBody(r)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return apiError(http.StatusBadRequest, "BadRequestException", "malformed request body: %v", err)
	}
	return nil
}

// readBody reads the request body: one over the size limit is 413.
func readBody(r *http.Request) ([]byte, error) {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		if mb, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, apiError(http.StatusRequestEntityTooLarge, "BadRequestException", "request body is over the limit of %d bytes", mb.Limit)
		}
		return nil, badRequest("read request body: %v", err)
	}
	return data, nil
}
