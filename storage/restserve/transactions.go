package restserve

import (
	"errors"
	"net/http"
	"time"

	"github.com/apache/iceberg-go/table"

	"github.com/icesql/icesql/storage"
)

// commitTransaction commits changes to several tables all or nothing,
// through the warehouse's two-phase multi-table commit
// (storage/multicommit.go): every change is validated and applied first,
// then all are published or none. When a table changed between the two
// phases and every requirement still holds, the whole transaction is tried
// again on the newest metadata.
func (h *Handler) commitTransaction(r *http.Request) (any, error) {
	var req struct {
		TableChanges []commitRequest `json:"table-changes"`
	}
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	if len(req.TableChanges) == 0 {
		return nil, badRequest("transactions/commit: the request has no table-changes")
	}
	for i, c := range req.TableChanges {
		if c.Identifier == nil || c.Identifier.Name == "" {
			return nil, badRequest("transactions/commit: table change %d has no identifier", i+1)
		}
		if isCreate(c.Requirements) {
			return nil, badRequest("transactions/commit: table change %d (%s) creates a table; create tables one at a time", i+1, c.Identifier.Name)
		}
	}
	ctx := r.Context()
	wait := 2 * time.Millisecond
	for attempt := 1; ; attempt++ {
		d := h.wh.DeferredClientCommits()
		err := func() error {
			for _, c := range req.TableChanges {
				ident := c.Identifier.ident()
				tbl, err := d.LoadTable(ctx, ident)
				if err != nil {
					return err
				}
				if err := checkRequirements(tbl.Metadata(), c.Requirements); err != nil {
					return err
				}
				updates := placed(c.Updates, tbl.Metadata().Location())
				if _, _, err := d.CommitTable(ctx, ident, c.Requirements, updates); err != nil {
					if errors.Is(err, table.ErrCommitFailed) {
						return err
					}
					return clientMistake(err, tbl, updates)
				}
			}
			return d.Publish(ctx)
		}()
		if err == nil {
			return nil, nil
		}
		d.Discard(ctx)
		if !errors.Is(err, storage.ErrChangedBeforePublish) || attempt >= commitAttempts {
			return nil, err
		}
		if err := sleep(ctx, &wait); err != nil {
			return nil, err
		}
	}
}
