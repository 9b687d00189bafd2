package restserve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

func tableIdent(r *http.Request) table.Identifier {
	return append(namespace(r), r.PathValue("table"))
}

func (h *Handler) listTables(r *http.Request) (any, error) {
	ns := namespace(r)
	if err := h.checkNamespace(r, ns); err != nil {
		return nil, err
	}
	var ids []table.Identifier
	for id, err := range h.wh.ListTables(r.Context(), ns) {
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return identifiers(r, ids)
}

// loadResult is the specification's LoadTableResult: the metadata as the
// file holds it, with the S3 API's locations and client configuration when
// the warehouse is served through it (see S3).
func (h *Handler) loadResult(r *http.Request, metaLoc string, meta table.Metadata) (any, error) {
	var raw json.RawMessage
	if metaLoc != "" {
		data, err := h.wh.Store().ReadFile(r.Context(), metaLoc)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", metaLoc, err)
		}
		raw = data
	} else {
		data, err := storage.MetadataJSON(meta)
		if err != nil {
			return nil, fmt.Errorf("encode table metadata: %w", err)
		}
		raw = data
	}
	out := map[string]any{"metadata": raw, "config": map[string]string{}}
	if metaLoc != "" {
		out["metadata-location"] = metaLoc
	}
	if h.cfg.S3 != nil {
		return h.cfg.S3.result(r, h.wh.Root(), out)
	}
	return out, nil
}

func (h *Handler) loadTable(r *http.Request) (any, error) {
	tbl, err := h.wh.LoadTable(r.Context(), tableIdent(r))
	if err != nil {
		return nil, err
	}
	return h.loadResult(r, tbl.MetadataLocation(), tbl.Metadata())
}

func (h *Handler) tableExists(r *http.Request) (any, error) {
	ident := tableIdent(r)
	ok, err := h.wh.CheckTableExists(r.Context(), ident)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, strings.Join(ident, "."))
	}
	return nil, nil
}

type createTableRequest struct {
	Name          string                 `json:"name"`
	Location      string                 `json:"location"`
	Schema        *iceberg.Schema        `json:"schema"`
	PartitionSpec *iceberg.PartitionSpec `json:"partition-spec"`
	WriteOrder    *table.SortOrder       `json:"write-order"`
	StageCreate   bool                   `json:"stage-create"`
	Properties    iceberg.Properties     `json:"properties"`
}

// createTable creates a table, or with stage-create only says what its
// metadata would be: the client then commits it with an assert-create
// requirement (CREATE TABLE AS SELECT). The warehouse places tables itself:
// a requested location is overridden, as the specification allows.
func (h *Handler) createTable(r *http.Request) (any, error) {
	var req createTableRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, badRequest("create table: the request names no table")
	}
	if req.Schema == nil {
		return nil, badRequest("create table %s: the request has no schema", req.Name)
	}
	ns := namespace(r)
	if err := h.checkNamespace(r, ns); err != nil {
		return nil, err
	}
	ident := append(slices.Clone(ns), req.Name)
	spec := iceberg.UnpartitionedSpec
	if req.PartitionSpec != nil {
		spec = req.PartitionSpec
	}
	order := table.UnsortedSortOrder
	if req.WriteOrder != nil {
		order = *req.WriteOrder
	}
	loc, err := h.wh.PlaceTable(r.Context(), ident)
	if err != nil {
		return nil, err
	}
	meta, err := table.NewMetadata(req.Schema, spec, order, loc, req.Properties)
	if err != nil {
		return nil, badRequest("create table %s: %v", req.Name, err)
	}
	if req.StageCreate {
		return h.loadResult(r, "", meta)
	}
	tbl, err := h.wh.CreateTableFromMetadata(r.Context(), ident, meta)
	if err != nil {
		return nil, err
	}
	return h.loadResult(r, tbl.MetadataLocation(), tbl.Metadata())
}

// isKnown says err matches a sentinel writeError maps to a status.
func isKnown(err error) bool {
	for _, c := range classes {
		if errors.Is(err, c.err) {
			return true
		}
	}
	return false
}

// commitRequest is the specification's CommitTableRequest. Requirements and
// updates decode with iceberg-go: an unknown type fails the decoding (400).
type commitRequest struct {
	Identifier   *identifier        `json:"identifier"`
	Requirements table.Requirements `json:"requirements"`
	Updates      table.Updates      `json:"updates"`
}

func (h *Handler) commitTable(r *http.Request) (any, error) {
	var req commitRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	ident := tableIdent(r)
	meta, loc, err := h.commit(r.Context(), ident, req.Requirements, req.Updates)
	if err != nil {
		return nil, err
	}
	return h.loadResult(r, loc, meta)
}

