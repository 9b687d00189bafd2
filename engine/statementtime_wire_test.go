package engine_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
)

// TestMaxStatementTimeOverWire checks MariaDB's max_statement_time (seconds,
// every statement), which BI tools written for MariaDB set: a statement
// that runs past it fails with 3024 and the session goes on; 0 turns it
// off; a value out of range is refused.
func TestMaxStatementTimeOverWire(t *testing.T) {
	conns := wireSessions(t, 1)
	c := conns[0]
	ctx := context.Background()
	mustExec(t, c, "SET max_statement_time = 0.2")
	start := time.Now()
	_, err := c.ExecContext(ctx, "DO SLEEP(5)")
	var me *mysql.MySQLError
	if !errors.As(err, &me) || me.Number != 3024 {
		t.Fatalf("DO SLEEP(5) under max_statement_time 0.2: %v, want error 3024", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the statement ran %v, past its limit", d)
	}
	if got := queryInt(t, c, "SELECT 1"); got != 1 {
		t.Errorf("the session after the timeout: %d", got)
	}
	mustExec(t, c, "SET SESSION max_statement_time = 0")
	if _, err := c.ExecContext(ctx, "DO SLEEP(0.3)"); err != nil {
		t.Errorf("with max_statement_time 0: %v", err)
	}
	if _, err := c.ExecContext(ctx, "SET max_statement_time = -1"); err == nil {
		t.Error("SET max_statement_time = -1 was accepted")
	}
}
