package history

import (
	"context"
	gosql "database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	vmysql "github.com/dolthub/vitess/go/mysql"
	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// session is one history's pair of databases: a fresh icesql warehouse
// (two sessions of one engine: vector path on and off) and a fresh MariaDB
// database, with what the tester knows of each table's snapshots.
type session struct {
	dir     string
	eng     *engine.Engine
	ice     *gosql.DB
	on, off *gosql.Conn
	mdb     *gosql.DB
	mc      *gosql.Conn
	mname   string
	timeout time.Duration
	tables  map[string]*tableRun
	kept    bool // the warehouse stays when the session closes (Options.Keep)
}

// tableRun is the oracle's record of a table's snapshots: which ones are
// ancestors of main, which still exist, and a MariaDB copy of the rows
// each one holds.
type tableRun struct {
	head   int64
	chain  []int64 // ancestors of main, oldest first
	snaps  map[int64]*snapRec
	byStep map[int]int64 // step ID -> the snapshot it made
	// branches are the other branches' heads and ancestors; tags the
	// snapshot each tag names.
	branches map[string]*branchRun
	tags     map[string]int64
}

type branchRun struct {
	head  int64
	chain []int64
}

type snapRec struct {
	step int
	copy string // MariaDB table holding the snapshot's rows
	sig  string // its columns
	cols []Column
}

// openSession opens fresh databases; name is the MariaDB database (one per
// session: a shrinking replay runs while its history's session is open).
func openSession(ctx context.Context, m *MariaDB, dir, name string, timeout time.Duration) (*session, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	s := &session{dir: dir, mname: name, timeout: timeout, tables: map[string]*tableRun{}}
	ok := false
	defer func() {
		if !ok {
			s.close()
		}
	}()
	var err error
	if s.eng, err = engine.Open(ctx, engine.Config{Warehouse: dir}); err != nil {
		return nil, fmt.Errorf("open icesql: %w", err)
	}
	s.ice = gosql.OpenDB(s.eng.Connector())
	if s.on, err = s.ice.Conn(ctx); err != nil {
		return nil, err
	}
	if _, err := s.on.ExecContext(ctx, "CREATE DATABASE h"); err != nil {
		return nil, err
	}
	if s.off, err = s.ice.Conn(ctx); err != nil {
		return nil, err
	}
	for _, q := range []string{"USE h", "SET time_zone = '+00:00'"} {
		for _, c := range []*gosql.Conn{s.on, s.off} {
			if _, err := c.ExecContext(ctx, q); err != nil {
				return nil, fmt.Errorf("icesql %s: %w", q, err)
			}
		}
	}
	if _, err := s.off.ExecContext(ctx, "SET icesql_vectorize = OFF"); err != nil {
		return nil, err
	}
	if s.mdb, err = m.Open(""); err != nil {
		return nil, err
	}
	if err := s.connectMaria(ctx, "DROP DATABASE IF EXISTS "+name, "CREATE DATABASE "+name+" CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin"); err != nil {
		return nil, err
	}
	ok = true
	return s, nil
}

// connectMaria opens the session's MariaDB connection (again, after a
// query timed out: the driver drops a connection whose query it
// abandons), running first before.
func (s *session) connectMaria(ctx context.Context, before ...string) error {
	if s.mc != nil {
		s.mc.Close()
	}
	var err error
	if s.mc, err = s.mdb.Conn(ctx); err != nil {
		return err
	}
	// MariaDB stops a statement itself a second before the tester would,
	// so that the connection survives a slow query.
	limit := max(1, int(s.timeout.Seconds())-1)
	for _, q := range append(before, "USE "+s.mname,
		"SET time_zone = '+00:00'",
		"SET sql_mode = 'STRICT_ALL_TABLES,ONLY_FULL_GROUP_BY,NO_ENGINE_SUBSTITUTION,ERROR_FOR_DIVISION_BY_ZERO'",
		fmt.Sprintf("SET max_statement_time = %d", limit),
	) {
		if _, err := s.mc.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("mariadb %s: %w", q, err)
		}
	}
	return nil
}

func (s *session) close() {
	if s.mc != nil {
		s.mc.ExecContext(context.Background(), "DROP DATABASE IF EXISTS "+s.mname)
	}
	for _, c := range []*gosql.Conn{s.on, s.off, s.mc} {
		if c != nil {
			c.Close()
		}
	}
	if s.ice != nil {
		s.ice.Close()
	}
	if s.eng != nil {
		s.eng.Close()
	}
	if s.mdb != nil {
		s.mdb.Close()
	}
	if !s.kept {
		os.RemoveAll(s.dir)
	}
}

