package engine

import (
	"errors"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/pushdown"
)

// Per-statement tallies of what a statement scanned and committed, for the
// server's slow-query log and metrics (observe.go): the session keeps them
// for its running statement, and the observer reads them once it ended.

// ScanTally is what a statement's scans planned, pruned and read: data
// files planned and pruned by partition values and column statistics,
// data files opened, and bytes planned and read.
type ScanTally = pushdown.Tally

// CommitTally is one table a statement committed to, or lost a commit
// to a concurrent one (error 1213).
type CommitTally struct {
	Table    string // db.table
	Conflict bool
}

// statementStats are the tallies of the statement pid.
type statementStats struct {
	pid     uint64
	scans   map[*pushdown.Plan]int64 // each resolved table's planning, with its snapshot's data files
	rows    int64                    // rows read outside those plannings (noteRows)
	commits []CommitTally
}

// statsLocked is the tallies of the statement ctx runs, started afresh
// for a new statement.
func (s *Session) statsLocked(ctx *sql.Context) *statementStats {
	if (s.stats.pid != ctx.Pid() && ctx.Pid() != 0) || s.stats.scans == nil {
		s.stats = statementStats{pid: ctx.Pid(), scans: map[*pushdown.Plan]int64{}}
	}
	return &s.stats
}

// noteScan records a table the statement resolved; what its scans
// planned and read is summed when the statement ends.
func (s *Session) noteScan(ctx *sql.Context, t *Table) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statsLocked(ctx)
	if _, ok := st.scans[t.plan]; !ok {
		st.scans[t.plan] = t.totalDataFiles()
	}
}

// noteRows records n rows the statement read outside a table's planned
// scans: table_changes reads each change's data file on its own.
func (s *Session) noteRows(ctx *sql.Context, n int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.statsLocked(ctx).rows += n
}

// noteCommits records the outcome of committing stages: each table
// committed, or, on a conflict (1213), lost.
func (s *Session) noteCommits(ctx *sql.Context, stages []*stage, err error) {
	if len(stages) == 0 {
		return
	}
	var se *mysql.SQLError
	conflicted := errors.As(err, &se) && se.Num == mysql.ERLockDeadlock
	if err != nil && !conflicted {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.statsLocked(ctx)
	for _, stg := range stages {
		st.commits = append(st.commits, CommitTally{Table: key(stg.ident), Conflict: conflicted})
	}
}

// TakeStatementStats returns the scan and commit tallies of the session's
// last statement and forgets them.
func (s *Session) TakeStatementStats() (ScanTally, []CommitTally) {
	s.mu.Lock()
	plans, rows, commits := s.stats.scans, s.stats.rows, s.stats.commits
	s.stats = statementStats{}
	s.mu.Unlock()
	total := ScanTally{RowsRead: rows}
	for plan, files := range plans {
		plan.Each(func(p *pushdown.Planned) { total.Add(p.Tally(files)) })
	}
	return total, commits
}
