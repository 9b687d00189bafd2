package engine

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/vitess/go/mysql"

	"github.com/icesql/icesql/engine/internal/mysqlerr"
	"github.com/icesql/icesql/storage"
)

// TestWrappedCodesSurviveTheWire: go-mysql-server's wire handler flattens
// any error that is not itself a *mysql.SQLError to 1105 (sql.CastSQLError)
// before icesql's handler sees it. A coded error wrapped with fmt.Errorf,
// and a storage conflict wrapped anywhere, must still reach the client
// with its code: in-process (mysqlError) and after the flattening (recode).
func TestWrappedCodesSurviveTheWire(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		num   int
		state string
	}{
		{"wrapped 1213", fmt.Errorf("commit to d.t: %w", mysqlerr.Conflict("lost")), mysql.ERLockDeadlock, "40001"},
		{"twice wrapped 1213", fmt.Errorf("outer: %w", fmt.Errorf("inner: %w", mysqlerr.Conflict("lost"))), mysql.ERLockDeadlock, "40001"},
		{"retries exhausted", fmt.Errorf("rewrite d.t: %w", fmt.Errorf("%w after 50 attempts: x", storage.ErrConflict)), mysql.ERLockDeadlock, "40001"},
		{"row conflict", fmt.Errorf("commit: %w", fmt.Errorf("%w: snapshot 1 removed data file f", storage.ErrRowConflict)), mysql.ERLockDeadlock, "40001"},
		{"commit failed", fmt.Errorf("commit: %w", table.ErrCommitFailed), mysql.ERLockDeadlock, "40001"},
		{"wrapped 1146", fmt.Errorf("load: %w", mysql.NewSQLError(mysql.ERNoSuchTable, mysql.SSUnknownTable, "no table d.t")), mysql.ERNoSuchTable, mysql.SSUnknownTable},
		{"annotated 1213", mysqlerr.Annotated(mysqlerr.Conflict("lost"), "commit to d.t"), mysql.ERLockDeadlock, "40001"},
		{"plain error", errors.New("disk full"), mysql.ERUnknownError, mysql.SSUnknownSQLState},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mysqlerr.Coded(tc.err); got.Num != tc.num || got.State != tc.state {
				t.Errorf("in-process: %d (%s) %q, want %d (%s)", got.Num, got.State, got.Message, tc.num, tc.state)
			}
			flat := sql.CastSQLError(tc.err) // what go-mysql-server's handler returns
			var got *mysql.SQLError
			if !errors.As(mysqlerr.ForStatement("COMMIT", flat), &got) || got.Num != tc.num || got.State != tc.state {
				t.Errorf("over the wire: %v, want %d (%s)", got, tc.num, tc.state)
			}
		})
	}
}