func (s *session) table(name string) *tableRun {
	tr := s.tables[name]
	if tr == nil {
		tr = &tableRun{snaps: map[int64]*snapRec{}, byStep: map[int]int64{}, branches: map[string]*branchRun{}, tags: map[string]int64{}}
		s.tables[name] = tr
	}
	return tr
}

// outcome is what a statement did on each side.
type outcome struct {
	skipped bool // a rollback whose snapshot this replay does not have
	iceErr  error
	mErr    error
	// overflow: one side failed with 1690 where the other succeeded, and
	// the overflow is confirmed (confirmOverflow). The table's rows, compared
	// after the statement, show whether the succeeding side changed what the
	// failing side did not.
	overflow bool
}

// oneSided says one side failed where the other succeeded, other than by a
// confirmed overflow.
func (o outcome) oneSided() bool { return (o.iceErr == nil) != (o.mErr == nil) && !o.overflow }

// readTables are the tables a step's unqualified overflow-prone expressions
// may be evaluated on: its target and every table of the history its text
// names (a MERGE's source).
func (s *session) readTables(st *Step) []string {
	target, _ := st.targets()
	tables := []string{target}
	words := word.FindAllString(st.Ice, -1)
	for name := range s.tables {
		if name != target && slices.Contains(words, name) {
			tables = append(tables, name)
		}
	}
	slices.Sort(tables[1:])
	return tables
}

func (o outcome) String() string {
	return fmt.Sprintf("icesql: %v; MariaDB: %v", errText(o.iceErr), errText(o.mErr))
}

