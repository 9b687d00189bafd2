package engine

import (
	"strings"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// Transactions and isolation, as a MySQL (InnoDB) user expects them, built
// on Iceberg snapshots and optimistic commits:
//
//   - REPEATABLE READ (the default) and SERIALIZABLE: inside BEGIN ... COMMIT
//     or with autocommit off, a transaction reads each table at one
//     snapshot, pinned by its first read or write of the table; commits of
//     other sessions stay invisible until it ends. Its own uncommitted
//     writes are read on top of that snapshot (the stage, session.go).
//   - READ COMMITTED and READ UNCOMMITTED: each statement reads the newest
//     snapshot of each table (pinned for the statement only).
//   - UPDATE, DELETE and MERGE are validated at COMMIT against what others
//     committed since the snapshot they read (storage.RowDelta): a
//     concurrent change of the same data files fails the COMMIT with 1213
//     and nothing is written. This is first-committer-wins: a read-then-
//     write transaction never loses a concurrent update of the rows it
//     changes, which InnoDB's REPEATABLE READ (whose UPDATE reads the newest
//     row) does allow.
//   - SELECT ... FOR UPDATE, FOR SHARE, LOCK IN SHARE MODE, and under
//     SERIALIZABLE every read in a transaction, take no locks: the tables
//     they read are validated at COMMIT instead, at table granularity (any
//     change of the table's rows committed since the transaction read it
//     fails the COMMIT with 1213; see storage/readcheck.go). Outside a
//     transaction (autocommit) a read validates nothing, as in InnoDB where
//     its locks end with the statement.
//
// SET TRANSACTION ISOLATION LEVEL sets the session's level (go-mysql-server
// has no next-transaction-only level); @@transaction_isolation shows it.

// Isolation level names, as @@transaction_isolation shows them.
const (
	readUncommitted = "READ-UNCOMMITTED"
	readCommitted   = "READ-COMMITTED"
	repeatableRead  = "REPEATABLE-READ"
	serializableTx  = "SERIALIZABLE"
)

// isolation is how the running statement reads.
type isolation struct {
	level string
	// explicit: the statement runs inside BEGIN ... COMMIT or with
	// autocommit off, where its transaction outlives it.
	explicit bool
}

// snapshotPerTransaction reports whether the level reads one snapshot per
// table for the whole transaction.
func (i isolation) snapshotPerTransaction() bool {
	return i.level != readCommitted && i.level != readUncommitted
}

// sessionIsolation reads the session's isolation level and transaction state.
func sessionIsolation(ctx *sql.Context) isolation {
	iso := isolation{level: repeatableRead}
	if v, err := ctx.GetSessionVariable(ctx, "transaction_isolation"); err == nil {
		if s, ok := v.(string); ok && s != "" {
			iso.level = strings.ToUpper(s)
		}
	}
	iso.explicit, _ = inExplicitTransaction(ctx)
	return iso
}

// lockedRead is a table a transaction read with a lock, at the metadata it read.
type lockedRead struct {
	ident table.Identifier
	meta  table.Metadata
}

// lockingReadLocked reports whether the running statement reads with FOR
// UPDATE, FOR SHARE or LOCK IN SHARE MODE, deciding once per statement.
func (s *Session) lockingReadLocked(ctx *sql.Context) bool {
	if s.lockPid == ctx.Pid() {
		return s.locking
	}
	s.lockPid, s.locking = ctx.Pid(), lockingRead(ctx.Query())
	return s.locking
}

// lockingRead reports whether query has a locking clause: FOR UPDATE, FOR
// SHARE or LOCK IN SHARE MODE, found among the statement's tokens (strings,
// identifiers and comments are single tokens, so their text never counts).
// Most statements have no FOR or LOCK word at all and are not tokenized.
func lockingRead(query string) bool {
	upper := strings.ToUpper(query)
	if !strings.Contains(upper, "FOR") && !strings.Contains(upper, "LOCK") {
		return false
	}
	tkn := ast.NewStringTokenizer(query)
	var last [3]int // the three tokens before the current one
	for {
		typ, _ := tkn.Scan()
		if typ == 0 || typ == ast.LEX_ERROR {
			return false
		}
		switch {
		case last[2] == ast.FOR && (typ == ast.UPDATE || typ == ast.SHARE):
			return true
		case last[0] == ast.LOCK && last[1] == ast.IN && last[2] == ast.SHARE && typ == ast.MODE:
			return true
		}
		last = [3]int{last[1], last[2], typ}
	}
}
