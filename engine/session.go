package engine

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/mysql_db"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// Session is one client's state: the go-mysql-server session plus the data
// files its open transaction wrote but has not committed, and the table
// snapshots pinned for the running statement.
//
// Writes are staged per table: every statement writes its Parquet files at
// once and adds them to the stage; COMMIT (or the end of an autocommit
// statement) turns each table's stage into one Iceberg append snapshot.
// ROLLBACK forgets the stage, so nothing becomes visible; the files it had
// written are orphans for remove_orphan_files.
type Session struct {
	*sql.BaseSession
	e *Engine

	mu         sync.Mutex
	staged     map[string]*stage
	savepoints []savepoint
	// stmt is the running statement's state; a new statement starts a new
	// one (resetPinsLocked).
	stmt statementState
	// txPins are the snapshots the open transaction reads (isolation.go):
	// each table's is pinned by the transaction's first read or write of
	// it and kept until COMMIT or ROLLBACK.
	txPins map[string]*table.Table
	// locked are the tables the open transaction read with FOR UPDATE, FOR
	// SHARE or under SERIALIZABLE, at the metadata it read; COMMIT checks
	// that their rows did not change since (storage/readcheck.go).
	locked map[string]lockedRead
	// lockPid is the statement locking was decided for (isolation.go).
	lockPid      uint64
	locking      bool
	fullPid      uint64         // the last statement the full analyzer planned (lookup.go)
	catalogReads statementReads // the views and namespaces one statement read (viewcache.go)
	rows         rowCache       // small tables' rows read by the running statement (rowcache.go)
	keys         keysDecision   // whether the last statement shows primary keys (keys.go)
	// temps are the session's temporary tables, by tempKey; tempBefore
	// the rows of those the open transaction changed, as it found them
	// (temptables.go).
	temps      map[string]*tempTable
	tempBefore map[*tempTable][]sql.Row
	stats      statementStats // what the statement scanned and committed (scanmetrics.go)
	// preparedTexts are the texts of the statements PREPARE made, by name
	// (decimalparams.go).
	preparedTexts map[string]string
}

// stage is what a transaction wrote to one table.
type stage struct {
	ident  table.Identifier
	target writeTarget // main, a branch, or a WAP id (refs.go)
	files  []iceberg.DataFile
	rowChanges
	// change is set by a statement that replaces whole files or the table
	// (TRUNCATE, INSERT OVERWRITE, REPLACE TABLE; filechange.go).
	change *fileChange
}

type savepoint struct {
	name   string
	stages map[string]stage         // copies of the stages when the savepoint was set
	temps  map[*tempTable][]sql.Row // the temporary tables' rows then
}

type transaction struct{ readOnly bool }

func (t *transaction) String() string   { return "icesql transaction" }
func (t *transaction) IsReadOnly() bool { return t.readOnly }

var (
	_ sql.TransactionSession = (*Session)(nil)
	_ sql.Transaction        = (*transaction)(nil)
)

// NewSession makes a session on the engine for the given client.
func (e *Engine) NewSession(base *sql.BaseSession) *Session {
	if !e.sqle.Analyzer.Catalog.MySQLDb.Enabled() {
		// Without users every session may do everything. go-mysql-server
		// computes privileges only for logins, and some information_schema
		// tables (VIEWS, ROUTINES) list nothing without them.
		base.SetPrivilegeSet(mysql_db.NewPrivilegeSetWithAllPrivileges(), 0)
	}
	return &Session{BaseSession: base, e: e, staged: map[string]*stage{}}
}

// sessionOf returns the icesql session of a context.
func sessionOf(ctx *sql.Context) *Session {
	if s, ok := ctx.Session.(*Session); ok {
		return s
	}
	panic(fmt.Sprintf("icesql: session of type %T is not an icesql session", ctx.Session))
}

func key(ident table.Identifier) string { return strings.Join(ident, ".") }

