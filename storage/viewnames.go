package storage

import (
	"context"
	"fmt"
	"strings"
)

// ViewNames is one listing of a namespace's view links. go-mysql-server
// asks for a view before every table a statement names; answering from one
// listing per statement costs one read per namespace instead of one per
// name. A listing may name a view that is gone by the time it is loaded
// (LoadView then says so), never miss one that existed when it was taken.
type ViewNames struct {
	keys map[string]bool
}

// Has reports whether the listing holds a view of that name, in whatever
// case the client wrote it (the key rule of lookupView).
func (n ViewNames) Has(name string) bool {
	return validObjectName(name) && n.keys[viewKey(name)]
}

// ListViewNames lists the view links of namespace ns with one List of its
// views folder; the links themselves are not read.
func (w *Warehouse) ListViewNames(ctx context.Context, ns string) (ViewNames, error) {
	if !validObjectName(ns) {
		return ViewNames{}, nil // lookupView finds no view there either
	}
	entries, err := w.store.List(ctx, w.viewsDir(ns))
	if err != nil {
		return ViewNames{}, fmt.Errorf("list views of %s: %w", ns, err)
	}
	keys := map[string]bool{}
	for _, e := range entries {
		if key, ok := strings.CutSuffix(e.Name, ".json"); ok && !e.IsDir {
			keys[key] = true
		}
	}
	return ViewNames{keys: keys}, nil
}
