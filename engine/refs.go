package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// Branches and tags as tables, as Spark names them: db.t.branch_dev and
// db.t.tag_v1 (which the planner rewrites to db.`t$branch_dev`, as it does
// metadata tables). A branch reads its head with the table's current
// schema and takes writes; a tag reads its snapshot with that snapshot's
// schema, like VERSION AS OF, and takes none.

const (
	branchPrefix = "branch_"
	tagPrefix    = "tag_"
)

// splitRefName splits t$branch_x or t$tag_x into the table's name and the
// ref's; ok is false for any other name.
func splitRefName(name string) (base, ref string, tag, ok bool) {
	i := strings.LastIndex(name, "$")
	if i <= 0 {
		return "", "", false, false
	}
	base, sel := name[:i], name[i+1:]
	switch {
	case len(sel) > len(branchPrefix) && strings.EqualFold(sel[:len(branchPrefix)], branchPrefix):
		return base, sel[len(branchPrefix):], false, true
	case len(sel) > len(tagPrefix) && strings.EqualFold(sel[:len(tagPrefix)], tagPrefix):
		return base, sel[len(tagPrefix):], true, true
	}
	return "", "", false, false
}

// refTable resolves t$branch_x and t$tag_x. A branch that does not exist
// yet resolves too, since writing to it creates it (as in Spark); reading it
// fails.
func (d *Database) refTable(ctx *sql.Context, name string) (sql.Table, bool, error) {
	base, ref, isTag, ok := splitRefName(name)
	if !ok {
		return nil, false, nil
	}
	real, ok, err := d.resolveTable(ctx, base)
	if err != nil || !ok {
		return nil, false, err
	}
	ident := d.ident(real)
	tbl, err := sessionOf(ctx).pinnedTable(ctx, d.e.catalog, ident)
	if err != nil {
		return nil, false, mysqlerr.CatalogError(err, base)
	}
	r, exists := storage.RefNamed(tbl.Metadata(), ref)
	switch {
	case isTag && !exists:
		return nil, false, mysqlerr.New(mysql.ERNoSuchTable,
			"table %s.%s has no tag %s", d.name, real, ref)
	case exists && r.SnapshotRefType != table.TagRef && isTag:
		return nil, false, mysqlerr.New(mysqlerr.ErWrongObject, "Ref %s of %s.%s is a branch not a tag", ref, d.name, real)
	case exists && r.SnapshotRefType == table.TagRef && !isTag:
		return nil, false, mysqlerr.New(mysqlerr.ErWrongObject, "Ref %s of %s.%s is a tag not a branch", ref, d.name, real)
	case isTag:
		t := newTableAsOf(d, real, tbl, tbl.Metadata().SnapshotByID(r.SnapshotID))
		t.tag = ref
		sessionOf(ctx).noteScan(ctx, t) // scanmetrics.go
		return t, true, nil
	}
	t := d.branchTable(ctx, real, tbl, ref)
	sessionOf(ctx).noteScan(ctx, t)
	return t, true, nil
}

// branchTable is tbl on branch, with what the open transaction staged for
// it. main stays named: db.t.branch_main is main even when the session's WAP
// branch is another.
func (d *Database) branchTable(ctx *sql.Context, real string, tbl *table.Table, branch string) *Table {
	t := newTable(d, real, tbl, sessionOf(ctx).stagedFilesAt(d.ident(real), writeTarget{branch: branch}))
	t.branch = branch
	t.changes = sessionOf(ctx).stagedChanges(d.ident(real), writeTarget{branch: branch})
	return t
}

// branchAsOf reports whether AS OF names a branch: then, as in Spark, the
// table reads the branch with its current schema (a tag or a snapshot id
// reads with the snapshot's).
func branchAsOf(tbl *table.Table, asOf any) (string, bool) {
	name, ok := asOf.(string)
	if !ok || strings.Trim(name, "0123456789") == "" {
		return "", false
	}
	r, ok := storage.RefNamed(tbl.Metadata(), name)
	return name, ok && r.SnapshotRefType == table.BranchRef
}

// sessionTable is the table as a plain name reads it in this session: main,
// or the session's WAP branch (spark.wap.branch) when the table has
// write.wap.enabled and that branch exists, as Spark reads it.
func (d *Database) sessionTable(ctx *sql.Context, real string, tbl *table.Table) *Table {
	if branch, _ := wapSettings(ctx); branch != "" && wapEnabled(tbl) {
		_, exists := storage.RefNamed(tbl.Metadata(), branch)
		if exists || sessionOf(ctx).hasStage(d.ident(real), writeTarget{branch: branch}) {
			return d.branchTable(ctx, real, tbl, branch)
		}
	}
	return newTable(d, real, tbl, sessionOf(ctx).stagedFiles(d.ident(real)))
}