// pinnedTable loads a table once per statement, so every reference to it in
// the statement (a self-join, a subquery) reads the same snapshot; inside a
// REPEATABLE READ or SERIALIZABLE transaction, once per transaction
// (isolation.go). Every read and write of a table resolves it here.
func (s *Session) pinnedTable(ctx *sql.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	iso := sessionIsolation(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	k := key(ident)
	t, ok := s.stmt.pins[k]
	if !ok && iso.snapshotPerTransaction() {
		t, ok = s.txPins[k]
	}
	if !ok {
		var err error
		if t, err = cat.LoadTable(ctx, ident); err != nil {
			return nil, err
		}
	}
	s.stmt.pins[k] = t
	if iso.explicit && iso.snapshotPerTransaction() {
		if s.txPins == nil {
			s.txPins = map[string]*table.Table{}
		}
		s.txPins[k] = t
	}
	if iso.explicit && (iso.level == serializableTx || s.lockingReadLocked(ctx)) {
		if _, seen := s.locked[k]; !seen {
			if s.locked == nil {
				s.locked = map[string]lockedRead{}
			}
			s.locked[k] = lockedRead{ident: ident, meta: t.Metadata()}
		}
	}
	return t, nil
}

// statementState is what one statement (query id pid) keeps in its
// session; the transaction's state is Session's own fields.
type statementState struct {
	pid        uint64                      // the statement
	pins       map[string]*table.Table     // the snapshot each table is read at
	created    map[string]table.Identifier // tables CREATE TABLE ... AS SELECT made
	comments   map[string]string           // CREATE TABLE ... AS SELECT options, by table name
	views      map[string]pendingView      // CREATE VIEW columns, by lower-cased view name
	replacing  map[string]*replacement     // REPLACE TABLE ... AS SELECT (replacetable.go)
	identities map[string]*identityState   // row-identity scans, by table (rowidentity.go)
}

// resetPinsLocked starts statement pid's state unless it is the running one.
func (s *Session) resetPinsLocked(pid uint64) {
	if s.stmt.pins == nil || s.stmt.pid != pid {
		s.stmt = statementState{
			pid:        pid,
			pins:       map[string]*table.Table{},
			created:    map[string]table.Identifier{},
			comments:   map[string]string{},
			views:      map[string]pendingView{},
			replacing:  map[string]*replacement{},
			identities: map[string]*identityState{},
		}
	}
}

// markFullAnalysis records that the full analyzer plans the statement.
func (s *Session) markFullAnalysis(ctx *sql.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fullPid = ctx.Pid()
}

// fullAnalysis reports whether the full analyzer plans the statement.
func (s *Session) fullAnalysis(ctx *sql.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fullPid == ctx.Pid()
}

// rememberCreateComment keeps the table comment of a CREATE TABLE ... AS
// SELECT for the CreateTable call of the same statement.
func (s *Session) rememberCreateComment(ctx *sql.Context, table, comment string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	s.stmt.comments[table] = comment
}

// createComment returns the comment remembered for table in this statement.
func (s *Session) createComment(ctx *sql.Context, table string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	return s.stmt.comments[table]
}

// rememberView keeps what the analyzer saw of a CREATE VIEW in this statement.
func (s *Session) rememberView(ctx *sql.Context, name string, p pendingView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	s.stmt.views[strings.ToLower(name)] = p
}

// keepsView reports whether this statement replaces or renames view name,
// which Database.CreateView does in one step: the DropView before it must
// leave the view alone.
func (s *Session) keepsView(ctx *sql.Context, name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	for key, p := range s.stmt.views {
		if (p.replace && key == strings.ToLower(name)) || strings.EqualFold(p.renameFrom, name) {
			return true
		}
	}
	return false
}

// takeView returns and forgets what rememberView kept for name.
func (s *Session) takeView(ctx *sql.Context, name string) (pendingView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	p, ok := s.stmt.views[strings.ToLower(name)]
	delete(s.stmt.views, strings.ToLower(name))
	return p, ok
}

// unpin forgets a table's pinned snapshot, after a change to its metadata.
func (s *Session) unpin(ident table.Identifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.stmt.pins, key(ident))
	delete(s.txPins, key(ident))
}

// createdInStatement records a table that CREATE TABLE ... AS SELECT made,
// so that it is dropped again if the statement fails.
func (s *Session) createdInStatement(ctx *sql.Context, ident table.Identifier) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.resetPinsLocked(ctx.Pid())
	s.stmt.created[key(ident)] = ident
}