// Retries of a commit whose requirements still hold but that lost the race
// for the next metadata file to another process, as Java's CatalogHandlers
// retry server-side.
const (
	commitAttempts = 10
	commitMaxWait  = 500 * time.Millisecond
)

// commit applies one table's requirements and updates through the
// warehouse's commit path. A failed requirement is 409 at once; a lost race
// is retried on the newest metadata while the requirements hold. Updates
// that cannot apply to the table are 400. An assert-create requirement
// makes the commit create the table (a staged create).
func (h *Handler) commit(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	if isCreate(reqs) {
		return h.commitCreate(ctx, ident, reqs, updates)
	}
	wait := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		tbl, err := h.wh.LoadTable(ctx, ident)
		if err != nil {
			return nil, "", err
		}
		updates := placed(updates, tbl.Metadata().Location())
		if err := checkRequirements(tbl.Metadata(), reqs); err != nil {
			return nil, "", err
		}
		meta, loc, err := h.wh.CommitTable(ctx, ident, reqs, updates)
		if err == nil {
			return meta, loc, nil
		}
		if !errors.Is(err, table.ErrCommitFailed) {
			return nil, "", clientMistake(err, tbl, updates)
		}
		if attempt >= commitAttempts {
			return nil, "", err
		}
		if err := sleep(ctx, &wait); err != nil {
			return nil, "", err
		}
	}
}

// clientMistake is err, a commit's failure, as 400 when the updates cannot
// apply to the table tbl (the client's mistake), else as it is.
func clientMistake(err error, tbl *table.Table, updates []table.Update) error {
	if isKnown(err) {
		return err
	}
	if _, aerr := table.UpdateTableMetadata(tbl.Metadata(), updates, tbl.MetadataLocation()); aerr != nil {
		return badRequest("commit %s: %v", strings.Join(tbl.Identifier(), "."), aerr)
	}
	return err
}

// placed is updates with every set-location replaced by one to loc: the
// warehouse places tables itself and overrides a requested location, as
// the specification allows (a client's replace transaction may ask for
// another).
func placed(updates []table.Update, loc string) []table.Update {
	out := make([]table.Update, 0, len(updates))
	for _, u := range updates {
		if u.Action() == table.UpdateSetLocation {
			u = table.NewSetLocationUpdate(loc)
		}
		out = append(out, u)
	}
	return out
}

// sleep waits *wait with jitter and doubles it, up to commitMaxWait.
func sleep(ctx context.Context, wait *time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(*wait/2 + rand.N(*wait/2+1)):
	}
	*wait = min(2**wait, commitMaxWait)
	return nil
}

func isCreate(reqs []table.Requirement) bool {
	for _, q := range reqs {
		if q.GetType() == "assert-create" {
			return true
		}
	}
	return false
}

// commitCreate creates a table from the updates of a staged create: they
// build its metadata from nothing, as Java's TableMetadata.buildFromEmpty.
func (h *Handler) commitCreate(ctx context.Context, ident table.Identifier, reqs []table.Requirement, updates []table.Update) (table.Metadata, string, error) {
	name := strings.Join(ident, ".")
	exists := apiError(http.StatusConflict, "CommitFailedException", "Requirement failed: table already exists")
	if ok, err := h.wh.CheckTableExists(ctx, ident); err != nil {
		return nil, "", err
	} else if ok {
		return nil, "", exists
	}
	loc, err := h.wh.PlaceTable(ctx, ident)
	if err != nil {
		return nil, "", err
	}
	updates = append(schemaFirst(placed(updates, loc)), table.NewSetLocationUpdate(loc))
	version := 2
	for _, u := range updates {
		if u.Action() == table.UpdateUpgradeFormatVersion {
			if v, ok := formatVersion(u); ok {
				version = v
			}
		}
	}
	b, err := table.NewMetadataBuilder(version)
	if err != nil {
		return nil, "", badRequest("create table %s: %v", name, err)
	}
	for _, u := range updates {
		if err := u.Apply(b); err != nil {
			return nil, "", badRequest("create table %s: %v", name, err)
		}
	}
	meta, err := b.Build()
	if err != nil {
		return nil, "", badRequest("create table %s: %v", name, err)
	}
	others := slices.DeleteFunc(slices.Clone(reqs), func(q table.Requirement) bool { return q.GetType() == "assert-create" })
	if err := checkRequirements(meta, others); err != nil {
		return nil, "", err
	}
	tbl, err := h.wh.CreateTableFromMetadata(ctx, ident, meta)
	if err != nil {
		if errors.Is(err, catalog.ErrTableAlreadyExists) {
			return nil, "", exists
		}
		return nil, "", err
	}
	return tbl.Metadata(), tbl.MetadataLocation(), nil
}

