package history

import (
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// `go test ./sqltests/history` runs fixed seeds for about a minute: the
// histories of seeds 1, 2, ... for 40 s (at least MinSteps statements of
// the first), then the shapes run of seed 1 for 20 s of queries (at least
// MinQueries). The sequence is fixed; a slower machine runs less of it.
// `make history SEEDS=... TIME=...` sets HISTORY_SEEDS (a comma-separated
// list) and HISTORY_TIME (a duration: random seeds follow the listed ones
// until it is spent, three quarters histories, one quarter shapes);
// HISTORY_KNOWN=on generates the shapes of the known issues too;
// HISTORY_STEPS=n sets the statements per history;
// HISTORY_VERBOSE=1 logs every statement and query with its times;
// HISTORY_KEEP=dir keeps each history's warehouse and the oracle's final
// rows in dir/seed<N> (`make interop` reads them with PyIceberg and DuckDB).
var defaultSeeds = []uint64{1, 2, 3, 4, 5, 6, 7, 8}

const (
	historySteps   = 25
	longSteps      = 60
	queriesPerStep = 4
	queryTimeout   = 10 * time.Second
	historyBudget  = 40 * time.Second
	shapesBudget   = 20 * time.Second
)

func longRun() bool { return os.Getenv("HISTORY_TIME") != "" || os.Getenv("HISTORY_SEEDS") != "" }

type oracle struct {
	once sync.Once
	m    *MariaDB
	err  error
}

// startOracle starts one MariaDB for the package's tests.
func (o *oracle) get(t *testing.T) *MariaDB {
	t.Helper()
	o.once.Do(func() {
		dir, err := os.MkdirTemp("", "icesql-history-mariadb-")
		if err != nil {
			o.err = err
			return
		}
		o.m, o.err = StartMariaDB(context.Background(), dir)
	})
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.m
}

var theOracle oracle

func TestMain(m *testing.M) {
	code := m.Run()
	if theOracle.m != nil {
		theOracle.m.Close()
		os.RemoveAll(theOracle.m.dir)
	}
	os.Exit(code)
}

func options(t *testing.T) Options {
	cfg := DefaultConfig()
	if os.Getenv("HISTORY_KNOWN") != "on" {
		for _, line := range cfg.WithoutKnownIssues() {
			t.Log(line)
		}
	}
	budget, steps := 45*time.Second, historySteps
	if longRun() {
		budget, steps = 3*time.Minute, longSteps
	}
	if env := os.Getenv("HISTORY_STEPS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil {
			t.Fatalf("HISTORY_STEPS: %v", err)
		}
		steps = n
	}
	return Options{
		Maria: theOracle.get(t), Dir: t.TempDir(), Cfg: cfg, Steps: steps, QueriesPerStep: queriesPerStep,
		Timeout: queryTimeout, ShrinkBudget: budget, MaxFailures: 3, MinSteps: 10, MinQueries: 20,
		Log:     func(format string, args ...any) { t.Logf(format, args...) },
		Verbose: os.Getenv("HISTORY_VERBOSE") != "",
		Keep:    os.Getenv("HISTORY_KEEP"),
	}
}

// seeds are the fixed seeds, or HISTORY_SEEDS, then random seeds while
// HISTORY_TIME lasts.
func seeds(t *testing.T, fixed []uint64, share float64) func(yield func(uint64) bool) {
	return func(yield func(uint64) bool) {
		list := fixed
		if env := os.Getenv("HISTORY_SEEDS"); env != "" {
			list = nil
			for _, f := range strings.Split(env, ",") {
				n, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
				if err != nil {
					t.Fatalf("HISTORY_SEEDS: %v", err)
				}
				list = append(list, n)
			}
		}
		for _, s := range list {
			if !yield(s) {
				return
			}
		}
		env := os.Getenv("HISTORY_TIME")
		if env == "" {
			return
		}
		d, err := time.ParseDuration(env)
		if err != nil {
			t.Fatalf("HISTORY_TIME: %v", err)
		}
		end := time.Now().Add(time.Duration(float64(d) * share))
		for seed := uint64(time.Now().UnixNano()); time.Now().Before(end); seed++ {
			if !yield(seed) {
				return
			}
		}
	}
}

func report(t *testing.T, tot *Totals) {
	for _, s := range tot.Slow {
		t.Logf("slow: %s", s)
	}
	for _, f := range tot.Failures {
		t.Errorf("difference: %s", f.Report())
	}
	t.Logf("shapes run: %s", tot.ShapeCounts())
}

// TestHistory compares generated histories on icesql (vector path on and
// off) with MariaDB.
func TestHistory(t *testing.T) {
	opts := options(t)
	total := &Totals{}
	end := time.Now().Add(historyBudget)
	for seed := range seeds(t, defaultSeeds, 0.75) {
		if !longRun() {
			if total.Statements > 0 && time.Now().After(end) {
				break
			}
			opts.Deadline = end
		}
		tot, err := RunHistory(context.Background(), opts, seed)
		if tot != nil {
			total.add(tot)
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: %s", seed, tot.HistoryLine())
	}
	report(t, total)
	t.Log(total.HistoryLine())
	if total.Queries == 0 {
		t.Fatal("no query was compared")
	}
}

// TestShapes is issue 16's random-query differential run: three
// partitioned tables of 3,000 rows in 20 files each, random SELECTs of
// every shape compared with MariaDB, with their times.
func TestShapes(t *testing.T) {
	opts := options(t)
	n := 400
	total := &Totals{}
	for seed := range seeds(t, []uint64{1}, 0.25) {
		if !longRun() {
			opts.Deadline = time.Now().Add(shapesBudget)
		}
		tot, err := RunShapes(context.Background(), opts, seed, 3000, 20, n)
		if tot != nil {
			total.add(tot)
		}
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		t.Logf("seed %d: %s", seed, tot.ShapesLine())
	}
	report(t, total)
	t.Log(total.ShapesLine())
}