// dropIfCreatedInStatement undoes the CREATE of a failed CREATE TABLE ... AS SELECT.
func (s *Session) dropIfCreatedInStatement(ctx *sql.Context, ident table.Identifier) error {
	s.mu.Lock()
	_, ok := s.stmt.created[key(ident)]
	if ok && s.stmt.pid == ctx.Pid() {
		delete(s.stmt.created, key(ident))
	} else {
		ok = false
	}
	s.mu.Unlock()
	if !ok {
		return nil
	}
	return s.e.catalog.DropTable(ctx, ident)
}

// stagedFiles returns the files the open transaction wrote to a table.
func (s *Session) stagedFiles(ident table.Identifier) []iceberg.DataFile {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.staged[key(ident)]; ok {
		return slices.Clone(st.files)
	}
	return nil
}

// StartTransaction implements sql.TransactionSession. It is cheap: go-mysql-server
// starts one for every statement, and snapshots are pinned lazily.
// It does not reset the session's transaction state: go-mysql-server also
// starts one inside a CALL within an open transaction.
func (s *Session) StartTransaction(_ *sql.Context, tc sql.TransactionCharacteristic) (sql.Transaction, error) {
	return &transaction{readOnly: tc == sql.ReadOnly}, nil
}

// endTransactionLocked forgets what the transaction pinned, read and staged.
func (s *Session) endTransactionLocked() {
	s.staged = map[string]*stage{}
	s.savepoints = nil
	s.stmt.pins = nil
	s.txPins = nil
	s.locked = nil
	s.tempBefore = nil
}

// CommitTransaction implements sql.TransactionSession: one snapshot per
// table the transaction wrote. First every table is checked against what
// others committed since the transaction read it (locked reads, and the
// rows its UPDATE, DELETE and MERGE statements changed), so that a
// conflict (1213) writes nothing. A transaction that wrote several tables
// of the embedded catalog then commits them all or none (commitAll). On
// other catalogs, which have no multi-table commit in iceberg-go, tables
// commit one after another, each validated again atomically with its own
// commit, so if a later table's commit fails the earlier ones stay
// committed (the error says which).
func (s *Session) CommitTransaction(ctx *sql.Context, _ sql.Transaction) error {
	stages, err := s.commitTransaction(ctx)
	s.noteCommits(ctx, stages, err) // scanmetrics.go
	return err
}

// commitTransaction commits, and returns the stages it committed or tried to.
func (s *Session) commitTransaction(ctx *sql.Context) ([]*stage, error) {
	s.mu.Lock()
	stages := make([]*stage, 0, len(s.staged))
	for _, k := range slices.Sorted(maps.Keys(s.staged)) {
		stages = append(stages, s.staged[k])
	}
	locked := s.locked
	s.endTransactionLocked()
	s.mu.Unlock()

	for _, st := range stages {
		if r, ok := locked[key(st.ident)]; ok {
			st.readAt = r.meta
		}
	}
	if err := s.validateCommit(ctx, stages, locked); err != nil {
		return stages, err
	}
	if wh, ok := s.e.embedded(); ok && len(stages) > 1 {
		return stages, s.commitAll(ctx, wh, stages)
	}
	var committed []string
	for _, st := range stages {
		if err := s.commitStage(ctx, s.e.catalog, st); err != nil {
			done := ""
			if len(committed) > 0 {
				done = fmt.Sprintf(" (already committed: %s)", strings.Join(committed, ", "))
			}
			return stages, commitError(err, key(st.ident), done)
		}
		committed = append(committed, key(st.ident))
	}
	return stages, nil
}

// commitAll commits the stages of several tables of the embedded warehouse
// all or none (storage/multicommit.go): each table's commit is validated,
// written and held back, then all are published at once. A table that
// changed between the two phases (a commit of another session or process)
// has the commits prepared again, as a single table's commit retries.
func (s *Session) commitAll(ctx *sql.Context, wh *storage.Warehouse, stages []*stage) error {
	const attempts = 10
	for i := 1; ; i++ {
		d := wh.Deferred()
		for _, st := range stages {
			if err := s.commitStage(ctx, d, st); err != nil {
				d.Discard(ctx)
				return commitError(err, key(st.ident), "")
			}
		}
		err := d.Publish(ctx)
		if err == nil {
			return nil
		}
		if !errors.Is(err, storage.ErrChangedBeforePublish) || i == attempts {
			names := make([]string, len(stages))
			for j, st := range stages {
				names[j] = key(st.ident)
			}
			return commitError(err, strings.Join(names, ", "), "")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(i) * 5 * time.Millisecond):
		}
	}
}