// onBranch makes a scan of the table read its branch, if it has one: the
// branch's head with the table's current schema.
func (t *Table) onBranch(scan *table.Scan) (*table.Scan, error) {
	if t.branch == "" {
		return scan, nil
	}
	out, err := scan.UseRef(t.branch)
	if errors.Is(err, iceberg.ErrInvalidArgument) {
		return nil, mysqlerr.New(mysql.ERNoSuchTable,
			"table %s.%s has no branch %s (writing to it creates it)", t.db.name, t.name, t.branch)
	}
	return out, err
}

// refString describes the ref a table reads, for EXPLAIN and messages.
func (t *Table) refString() string {
	switch {
	case t.branch != "":
		return " BRANCH " + t.branch
	case t.tag != "":
		return " TAG " + t.tag
	}
	return ""
}

// writeTarget is where a table's staged files commit: a branch ("" is
// main), or, with a WAP id, a snapshot no branch points at.
type writeTarget struct {
	branch string
	wapID  string
}

// stageKey keys the session's stage of ident for this target; main's is
// the table's own key, so code that knows only main finds its stage.
func (w writeTarget) stageKey(ident table.Identifier) string {
	switch {
	case w.wapID != "":
		return key(ident) + "\x00wap\x00" + w.wapID
	case w.branch != "" && w.branch != table.MainBranch:
		return key(ident) + "\x00branch\x00" + w.branch
	}
	return key(ident)
}

// writeTarget is where this statement's writes to t go. A tag or a table
// read AS OF takes no writes. Otherwise, as in Spark: with write.wap.enabled
// the session's spark.wap.id stages the snapshot and spark.wap.branch writes
// to that branch (both at once is an error); a branch named in the table
// identifier (db.t.branch_x) wins over the WAP branch, as in Spark 4.1.
// UPDATE, DELETE and MERGE stage their changes under this target too
// (branchrowlevel.go).
func (t *Table) writeTarget(ctx *sql.Context) (writeTarget, error) {
	if t.snapshotID != nil {
		what := "a snapshot read AS OF"
		if t.tag != "" {
			what = "tag " + t.tag
		}
		return writeTarget{}, mysqlerr.New(mysql.ERNonUpdateableTable,
			"The target table %s.%s (%s) is not updatable: only branches take writes", t.db.name, t.name, what)
	}
	if wapEnabled(t.tbl) {
		branch, id := wapSettings(ctx)
		if branch != "" && id != "" {
			return writeTarget{}, mysqlerr.New(mysql.ERWrongArguments,
				"Cannot set both WAP ID and branch, but got ID [%s] and branch [%s]", id, branch)
		}
		switch {
		case t.branch != "":
			return writeTarget{branch: t.branch}, nil
		case branch != "":
			return writeTarget{branch: branch}, nil
		case id != "":
			return writeTarget{wapID: id}, nil
		}
	}
	return writeTarget{branch: t.branch}, nil
}

// stagedFilesAt returns the files the open transaction wrote to ident for
// target w.
func (s *Session) stagedFilesAt(ident table.Identifier, w writeTarget) []iceberg.DataFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.staged[w.stageKey(ident)]; ok {
		return slices.Clone(st.files)
	}
	return nil
}

// stageFilesAt adds a completed statement's files to the transaction, to
// commit to target w.
func (s *Session) stageFilesAt(ident table.Identifier, w writeTarget, files []iceberg.DataFile) {
	if len(files) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := w.stageKey(ident)
	st, ok := s.staged[k]
	if !ok {
		st = &stage{ident: ident, target: w}
		s.staged[k] = st
	}
	st.files = append(st.files, files...)
}

// commit commits the stage as one snapshot: an append to its branch, or a
// staged WAP snapshot carrying wap.id.
func (st *stage) commit(ctx context.Context, cat catalog.Catalog, summary iceberg.Properties) error {
	switch {
	case st.target.wapID != "":
		summary[storage.WapIDProperty] = st.target.wapID
		_, err := storage.StageFiles(ctx, cat, st.ident, st.files, summary)
		return err
	case st.target.branch != "":
		_, err := storage.AppendFilesToBranch(ctx, cat, st.ident, st.target.branch, st.files, summary)
		return refError(err)
	}
	_, err := storage.AppendFiles(ctx, cat, st.ident, st.files, summary)
	return err
}
