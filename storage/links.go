package storage

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
)

// A link is a small JSON file that makes a name resolve to where a table or
// view lives (warehouse.go's link, views.go's viewLink). Creating one is
// the step that makes the name exist, so it is created once, never
// overwritten: a link already there is fs.ErrExist to the caller, unless
// it holds the same bytes (a retried create).

// writeLink creates the link file at path holding v.
func (w *Warehouse) writeLink(ctx context.Context, path string, v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return createOnce(ctx, w.store, path, data)
}

// readLink reads the link file at path into v; ok is false when there is
// none. kind names the link in errors ("table", "view"); valid checks what
// was read.
func (w *Warehouse) readLink(ctx context.Context, path, kind string, v any, valid func() bool) (ok bool, err error) {
	data, err := w.store.ReadFile(ctx, path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("read %s link %s: %w", kind, path, err)
	}
	if err := json.Unmarshal(data, v); err != nil || !valid() {
		return false, fmt.Errorf("corrupt %s link %s: %w", kind, path, err)
	}
	return true, nil
}