// validateCommit checks every table the transaction read with a lock or
// changed rows of against the newest commits, before anything commits.
func (s *Session) validateCommit(ctx *sql.Context, stages []*stage, locked map[string]lockedRead) error {
	checked := map[string]bool{} // tables whose commit checks the locked read itself
	for _, st := range stages {
		if st.change != nil || st.target.wapID != "" {
			continue // validated by its own commit, before it writes anything; a locked read is checked below
		}
		checked[key(st.ident)] = true
		if len(stages) == 1 {
			continue // its commit validates atomically
		}
		if err := storage.ValidateRowDelta(ctx, s.e.catalog, st.ident, st.delta()); err != nil {
			return commitError(err, key(st.ident), "")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(locked)) {
		r := locked[k]
		if checked[k] {
			continue // checked above and again by the stage's commit
		}
		if err := storage.ValidateRead(ctx, s.e.catalog, r.ident, r.meta); err != nil {
			if errors.Is(err, catalog.ErrNoSuchTable) {
				err = fmt.Errorf("%w: the table was dropped", storage.ErrRowConflict)
			}
			return commitError(err, k, "")
		}
	}
	return nil
}

// commitError is the error of a failed commit to table: 1213 for a
// conflict with a concurrent commit, else the cause with its MySQL code.
// done names the tables the transaction had already committed.
func commitError(err error, table, done string) error {
	if mysqlerr.IsConflict(err) {
		if done == "" {
			done = "; nothing of the transaction was written"
		}
		return mysqlerr.Conflict("commit to %s conflicted with a concurrent commit%s; retry the transaction: %v", table, done, err)
	}
	return mysqlerr.Annotated(mysqlerr.CatalogError(err, table), fmt.Sprintf("commit to %s%s", table, done))
}

// snapshotSummary are the properties icesql adds to every snapshot summary.
func snapshotSummary() iceberg.Properties {
	return iceberg.Properties{"engine-name": "icesql", "engine-version": Version}
}

// Rollback implements sql.TransactionSession.
func (s *Session) Rollback(*sql.Context, sql.Transaction) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.restoreTempsLocked(nil)
	s.endTransactionLocked()
	return nil
}

// CreateSavepoint implements sql.TransactionSession.
func (s *Session) CreateSavepoint(_ *sql.Context, _ sql.Transaction, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	stages := map[string]stage{}
	for k, st := range s.staged {
		stages[k] = st.clone()
	}
	s.dropSavepointLocked(name)
	s.savepoints = append(s.savepoints, savepoint{name: name, stages: stages, temps: s.tempRowsLocked()})
	return nil
}

// RollbackToSavepoint implements sql.TransactionSession.
func (s *Session) RollbackToSavepoint(_ *sql.Context, _ sql.Transaction, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	i := s.findSavepointLocked(name)
	if i < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	sp := s.savepoints[i]
	s.staged = map[string]*stage{}
	for k, st := range sp.stages {
		c := st.clone()
		s.staged[k] = &c
	}
	s.restoreTempsLocked(sp.temps)
	s.savepoints = s.savepoints[:i+1]
	s.stmt.pins = nil
	return nil
}

// ReleaseSavepoint implements sql.TransactionSession.
func (s *Session) ReleaseSavepoint(_ *sql.Context, _ sql.Transaction, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.findSavepointLocked(name) < 0 {
		return sql.ErrSavepointDoesNotExist.New(name)
	}
	s.dropSavepointLocked(name)
	return nil
}

func (s *Session) findSavepointLocked(name string) int {
	for i := len(s.savepoints) - 1; i >= 0; i-- {
		if strings.EqualFold(s.savepoints[i].name, name) {
			return i
		}
	}
	return -1
}

func (s *Session) dropSavepointLocked(name string) {
	if i := s.findSavepointLocked(name); i >= 0 {
		s.savepoints = s.savepoints[:i]
	}
}
