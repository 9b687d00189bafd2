package engine_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/icesql/icesql/engine"
)

// TestLedger is the acceptance run: 16 clients over the wire move
// money between accounts by read-then-write transactions (read both
// balances, then UPDATE each to a value computed by the client), retrying
// on 1213 only. Any other error fails the test; the total never changes,
// and every account ends with exactly the balance the committed transfers
// give it (no update lost). Clients start transfers for
// ICESQL_LEDGER_SECONDS seconds (5 by default: the test ends when the
// transfers in flight do; `make ledger` runs the 60).
func TestLedger(t *testing.T) {
	seconds := 5
	if s := os.Getenv("ICESQL_LEDGER_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("ICESQL_LEDGER_SECONDS=%q: want a positive number of seconds", s)
		}
		seconds = n
	}
	const clients, accounts, start = 16, 32, 1000
	addr := wireServer(t, openEngine(t, engine.Config{Warehouse: t.TempDir()}))
	setup := wireConn(t, addr)
	mustExec(t, setup, "CREATE DATABASE ledger", "CREATE TABLE ledger.acct (id BIGINT, bal BIGINT)")
	for i := range accounts {
		// One data file per account: transfers between different accounts
		// touch different files and need not conflict.
		mustExec(t, setup, fmt.Sprintf("INSERT INTO ledger.acct VALUES (%d, %d)", i, start))
	}

	type transfer struct{ from, to, amount int64 }
	var (
		mu        sync.Mutex
		committed []transfer
		conflicts int
	)
	deadline := time.Now().Add(time.Duration(seconds) * time.Second)
	began := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		conn := wireConn(t, addr)
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(c), 42))
			for time.Now().Before(deadline) {
				from := rng.Int64N(accounts)
				to := (from + 1 + rng.Int64N(accounts-1)) % accounts
				tr := transfer{from, to, 1 + rng.Int64N(50)}
				err := runTransfer(conn, tr.from, tr.to, tr.amount)
				var me *mysql.MySQLError
				switch {
				case err == nil:
					mu.Lock()
					committed = append(committed, tr)
					mu.Unlock()
				case errors.As(err, &me) && me.Number == 1213:
					mu.Lock()
					conflicts++
					mu.Unlock()
					if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
						errs <- fmt.Errorf("client %d: ROLLBACK: %w", c, err)
						return
					}
				default:
					errs <- fmt.Errorf("client %d: transfer %v: %w", c, tr, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(began)
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	want := make([]int64, accounts)
	for i := range want {
		want[i] = start
	}
	for _, tr := range committed {
		want[tr.from] -= tr.amount
		want[tr.to] += tr.amount
	}
	rows, err := setup.QueryContext(context.Background(), "SELECT id, bal FROM ledger.acct ORDER BY id")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var sum int64
	seen, lost := 0, 0
	for rows.Next() {
		var id, bal int64
		if err := rows.Scan(&id, &bal); err != nil {
			t.Fatal(err)
		}
		sum += bal
		seen++
		if bal != want[id] {
			lost++
			t.Errorf("account %d: balance %d, want %d from the committed transfers", id, bal, want[id])
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if seen != accounts || sum != accounts*start {
		t.Errorf("%d accounts summing to %d, want %d summing to %d", seen, sum, accounts, accounts*start)
	}
	t.Logf("ledger: %d clients, %.1f s: %d transfers committed (%.1f/s), %d conflicts (1213, retried), %d accounts with a lost update, sum %d",
		clients, elapsed.Seconds(), len(committed), float64(len(committed))/elapsed.Seconds(), conflicts, lost, sum)
	if len(committed) == 0 {
		t.Error("no transfer committed")
	}
}

// runTransfer moves amount from one account to another the way an
// application without stored procedures does: read both balances, then
// write the new ones.
func runTransfer(conn *sql.Conn, from, to, amount int64) error {
	ctx := context.Background()
	if _, err := conn.ExecContext(ctx, "BEGIN"); err != nil {
		return err
	}
	var balFrom, balTo int64
	if err := conn.QueryRowContext(ctx, "SELECT bal FROM ledger.acct WHERE id = ?", from).Scan(&balFrom); err != nil {
		return err
	}
	if err := conn.QueryRowContext(ctx, "SELECT bal FROM ledger.acct WHERE id = ?", to).Scan(&balTo); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "UPDATE ledger.acct SET bal = ? WHERE id = ?", balFrom-amount, from); err != nil {
		return err
	}
	if _, err := conn.ExecContext(ctx, "UPDATE ledger.acct SET bal = ? WHERE id = ?", balTo+amount, to); err != nil {
		return err
	}
	_, err := conn.ExecContext(ctx, "COMMIT")
	return err
}
