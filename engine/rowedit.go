package engine

import (
	"fmt"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"
	"github.com/icesql/icesql/engine/internal/mysqlerr"
)

var (
	_ sql.DeletableTable = (*Table)(nil)
	_ sql.UpdatableTable = (*Table)(nil)
)

// Deleter implements sql.DeletableTable for the row-identity variant that
// DELETE resolves its target to (rowidentity.go).
func (t *Table) Deleter(*sql.Context) sql.RowDeleter { return t.rowEditor("delete") }

// Updater implements sql.UpdatableTable likewise for UPDATE.
func (t *Table) Updater(*sql.Context) sql.RowUpdater { return t.rowEditor("update") }

func (t *Table) rowEditor(op string) *rowEditor {
	ed := &rowEditor{t: t, op: op, dels: map[string][]int64{}}
	if t.identity == nil {
		// Only the row-identity variant knows where its rows live, and the
		// parser gives every UPDATE and DELETE target that variant; a plain
		// table here is the same table read again in the statement (a
		// subquery), which go-mysql-server took for the target. MySQL
		// refuses such statements too.
		ed.err = mysqlerr.New(mysql.ERUpdateTableUsed, "You can't specify target table '%s' for update in FROM clause", t.name)
	}
	return ed
}

// rowEditor collects a statement's deleted positions and new rows; at the
// end of the statement they become staged changes (rowdelta.go).
type rowEditor struct {
	t    *Table
	op   string
	dels map[string][]int64
	ins  *inserter // new rows of UPDATE
	// moved are UPDATE's new rows on a v3 table, which keep their ids
	// (rowupdate_v3.go).
	moved *movedWriter
	err   error
}

// StatementBegin implements sql.EditOpenerCloser.
func (ed *rowEditor) StatementBegin(*sql.Context) {}

// identityOf returns the data file and position at the end of a full row.
func (ed *rowEditor) identityOf(row sql.Row) (string, int64, error) {
	n := len(ed.t.schema)
	if len(row) != n+2 {
		return "", 0, fmt.Errorf("%s of %s: row of %d values has no row position", ed.op, ed.t, len(row))
	}
	file, ok1 := row[n].(string)
	pos, ok2 := row[n+1].(int64)
	if !ok1 || !ok2 {
		return "", 0, fmt.Errorf("%s of %s: row position (%v, %v) is not (file, position)", ed.op, ed.t, row[n], row[n+1])
	}
	return file, pos, nil
}

// Delete implements sql.RowDeleter.
func (ed *rowEditor) Delete(_ *sql.Context, row sql.Row) error {
	if ed.err != nil {
		return ed.err
	}
	file, pos, err := ed.identityOf(row)
	if err != nil {
		return err
	}
	ed.dels[file] = append(ed.dels[file], pos)
	return nil
}

// Update implements sql.RowUpdater: the old row is deleted and the new one
// written, which moves it to its partition when a partition source column
// changed.
func (ed *rowEditor) Update(ctx *sql.Context, old, new sql.Row) error {
	if ed.err != nil {
		return ed.err
	}
	file, pos, err := ed.identityOf(old)
	if err != nil {
		return err
	}
	nfile, npos, err := ed.identityOf(new)
	if err != nil {
		return err
	}
	if nfile != file || npos != pos {
		return hiddenColumnError()
	}
	ed.dels[file] = append(ed.dels[file], pos)
	if ed.t.formatV3() {
		return ed.keepID(ctx, file, pos, new[:len(ed.t.schema)])
	}
	if ed.ins == nil {
		ed.ins = &inserter{t: ed.t}
	}
	return ed.ins.Insert(ctx, new[:len(ed.t.schema)])
}

func hiddenColumnError() error {
	return mysqlerr.New(mysql.ERBadFieldError, "%s and %s are hidden columns naming a row's data file and position; they cannot be set", fileColumn, posColumn)
}

// StatementComplete implements sql.EditOpenerCloser: the new rows' files
// are written, then the deletes made, and both staged together, so a
// failure leaves the transaction as it was.
func (ed *rowEditor) StatementComplete(ctx *sql.Context) error {
	if ed.err != nil {
		return ed.err
	}
	var files []iceberg.DataFile
	if ins := ed.ins; ins != nil {
		if ins.err != nil {
			return ins.err
		}
		ins.flush(ctx)
		if ins.err != nil {
			return ins.err
		}
		if ins.writer != nil {
			var err error
			files, err = ins.writer.finish()
			ins.writer = nil
			if err != nil {
				return fmt.Errorf("write data files of %s: %w", ed.t, err)
			}
		}
	}
	moved, err := ed.moved.finish(ctx)
	if err != nil {
		return err
	}
	return sessionOf(ctx).stageRowChanges(ctx, ed.t, ed.op, ed.dels, append(files, moved...))
}

// DiscardChanges implements sql.EditOpenerCloser.
func (ed *rowEditor) DiscardChanges(ctx *sql.Context, _ error) error {
	ed.stop(ctx)
	return nil
}

// Close implements sql.Closer.
func (ed *rowEditor) Close(ctx *sql.Context) error {
	ed.stop(ctx)
	return nil
}

func (ed *rowEditor) stop(ctx *sql.Context) {
	if ed.ins != nil {
		ed.ins.stop(ctx)
	}
	ed.moved.stop()
	ed.dels = map[string][]int64{}
}