func errText(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// apply runs a step on both sides and records the snapshot it made.
// model, when not nil, is the generator's table (for the columns of the
// snapshot, which time-travel queries name).
func (s *session) apply(ctx context.Context, st *Step, model *Table) (outcome, error) {
	tr := s.table(st.Table)
	ice, maria := st.Ice, st.Maria
	var target int64
	switch st.Kind {
	case "rollback":
		id, ok := tr.byStep[st.Target]
		rec := tr.snaps[id]
		if !ok || rec == nil || id == tr.head || !slices.Contains(tr.chain, id) {
			return outcome{skipped: true}, nil
		}
		if sig, err := s.mariaSig(ctx, st.Table); err != nil || sig != rec.sig {
			return outcome{skipped: true}, err
		}
		target = id
		ice = fmt.Sprintf("CALL system.rollback_to_snapshot('h.%s', %d)", st.Table, id)
		maria = []string{"DELETE FROM " + st.Table, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", st.Table, rec.copy)}
	case "ref/fast_forward":
		// Iceberg fast-forwards main only to a branch it is an ancestor of.
		br := tr.branches[st.Ref]
		if br == nil || !slices.Contains(br.chain, tr.head) {
			return outcome{skipped: true}, nil
		}
		target = br.head
	case "ref/tag":
		if tr.snaps[tr.head] == nil {
			return outcome{skipped: true}, nil
		}
	}
	var o outcome
	_, o.iceErr = s.on.ExecContext(ctx, ice)
	probes := overflowProbes(ice, s.readTables(st))
	if outOfRange(o.iceErr) && s.confirmOverflow(ctx, probes) {
		// icesql refused by an overflow its plan met; MariaDB's plan may
		// skip the row and change rows. Both are MySQL's answers, and the
		// histories stay the same when MariaDB's change is undone.
		o.mErr = s.mariaExecUndone(ctx, maria)
		o.overflow = o.mErr == nil
	} else {
		o.mErr = s.mariaExec(ctx, maria)
		if o.iceErr == nil && outOfRange(o.mErr) && s.confirmOverflow(ctx, probes) {
			// The reverse: MariaDB runs the statement again with exact
			// arithmetic, which evaluates every row as icesql's plan did
			// every row it reached (the others' overflowing terms decided
			// nothing there).
			o.mErr = s.mariaExec(ctx, exactArithmetic(maria))
			o.overflow = o.mErr == nil
		}
	}
	if o.iceErr != nil {
		return o, nil
	}
	head, err := s.head(ctx, st.Table, "main")
	if err != nil {
		return o, err
	}
	var br *branchRun
	if st.Ref != "" && !strings.HasPrefix(st.Kind, "ref/") {
		// A write to a branch: main stays where it was.
		if head != tr.head {
			o.iceErr = fmt.Errorf("main moved from snapshot %d to %d on a write to branch %s", tr.head, head, st.Ref)
			return o, nil
		}
		if br = tr.branches[st.Ref]; br == nil {
			return o, nil // a branch this replay did not create: MariaDB refused the write
		}
		if head, err = s.head(ctx, st.Table, st.Ref); err != nil {
			return o, err
		}
	}
	switch {
	case st.Kind == "rollback" || st.Kind == "ref/fast_forward":
		if head != target {
			o.iceErr = fmt.Errorf("main is at snapshot %d after %s (expected %d)", head, st.Kind, target)
			return o, nil
		}
		if st.Kind == "rollback" {
			tr.chain = tr.chain[:slices.Index(tr.chain, target)+1]
		} else {
			tr.chain = slices.Clone(tr.branches[st.Ref].chain)
		}
	case st.Kind == "ref/branch":
		tr.branches[st.Ref] = &branchRun{head: tr.head, chain: slices.Clone(tr.chain)}
	case st.Kind == "ref/tag":
		tr.tags[st.Ref] = tr.head
	case st.Kind == "ref/drop":
		delete(tr.branches, st.Ref)
	case br != nil && head != br.head || br == nil && head != tr.head && head != 0:
		if _, seen := tr.snaps[head]; seen {
			return o, fmt.Errorf("%s moved a branch back to snapshot %d", st.Ice, head)
		}
		rec := &snapRec{step: st.ID, copy: fmt.Sprintf("snap_%s_%d", st.Table, st.ID)}
		if model != nil {
			rec.cols = slices.Clone(model.Cols)
		}
		_, rows := st.targets()
		if err := s.mariaExec(ctx, []string{fmt.Sprintf("CREATE TABLE %s AS SELECT * FROM %s", rec.copy, rows)}); err != nil {
			return o, fmt.Errorf("copy snapshot rows: %w", err)
		}
		if rec.sig, err = s.mariaSig(ctx, st.Table); err != nil {
			return o, err
		}
		tr.snaps[head] = rec
		tr.byStep[st.ID] = head
		if br != nil {
			br.chain = append(br.chain, head)
			br.head = head
			return o, nil
		}
		tr.chain = append(tr.chain, head)
	}
	if br != nil {
		return o, nil
	}
	tr.head = head
	if st.Kind == "call/expire_snapshots" {
		if err := s.expire(ctx, tr, st.Keep); err != nil {
			return o, err
		}
	}
	return o, nil
}

// expire drops the oracle's copies of the snapshots expire_snapshots
// (older_than far in the future, retain_last keep) removes: all but the
// last keep ancestors of each branch and the snapshots tags name.
func (s *session) expire(ctx context.Context, tr *tableRun, keep int) error {
	kept := map[int64]bool{}
	for id := range tr.tags {
		kept[tr.tags[id]] = true
	}
	chains := [][]int64{tr.chain}
	for _, br := range tr.branches {
		chains = append(chains, br.chain)
	}
	for _, c := range chains {
		for _, id := range c[max(0, len(c)-keep):] {
			kept[id] = true
		}
	}
	for id, rec := range tr.snaps {
		if !kept[id] {
			if err := s.mariaExec(ctx, []string{"DROP TABLE " + rec.copy}); err != nil {
				return err
			}
			delete(tr.snaps, id)
			delete(tr.byStep, rec.step)
		}
	}
	return nil
}

// mariaExec runs a step's MariaDB statements, all or nothing.
func (s *session) mariaExec(ctx context.Context, stmts []string) error {
	if len(stmts) == 0 {
		return nil
	}
	if len(stmts) == 1 {
		_, err := s.mc.ExecContext(ctx, stmts[0])
		return err
	}
	if _, err := s.mc.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	for _, q := range stmts {
		if _, err := s.mc.ExecContext(ctx, q); err != nil {
			_, rbErr := s.mc.ExecContext(ctx, "ROLLBACK")
			_, dropErr := s.mc.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS ms, mi, ow")
			return errors.Join(err, rbErr, dropErr)
		}
	}
	_, err := s.mc.ExecContext(ctx, "COMMIT")
	return err
}

// mariaExecUndone runs stmts on MariaDB in a transaction it rolls back.
func (s *session) mariaExecUndone(ctx context.Context, stmts []string) error {
	if _, err := s.mc.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	var err error
	for _, q := range stmts {
		if _, err = s.mc.ExecContext(ctx, q); err != nil {
			break
		}
	}
	_, rbErr := s.mc.ExecContext(ctx, "ROLLBACK")
	_, dropErr := s.mc.ExecContext(ctx, "DROP TEMPORARY TABLE IF EXISTS ms, mi, ow")
	return errors.Join(err, rbErr, dropErr)
}

// exactArithmetic rewrites the generator's overflow-prone expressions of
// MariaDB statements, (col - 2) and (a.col - 2), to DECIMAL arithmetic,
// which has their value wherever BIGINT's does not overflow and a value
// where it does.
func exactArithmetic(stmts []string) []string {
	out := make([]string, len(stmts))
	for i, q := range stmts {
		q = overflowing.ReplaceAllString(q, "(CAST($1.$2 AS DECIMAL(21)) - 2)")
		out[i] = overflowingUnqualified.ReplaceAllString(q, "$1(CAST($2 AS DECIMAL(21)) - 2)")
	}
	return out
}

// head is the snapshot a branch of table points at (0: none).
func (s *session) head(ctx context.Context, table, branch string) (int64, error) {
	var id int64
	err := s.on.QueryRowContext(ctx, fmt.Sprintf("SELECT snapshot_id FROM h.%s.refs WHERE name = '%s'", table, branch)).Scan(&id)
	if errors.Is(err, gosql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("%s of %s: %w", branch, table, err)
	}
	return id, nil
}

// mariaSig names a table's columns and types, to tell whether a snapshot's
// rows fit the current table.
func (s *session) mariaSig(ctx context.Context, table string) (string, error) {
	var sig gosql.NullString
	err := s.mc.QueryRowContext(ctx, "SELECT GROUP_CONCAT(CONCAT(COLUMN_NAME, ' ', COLUMN_TYPE) ORDER BY ORDINAL_POSITION) FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?", table).Scan(&sig)
	return sig.String, err
}

// rollbackTargets implements snapshots.
func (s *session) rollbackTargets(table string) []int {
	tr := s.table(table)
	sig := ""
	var out []int
	for _, id := range tr.chain {
		rec := tr.snaps[id]
		if rec == nil || id == tr.head {
			continue
		}
		if sig == "" {
			var err error
			if sig, err = s.mariaSig(context.Background(), table); err != nil {
				return nil
			}
		}
		if rec.sig == sig {
			out = append(out, rec.step)
		}
	}
	return out
}

// asofChoice picks a live snapshot of a branch, or a tag, for a
// time-travel query: the placeholder that names it and its columns.
func (s *session) asofChoice(pick func(n int) int) (string, []Column, bool) {
	type c struct {
		ref  string
		cols []Column
	}
	var all []c
	names := make([]string, 0, len(s.tables))
	for n := range s.tables {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		tr := s.tables[n]
		ids := slices.Clone(tr.chain)
		for _, b := range slices.Sorted(maps.Keys(tr.branches)) {
			ids = append(ids, tr.branches[b].chain...)
		}
		seen := map[int64]bool{}
		for _, id := range ids {
			if rec := tr.snaps[id]; rec != nil && rec.cols != nil && !seen[id] {
				seen[id] = true
				all = append(all, c{fmt.Sprintf("{{asof:%s:%d}}", n, rec.step), rec.cols})
			}
		}
		for _, g := range slices.Sorted(maps.Keys(tr.tags)) {
			if rec := tr.snaps[tr.tags[g]]; rec != nil && rec.cols != nil {
				kind := "tag"
				if pick(2) == 0 {
					kind = "tagv"
				}
				all = append(all, c{fmt.Sprintf("{{%s:%s:%s}}", kind, n, g), rec.cols})
			}
		}
	}
	if len(all) == 0 {
		return "", nil, false
	}
	ch := all[pick(len(all))]
	return ch.ref, ch.cols, true
}

// placeholder matches the table references of a generated query:
// {{t:NAME}}, {{asof:NAME:STEP}}, {{br:NAME:BRANCH}} (db.t.branch_b),
// {{brv:NAME:BRANCH}} (t VERSION AS OF 'b'), {{tag:NAME:TAG}},
// {{tagv:NAME:TAG}} and {{snapcount:NAME}}.
var placeholder = regexp.MustCompile(`\{\{(t|asof|br|brv|tag|tagv|snapcount):([a-z0-9]+)(?::([a-z0-9]+))?\}\}`)

// resolve replaces a query's placeholders for one side; ok is false when
// it names a snapshot or ref this session does not have.
func (s *session) resolve(q string, iceSide bool) (string, bool) {
	ok := true
	out := placeholder.ReplaceAllStringFunc(q, func(m string) string {
		p := placeholder.FindStringSubmatch(m)
		tr := s.table(p[2])
		switch p[1] {
		case "t":
			return p[2]
		case "snapcount":
			return strconv.Itoa(len(tr.snaps))
		case "br", "brv":
			if tr.branches[p[3]] == nil {
				ok = false
				return m
			}
		case "tag", "tagv":
			if rec := tr.snaps[tr.tags[p[3]]]; rec == nil {
				ok = false
				return m
			} else if !iceSide {
				return rec.copy
			}
		case "asof":
			step, _ := strconv.Atoi(p[3])
			id, found := tr.byStep[step]
			if !found {
				ok = false
				return m
			}
			if iceSide {
				return fmt.Sprintf("%s VERSION AS OF %d", p[2], id)
			}
			return tr.snaps[id].copy
		}
		return refName(p[1], p[2], p[3], iceSide)
	})
	return out, ok
}

// refName spells a branch or tag reference on one side (a tag on
// MariaDB is the copy of its snapshot's rows, which only the session
// knows).
func refName(kind, table, ref string, iceSide bool) string {
	switch {
	case !iceSide && (kind == "br" || kind == "brv"):
		return branchTable(table, ref)
	case !iceSide:
		return fmt.Sprintf("<rows of %s at tag %s>", table, ref)
	case kind == "br" || kind == "tag":
		return fmt.Sprintf("h.%s.%s_%s", table, map[string]string{"br": "branch", "tag": "tag"}[kind], ref)
	default:
		return fmt.Sprintf("%s VERSION AS OF '%s'", table, ref)
	}
}

// check is a query's results on the three sides.
type check struct {
	on, off, oracle Result
	skipped         bool
	// overflowConfirmed: a side failed with 1690 where another answered,
	// and icesql fails with 1690 too when it evaluates the query's
	// overflowing expressions on every row of their tables
	// (confirmOverflow): which rows a side evaluated them on was its plan's
	// choice.
	overflowConfirmed bool
	// tol: the output columns that sum doubles may differ within it
	// (floatsum.go).
	tol map[int]tolerance
}

func (s *session) run(ctx context.Context, q Query) check {
	ice, ok1 := s.resolve(q.Ice, true)
	maria, ok2 := s.resolve(q.Maria, false)
	if !ok1 || !ok2 {
		return check{skipped: true}
	}
	c := check{on: runQuery(ctx, s.on, ice, s.timeout)}
	if c.on.Timeout {
		// The other path is as slow, most likely: report one timeout,
		// not two.
		c.off = Result{Timeout: true, Err: c.on.Err}
	} else {
		c.off = runQuery(ctx, s.off, ice, s.timeout)
	}
	c.oracle = runQuery(ctx, s.mc, maria, s.timeout)
	var merr *mysql.MySQLError
	if errors.As(c.oracle.Err, &merr) && merr.Number == 1969 { // max_statement_time exceeded
		c.oracle.Timeout = true
	}
	if c.oracle.Timeout || errors.Is(c.oracle.Err, driver.ErrBadConn) {
		if err := s.connectMaria(ctx); err != nil {
			c.oracle.Err = errors.Join(c.oracle.Err, err)
		}
	}
	if c.overflowOneSided() {
		c.overflowConfirmed = s.confirmOverflow(ctx, overflowProbes(ice, nil))
	}
	if len(q.Sums) > 0 && c.difference(q.Ordered) != "" {
		c.tol = s.sumTolerances(ctx, q)
	}
	return c
}

// overflowing finds the generator's overflow-prone expressions, (a.col - 2)
// in queries, (col - 2) in statements on one table; tableAlias the tables
// their aliases name.
var (
	overflowing            = regexp.MustCompile(`\((\w+)\.(\w+) - 2\)`)
	overflowingUnqualified = regexp.MustCompile(`(^|[^.\w])\((\w+) - 2\)`)
	word                   = regexp.MustCompile(`\w+`)
	tableAlias             = regexp.MustCompile("([\\w.`]+(?: VERSION AS OF (?:'[^']*'|\\d+))?) AS (\\w+)")
)

// overflowProbes are the queries that evaluate the overflow-prone
// expressions of sql (icesql's text) on every row of their tables: for
// (a.col - 2), of the tables alias a names (an alias may name a table in
// each branch of a UNION: all of them); for an unqualified (col - 2), of
// each of tables (a statement's target and the tables it reads).
func overflowProbes(sql string, tables []string) []string {
	aliased := map[string][]string{}
	for _, m := range tableAlias.FindAllStringSubmatch(sql, -1) {
		aliased[m[2]] = append(aliased[m[2]], m[1])
	}
	var probes []string
	for _, m := range overflowing.FindAllStringSubmatch(sql, -1) {
		for _, table := range aliased[m[1]] {
			probes = append(probes, fmt.Sprintf("SELECT COUNT(%s.%s - 2) FROM %s AS %s", m[1], m[2], table, m[1]))
		}
	}
	for _, m := range overflowingUnqualified.FindAllStringSubmatch(sql, -1) {
		for _, table := range tables {
			probes = append(probes, fmt.Sprintf("SELECT COUNT(%s - 2) FROM %s", m[2], table))
		}
	}
	return probes
}

// confirmOverflow says whether icesql fails with 1690 on one of probes
// (overflowProbes). A one-sided 1690 is then the plan's choice of rows:
// one side skipped the overflowing row by another conjunct before
// computing the expression (icesql by a pushed-down filter or an IN list,
// MariaDB by an index condition or join order), the other did not. MySQL
// fixes no order of evaluation, so either answer is MySQL's. Had a side
// wrapped silently (FINDINGS.md #4), the full evaluation would answer, and
// the difference stands.
func (s *session) confirmOverflow(ctx context.Context, probes []string) bool {
	for _, q := range probes {
		if r := runQuery(ctx, s.on, q, s.timeout); outOfRange(r.Err) {
			return true
		}
	}
	return false
}

// difference says how icesql's answers differ from the oracle's, or "".
// A timeout is not a difference (the caller reports it as slow), nor is a
// confirmed one-sided 1690 (check.overflowConfirmed).
func (c check) difference(ordered bool) string {
	if c.skipped {
		return ""
	}
	var diffs []string
	for _, side := range []struct {
		name string
		r    Result
	}{{"vector on", c.on}, {"vector off", c.off}} {
		switch {
		case side.r.Timeout || c.oracle.Timeout:
		case side.r.Err != nil && c.oracle.Err != nil:
		case c.overflowConfirmed && (outOfRange(side.r.Err) || outOfRange(c.oracle.Err)):
		case side.r.Err != nil:
			diffs = append(diffs, fmt.Sprintf("%s: error %v (MariaDB: %d rows)", side.name, side.r.Err, len(c.oracle.Rows)))
		case c.oracle.Err != nil:
			diffs = append(diffs, fmt.Sprintf("%s: %d rows, MariaDB: error %v", side.name, len(side.r.Rows), c.oracle.Err))
		default:
			if d := DiffWithin(side.r.Rows, c.oracle.Rows, ordered, c.tol); d != "" {
				diffs = append(diffs, side.name+": "+d)
			}
		}
	}
	return strings.Join(diffs, "\n")
}

// overflowOneSided says a side failed with 1690 (a value out of range)
// where another answered: which rows a WHERE clause is evaluated on is the
// plan's choice in both databases, and on icesql's two paths (the vector
// path evaluates a filter on a whole batch).
func (c check) overflowOneSided() bool {
	if c.skipped || c.on.Timeout || c.off.Timeout || c.oracle.Timeout {
		return false
	}
	results := []Result{c.on, c.off, c.oracle}
	return slices.ContainsFunc(results, func(r Result) bool { return outOfRange(r.Err) }) &&
		slices.ContainsFunc(results, func(r Result) bool { return r.Err == nil })
}

// overflowOnIcesql says an icesql path failed with a confirmed 1690 where
// another side answered.
func (c check) overflowOnIcesql() bool {
	return c.overflowConfirmed && (outOfRange(c.on.Err) || outOfRange(c.off.Err))
}

// outOfRange says err is MySQL's 1690 (ER_DATA_OUT_OF_RANGE), from the
// embedded engine or over the wire.
func outOfRange(err error) bool {
	var merr *mysql.MySQLError
	var serr *vmysql.SQLError
	return errors.As(err, &merr) && merr.Number == vmysql.ERDataOutOfRange ||
		errors.As(err, &serr) && serr.Num == vmysql.ERDataOutOfRange
}

// bothRejected says every side refused the query: the generator wrote
// something neither database takes (a tester bug when it recurs).
func (c check) bothRejected() bool {
	return !c.skipped && c.on.Err != nil && c.off.Err != nil && c.oracle.Err != nil && !c.on.Timeout && !c.oracle.Timeout
}

func (c check) timedOut() bool { return c.on.Timeout || c.off.Timeout }
