package history

import (
	"bufio"
	"context"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestShapesProfile times chosen queries over the shapes run's tables
// (seed HISTORY_SEEDS' first, default 1): HISTORY_PROFILE names a file of
// queries, one a line, written as the `slow:` and verbose lines print them
// ({{t:t1}} or plain t1). Each runs HISTORY_PROFILE_RUNS times (default 5)
// on the vector path and off it; the test logs the median of each, and
// HISTORY_CPUPROFILE=file writes a CPU profile of the queries alone (not
// of the load); an EXPLAIN's rows are logged. Without HISTORY_PROFILE it does not run: it is a tool for
// finding where a slow shape spends its time, not a check.
func TestShapesProfile(t *testing.T) {
	path := os.Getenv("HISTORY_PROFILE")
	if path == "" {
		t.Skip("a tool: set HISTORY_PROFILE to a file of queries")
	}
	queries := readQueryFile(t, path)
	runs := 5
	if env := os.Getenv("HISTORY_PROFILE_RUNS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil {
			t.Fatalf("HISTORY_PROFILE_RUNS: %v", err)
		}
		runs = n
	}
	seed := uint64(1)
	if env := os.Getenv("HISTORY_SEEDS"); env != "" {
		n, err := strconv.ParseUint(strings.Split(env, ",")[0], 10, 64)
		if err != nil {
			t.Fatalf("HISTORY_SEEDS: %v", err)
		}
		seed = n
	}
	ctx := context.Background()
	opts := options(t)
	h := newHistory(ctx, opts, seed, true)
	var err error
	if h.sess, err = h.open(); err != nil {
		t.Fatal(err)
	}
	defer h.sess.close()
	if err := h.load(3000, 20); err != nil || len(h.tot.Failures) > 0 {
		t.Fatal(err, h.tot.Failures)
	}
	if out := os.Getenv("HISTORY_CPUPROFILE"); out != "" {
		f, err := os.Create(out)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}
	for _, q := range queries {
		ice, _ := h.sess.resolve(q, true)
		if strings.HasPrefix(strings.ToUpper(ice), "EXPLAIN") {
			r := runQuery(ctx, h.sess.on, ice, opts.Timeout)
			var b strings.Builder
			for _, row := range r.Rows {
				b.WriteString(strings.Join(row, " | ") + "\n")
			}
			t.Logf("%s: %v\n%s", ice, r.Err, b.String())
			continue
		}
		var on, off []time.Duration
		var rows int
		var few [][]string
		for range runs {
			r := runQuery(ctx, h.sess.on, ice, opts.Timeout)
			if r.Err != nil {
				t.Logf("error (vector on): %v: %s", r.Err, ice)
			}
			rows = len(r.Rows)
			if rows <= 3 {
				few = r.Rows
			}
			on = append(on, r.Elapsed)
			r = runQuery(ctx, h.sess.off, ice, opts.Timeout)
			if r.Err != nil {
				t.Logf("error (vector off): %v: %s", r.Err, ice)
			}
			off = append(off, r.Elapsed)
		}
		slices.Sort(on)
		slices.Sort(off)
		t.Logf("profile: on %.1f ms, off %.1f ms, %d rows%s: %s", ms(on[len(on)/2]), ms(off[len(off)/2]), rows, fewRows(few), ice)
	}
}

// fewRows shows the rows of an answer of at most three rows (a count, an
// aggregate), "" for none.
func fewRows(rows [][]string) string {
	var parts []string
	for _, r := range rows {
		parts = append(parts, "("+strings.Join(r, ", ")+")")
	}
	if len(parts) == 0 {
		return ""
	}
	return " " + strings.Join(parts, " ")
}

func readQueryFile(t *testing.T, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" && !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