// schemaFirst is a staged create's updates with the ones that set up the
// table's schema first, the others after them, each group in its order.
// The builder refuses a sort order or a partition spec before there is a
// current schema, and DuckDB's CREATE TABLE and CTAS send theirs first.
func schemaFirst(updates []table.Update) []table.Update {
	first := func(u table.Update) bool {
		switch u.Action() {
		case table.UpdateAssignUUID, table.UpdateUpgradeFormatVersion, table.UpdateAddSchema, table.UpdateSetCurrentSchema:
			return true
		}
		return false
	}
	out := make([]table.Update, 0, len(updates))
	for _, u := range updates {
		if first(u) {
			out = append(out, u)
		}
	}
	for _, u := range updates {
		if !first(u) {
			out = append(out, u)
		}
	}
	return out
}

// formatVersion is the version an upgrade-format-version update asks for.
func formatVersion(u table.Update) (int, bool) {
	data, err := json.Marshal(u)
	if err != nil {
		return 0, false
	}
	var v struct {
		FormatVersion int `json:"format-version"`
	}
	if json.Unmarshal(data, &v) != nil || v.FormatVersion == 0 {
		return 0, false
	}
	return v.FormatVersion, true
}

// dropTable drops a table. With purgeRequested its files are deleted;
// without, they stay, and the table can be registered again.
func (h *Handler) dropTable(r *http.Request) (any, error) {
	ident := tableIdent(r)
	purge, _ := strconv.ParseBool(r.URL.Query().Get("purgeRequested"))
	if purge {
		if err := h.wh.DropTable(r.Context(), ident); err != nil && !errors.Is(err, storage.ErrFilesLeft) {
			return nil, err
		}
		return nil, nil
	}
	return nil, h.wh.DetachTable(r.Context(), ident)
}

// registerTable binds a name to a table folder inside the warehouse (one a
// drop without purge left). A location outside the warehouse is refused:
// the REST API hands out no way to reach other places.
func (h *Handler) registerTable(r *http.Request) (any, error) {
	var req struct {
		Name             string `json:"name"`
		MetadataLocation string `json:"metadata-location"`
		Overwrite        bool   `json:"overwrite"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if req.Name == "" || req.MetadataLocation == "" {
		return nil, badRequest("register: the request needs a name and a metadata-location")
	}
	if req.Overwrite {
		return nil, badRequest("register %s: overwrite is not supported; drop the table first", req.Name)
	}
	ns := namespace(r)
	if err := h.checkNamespace(r, ns); err != nil {
		return nil, err
	}
	if h.cfg.S3 != nil {
		req.MetadataLocation = h.cfg.S3.toWarehouse(h.wh.Root(), req.MetadataLocation)
	}
	if err := storage.Inside(h.wh.Root(), req.MetadataLocation, true); err != nil {
		return nil, badRequest("register %s: %s is outside the warehouse %s; only tables inside it are registered through the REST catalog", req.Name, req.MetadataLocation, h.wh.Root())
	}
	tbl, err := h.wh.AdoptTable(r.Context(), append(slices.Clone(ns), req.Name), req.MetadataLocation)
	if err != nil {
		if !isKnown(err) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return h.loadResult(r, tbl.MetadataLocation(), tbl.Metadata())
}

func (h *Handler) renameTable(r *http.Request) (any, error) {
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
	from, to := req.Source.ident(), req.Destination.ident()
	if err := h.checkNamespace(r, req.Destination.Namespace); err != nil {
		return nil, err
	}
	if ok, err := h.wh.CheckTableExists(r.Context(), from); err != nil {
		return nil, err
	} else if !ok {
		return nil, fmt.Errorf("%w: %s", catalog.ErrNoSuchTable, strings.Join(from, "."))
	}
	if _, err := h.wh.RenameTable(r.Context(), from, to); err != nil {
		if !isKnown(err) {
			return nil, badRequest("%v", err)
		}
		return nil, err
	}
	return nil, nil
}

// reportMetrics accepts a client's scan and commit reports. icesql keeps
// none; the specification's answer is 204 either way. The table is not
// looked up: Spark reports on a staged table before it exists.
func (h *Handler) reportMetrics(r *http.Request) (any, error) {
	var report map[string]any
	if err := decode(r, &report); err != nil {
		return nil, err
	}
	return nil, nil
}
