package engine

import (
	"context"
	"strings"
	"sync"

	"github.com/dolthub/go-mysql-server/sql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// go-mysql-server asks the database for a view before every table a
// statement names, and each question used to read the store (a GET of a
// missing view link on S3). A statement now answers its first question in
// a namespace with that read, as before, and lists the namespace's views
// on its second, answering the others from the listing: a single-table
// statement keeps its one GET (a LIST costs S3 users more), one naming N
// tables makes two reads instead of N. Views it loads are kept for the
// rest of the statement. Nothing is kept
// across statements, so the next statement sees every view another
// session or process created, replaced, renamed or dropped meanwhile;
// the statement's own CREATE, DROP or RENAME of a view forgets what it
// had read.

// viewNameLister is a catalog that lists a namespace's view names in one
// read (the embedded catalog).
type viewNameLister interface {
	ListViewNames(ctx context.Context, ns string) (storage.ViewNames, error)
}

// statementReads is what one statement of a session read of views, and
// of the catalog's namespaces: go-mysql-server resolves the database of
// names a statement holds several times, and each resolution listed the
// warehouse (three listings for a one-table SELECT).
type statementReads struct {
	mu    sync.Mutex
	pid   uint64                       // the statement
	nss   []string                     // the namespaces, once listed
	names map[string]storage.ViewNames // by namespace
	asked map[string]bool              // namespaces asked once, not listed
	defs  map[string]sql.ViewDefinition
}

// GetViewDefinition implements sql.ViewDatabase. A name the statement's
// listing of the namespace does not hold is no view, without a read.
func (d *Database) GetViewDefinition(ctx *sql.Context, name string) (sql.ViewDefinition, bool, error) {
	vc, ok := d.views()
	if !ok {
		return sql.ViewDefinition{}, false, nil
	}
	sv := statementReadsOf(ctx)
	lister, ok := vc.(viewNameLister)
	if sv == nil || !ok {
		return d.loadViewDefinition(ctx, vc, name)
	}
	defKey := d.name + "\x00" + strings.ToLower(name)
	if def, ok := sv.definition(ctx, defKey); ok {
		return def, true, nil
	}
	names, listed, err := sv.viewNames(ctx, lister, d.name)
	if err != nil {
		return sql.ViewDefinition{}, false, mysqlerr.CatalogError(err, d.name)
	}
	if listed && !names.Has(name) {
		return sql.ViewDefinition{}, false, nil
	}
	def, found, err := d.loadViewDefinition(ctx, vc, name)
	if found && err == nil {
		sv.keepDefinition(ctx, defKey, def)
	}
	return def, found, err
}

// statementReadsOf is the session's view cache, or nil when the context
// names no statement to scope it to.
func statementReadsOf(ctx *sql.Context) *statementReads {
	s, ok := ctx.Session.(*Session)
	if !ok || ctx.Pid() == 0 {
		return nil
	}
	return &s.catalogReads
}

// resetLocked forgets what an earlier statement read.
func (sv *statementReads) resetLocked(pid uint64) {
	if sv.names == nil || sv.pid != pid {
		sv.pid = pid
		sv.nss = nil
		sv.names = map[string]storage.ViewNames{}
		sv.asked = map[string]bool{}
		sv.defs = map[string]sql.ViewDefinition{}
	}
}

func (sv *statementReads) definition(ctx *sql.Context, key string) (sql.ViewDefinition, bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.resetLocked(ctx.Pid())
	def, ok := sv.defs[key]
	return def, ok
}

func (sv *statementReads) keepDefinition(ctx *sql.Context, key string, def sql.ViewDefinition) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.resetLocked(ctx.Pid())
	sv.defs[key] = def
}

// viewNames lists the namespace's views once per statement, from its
// second question on: listed is false on the first, which reads the one
// name it asks about.
func (sv *statementReads) viewNames(ctx *sql.Context, lister viewNameLister, ns string) (names storage.ViewNames, listed bool, err error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.resetLocked(ctx.Pid())
	if names, ok := sv.names[ns]; ok {
		return names, true, nil
	}
	if !sv.asked[ns] {
		sv.asked[ns] = true
		return storage.ViewNames{}, false, nil
	}
	names, err = lister.ListViewNames(ctx, ns)
	if err != nil {
		return storage.ViewNames{}, false, err
	}
	sv.names[ns] = names
	return names, true, nil
}

// namespaces lists the catalog's namespaces once per statement.
func (sv *statementReads) namespaces(ctx *sql.Context, list func() ([]string, error)) ([]string, error) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.resetLocked(ctx.Pid())
	if sv.nss != nil {
		return sv.nss, nil
	}
	nss, err := list()
	if err != nil {
		return nil, err
	}
	sv.nss = nss
	return nss, nil
}

// forgetCatalogReads drops what the statement read of views and namespaces, once
// it changed a view or a namespace.
func forgetCatalogReads(ctx *sql.Context) {
	if sv := statementReadsOf(ctx); sv != nil {
		sv.mu.Lock()
		defer sv.mu.Unlock()
		sv.names, sv.asked, sv.defs, sv.nss = nil, nil, nil, nil
	}
}
