// Package history is icesql's generated-history differential tester: it
// builds random table histories (DDL, DML in both write modes, partition
// evolution, maintenance procedures, rollbacks) on icesql and applies the
// same changes in MySQL syntax to a MariaDB server it starts itself, and
// after every statement compares random queries three ways: icesql with
// the vector path on, with it off, and MariaDB. The same query generator
// drives the random-query shapes run over three 3,000-row tables.
package history

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// Options configure a run.
type Options struct {
	Maria *MariaDB
	Dir   string // scratch folder for the warehouses
	Cfg   *Config
	// Steps is the number of statements of a history after the three
	// CREATE TABLEs and their first rows; QueriesPerStep the queries
	// compared after each.
	Steps          int
	QueriesPerStep int
	Timeout        time.Duration // per query
	ShrinkBudget   time.Duration // per failure
	// Deadline, when set, stops drawing statements (or, in the shapes
	// run, queries) once passed, after at least MinSteps (MinQueries).
	Deadline   time.Time
	MinSteps   int
	MinQueries int
	// MaxFailures stops a history after that many differences.
	MaxFailures int
	Log         func(format string, args ...any)
	Verbose     bool // log every statement
	// Keep, when set, is where each history that ran without a
	// difference leaves its warehouse and the oracle's final rows
	// (Keep/seed<N>: Kept), for other engines to read.
	Keep string
}

// Totals add up what runs did.
type Totals struct {
	Statements, Queries, Differed int
	Timeouts, Rejected, Skipped   int
	Overflowed                    int // a confirmed 1690 on an icesql path only (check.overflowOnIcesql), or on icesql only for a statement
	OverflowedOracle              int // a confirmed 1690 on MariaDB only (check.overflowConfirmed)
	IceTimes, OracleTimes         []time.Duration
	Failures                      []*Failure
	Slow                          []string
	Shapes                        map[string]int
}

func (t *Totals) add(o *Totals) {
	t.Statements += o.Statements
	t.Queries += o.Queries
	t.Differed += o.Differed
	t.Timeouts += o.Timeouts
	t.Rejected += o.Rejected
	t.Overflowed += o.Overflowed
	t.OverflowedOracle += o.OverflowedOracle
	t.Skipped += o.Skipped
	t.IceTimes = append(t.IceTimes, o.IceTimes...)
	t.OracleTimes = append(t.OracleTimes, o.OracleTimes...)
	t.Failures = append(t.Failures, o.Failures...)
	t.Slow = append(t.Slow, o.Slow...)
	if t.Shapes == nil {
		t.Shapes = map[string]int{}
	}
	for k, v := range o.Shapes {
		t.Shapes[k] += v
	}
}

// HistoryLine is the summary line of history runs.
func (t *Totals) HistoryLine() string {
	return fmt.Sprintf("history: %d statements, %d queries, %d differed (%d timed out, %d refused by both sides, %d out of range on icesql only, %d on MariaDB only)", t.Statements, t.Queries, t.Differed, t.Timeouts, t.Rejected, t.Overflowed, t.OverflowedOracle)
}

// ShapesLine is the summary line of the random-query run (issue 16).
func (t *Totals) ShapesLine() string {
	return fmt.Sprintf("shapes: %d queries, %d differed, p50_ms=%.1f, p99_ms=%.1f, max_ms=%.1f, oracle_p99_ms=%.1f, timeouts=%d",
		t.Queries, t.Differed, ms(percentile(t.IceTimes, 50)), ms(percentile(t.IceTimes, 99)), ms(percentile(t.IceTimes, 100)), ms(percentile(t.OracleTimes, 99)), t.Timeouts)
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := (len(s)*p + 99) / 100
	return s[min(max(i-1, 0), len(s)-1)]
}

// Failure is a difference, with the history that shows it, shrunk.
type Failure struct {
	Seed   uint64
	Shape  string // the query's shape, or "stmt/<kind>"
	Detail string
	Steps  []Step
	Query  *Query
}

// Report is the failure as a reproduction: the icesql script, the
// MariaDB script, and what differed.
func (f *Failure) Report() string {
	var b strings.Builder
	fmt.Fprintf(&b, "seed %d, %s:\n%s\n-- icesql:\nCREATE DATABASE h; USE h;\n", f.Seed, f.Shape, indentLines(f.Detail))
	pos := map[int]int{}
	for i, s := range f.Steps {
		pos[s.ID] = i + 1
	}
	for _, s := range f.Steps {
		line := s.Ice
		if s.Kind == "rollback" {
			line = fmt.Sprintf("CALL system.rollback_to_snapshot('h.%s', <snapshot after statement %d>)", s.Table, pos[s.Target])
		}
		b.WriteString(line + ";\n")
	}
	if f.Query != nil {
		b.WriteString(readable(f.Query.Ice, pos, true) + ";\n")
	}
	b.WriteString("-- MariaDB:\n")
	for _, s := range f.Steps {
		if s.Kind == "rollback" {
			fmt.Fprintf(&b, "-- (rows of %s as after statement %d)\n", s.Table, pos[s.Target])
			continue
		}
		for _, q := range s.Maria {
			b.WriteString(q + ";\n")
		}
	}
	if f.Query != nil {
		b.WriteString(readable(f.Query.Maria, pos, false) + ";\n")
	}
	return b.String()
}

func indentLines(s string) string { return "   " + strings.ReplaceAll(s, "\n", "\n   ") }

func readable(q string, pos map[int]int, ice bool) string {
	return placeholder.ReplaceAllStringFunc(q, func(m string) string {
		p := placeholder.FindStringSubmatch(m)
		switch p[1] {
		case "t":
			return p[2]
		case "snapcount":
			return "<snapshots the oracle counted>"
		case "br", "brv", "tag", "tagv":
			return refName(p[1], p[2], p[3], ice)
		}
		var step int
		fmt.Sscan(p[3], &step)
		if ice {
			return fmt.Sprintf("%s VERSION AS OF <snapshot after statement %d>", p[2], pos[step])
		}
		return fmt.Sprintf("snap_%s_%s", p[2], p[3])
	})
}

// history is one seed's run in progress.
type history struct {
	ctx    context.Context
	opts   Options
	seed   uint64
	rng    *rand.Rand
	tables []*Table
	gen    *stepGen
	sess   *session
	steps  []Step
	tot    *Totals
	nextID int
	dirN   int
	// loading: the shapes run's INSERTs, whose tables are compared once
	// loaded rather than after each.
	loading bool
}

func (h *history) pastDeadline(done, min int) bool {
	return !h.opts.Deadline.IsZero() && done >= min && time.Now().After(h.opts.Deadline)
}

func newHistory(ctx context.Context, opts Options, seed uint64, big bool) *history {
	rng := rand.New(rand.NewPCG(seed, 0x1ce5e1))
	tables := []*Table{{Name: "t1"}, {Name: "t2"}, {Name: "t3"}}
	h := &history{ctx: ctx, opts: opts, seed: seed, rng: rng, tables: tables, tot: &Totals{Shapes: map[string]int{}}}
	h.gen = newStepGen(rng, opts.Cfg, tables)
	h.gen.q.Big = big
	return h
}

// open opens a fresh session: its own warehouse folder and MariaDB database.
// The history's own session (not a shrinking replay's) keeps its
// warehouse in place when opts.Keep asks for it: locations in Iceberg
// metadata are absolute.
func (h *history) open() (*session, error) {
	h.dirN++
	dir := filepath.Join(h.opts.Dir, fmt.Sprintf("seed%d-%d", h.seed, h.dirN))
	kept := h.opts.Keep != "" && h.dirN == 1
	if kept {
		dir = filepath.Join(h.keepDir(), "warehouse")
		if err := os.RemoveAll(h.keepDir()); err != nil {
			return nil, err
		}
	}
	sess, err := openSession(h.ctx, h.opts.Maria, dir, fmt.Sprintf("h%d_%d", h.seed%1000000, h.dirN), h.opts.Timeout)
	if sess != nil {
		sess.kept = kept
	}
	return sess, err
}

func (h *history) keepDir() string { return filepath.Join(h.opts.Keep, fmt.Sprintf("seed%d", h.seed)) }

func (h *history) model(name string) *Table {
	for _, t := range h.tables {
		if t.Name == name {
			return t
		}
	}
	return nil
}

func cloneTables(ts []*Table) []Table {
	out := make([]Table, len(ts))
	for i, t := range ts {
		out[i] = *t
		out[i].Cols = slices.Clone(t.Cols)
		out[i].Spec = slices.Clone(t.Spec)
		out[i].Branches = slices.Clone(t.Branches)
		out[i].Tags = slices.Clone(t.Tags)
	}
	return out
}

// step applies a generated statement; false when the history must stop
// (a statement went one way on one side and another on the other).
func (h *history) step(st Step, before []Table) (bool, error) {
	st.ID = h.nextID
	h.nextID++
	h.steps = append(h.steps, st)
	h.tot.Statements++
	o, err := h.sess.apply(h.ctx, &h.steps[len(h.steps)-1], h.model(st.Table))
	if err != nil {
		return false, err
	}
	if o.skipped {
		h.steps = h.steps[:len(h.steps)-1]
		return true, nil
	}
	if h.opts.Verbose && h.opts.Log != nil {
		h.opts.Log("seed %d statement %d: %s -> %s", h.seed, st.ID, st.SQL(), o)
	}
	if o.oneSided() {
		h.fail(&Failure{Seed: h.seed, Shape: "stmt/" + st.Kind, Detail: o.String()}, nil)
		return false, nil
	}
	rows := Query{Shape: "rows", Ice: fmt.Sprintf("SELECT * FROM {{t:%s}}", st.Table), Maria: fmt.Sprintf("SELECT * FROM {{t:%s}}", st.Table)}
	if o.overflow {
		if o.iceErr != nil {
			h.tot.Overflowed++
		} else {
			h.tot.OverflowedOracle++
		}
		if h.opts.Log != nil {
			h.opts.Log("seed %d: out of range on one side only (the other's plan skipped the row): %s: %s", h.seed, st.SQL(), o)
		}
	}
	if o.iceErr != nil {
		if before != nil {
			// Refused by icesql: the model must not keep the change.
			for i := range h.tables {
				*h.tables[i] = before[i]
			}
		}
		if o.overflow && !h.loading {
			// MariaDB ran what icesql refused by a confirmed overflow:
			// its rows must not have changed either.
			h.compare(rows)
		}
		return true, nil
	}
	// Every statement is followed by the whole table, compared, and by
	// the branch it wrote or each branch whose columns it changed.
	if st.Kind != "create" && !h.loading {
		h.compare(rows)
		var branches []string
		switch {
		case st.Ref != "" && st.Kind != "ref/tag" && st.Kind != "ref/drop":
			branches = []string{st.Ref}
		case strings.HasPrefix(st.Kind, "column/"):
			branches = h.model(st.Table).Branches
		}
		for _, b := range branches {
			ref := fmt.Sprintf("{{br:%s:%s}}", st.Table, b)
			h.compare(Query{Shape: "rows/branch", Ice: "SELECT * FROM " + ref, Maria: "SELECT * FROM " + ref})
		}
	}
	return true, nil
}

// queries compares n random queries.
func (h *history) queries(n int) {
	for range n {
		if len(h.tot.Failures) >= h.opts.MaxFailures {
			return
		}
		q := h.gen.q.Next(func() (string, []Column, bool) { return h.sess.asofChoice(h.rng.IntN) })
		h.compare(q)
	}
}

func (h *history) compare(q Query) {
	c := h.sess.run(h.ctx, q)
	if c.skipped {
		h.tot.Skipped++
		return
	}
	h.tot.Queries++
	h.tot.Shapes[q.Shape]++
	if h.opts.Verbose && h.opts.Log != nil {
		h.opts.Log("seed %d query %s: on %v, off %v, MariaDB %v: %s", h.seed, q.Shape, c.on.Elapsed.Round(time.Millisecond), c.off.Elapsed.Round(time.Millisecond), c.oracle.Elapsed.Round(time.Millisecond), q.Ice)
	}
	if c.timedOut() {
		h.tot.Timeouts++
		h.tot.Slow = append(h.tot.Slow, fmt.Sprintf("seed %d: %s over %v: %s", h.seed, q.Shape, h.opts.Timeout, q.Ice))
	} else {
		h.tot.IceTimes = append(h.tot.IceTimes, c.on.Elapsed)
		h.tot.OracleTimes = append(h.tot.OracleTimes, c.oracle.Elapsed)
	}
	if c.bothRejected() {
		h.tot.Rejected++
		if h.opts.Log != nil {
			h.opts.Log("seed %d: every side refused %s: icesql: %v; MariaDB: %v", h.seed, q.Ice, c.on.Err, c.oracle.Err)
		}
		return
	}
	switch {
	case c.overflowOnIcesql():
		h.tot.Overflowed++
		if h.opts.Log != nil {
			h.opts.Log("seed %d: out of range on an icesql path only (the other side's plan skipped the row): %s: vector on %v; vector off %v", h.seed, q.Ice, errText(c.on.Err), errText(c.off.Err))
		}
	case c.overflowConfirmed:
		h.tot.OverflowedOracle++
	}
	if d := c.difference(q.Ordered); d != "" {
		h.tot.Differed++
		for _, f := range h.tot.Failures {
			if f.Shape == q.Shape {
				return // one reproduction per shape and seed is enough
			}
		}
		qq := q
		h.fail(&Failure{Seed: h.seed, Shape: q.Shape, Detail: d}, &qq)
	}
}

// fail shrinks the history that shows f and records it.
func (h *history) fail(f *Failure, q *Query) {
	f.Query = q
	f.Steps = slices.Clone(h.steps)
	if q == nil {
		h.tot.Differed++
	}
	if h.opts.Log != nil {
		h.opts.Log("seed %d: %s differs after %d statements; shrinking", h.seed, f.Shape, len(f.Steps))
	}
	shrunk, detail := h.shrink(f.Steps, q)
	if detail != "" {
		f.Steps, f.Detail = shrunk, detail
	}
	h.tot.Failures = append(h.tot.Failures, f)
	if h.opts.Log != nil {
		h.opts.Log("difference found: %s", f.Report())
	}
}

// replay runs steps on fresh databases and says how q (or, when q is nil,
// the last step) differs, or "".
func (h *history) replay(steps []Step, q *Query) string {
	sess, err := h.open()
	if err != nil {
		return ""
	}
	defer sess.close()
	for i := range steps {
		o, err := sess.apply(h.ctx, &steps[i], nil)
		if err != nil {
			return ""
		}
		if o.oneSided() {
			if q == nil && i == len(steps)-1 {
				return o.String()
			}
			return ""
		}
	}
	if q == nil {
		return ""
	}
	c := sess.run(h.ctx, *q)
	if c.timedOut() {
		return ""
	}
	return c.difference(q.Ordered)
}

// shrink drops statements, then rows, while the difference remains,
// within the shrink budget.
func (h *history) shrink(steps []Step, q *Query) ([]Step, string) {
	deadline := time.Now().Add(h.opts.ShrinkBudget)
	detail := h.replay(steps, q)
	if detail == "" {
		return steps, ""
	}
	fixed := 0
	if q == nil {
		fixed = 1 // the statement that differs stays
	}
	try := func(cand []Step) bool {
		if time.Now().After(deadline) {
			return false
		}
		if d := h.replay(cand, q); d != "" {
			detail = d
			return true
		}
		return false
	}
	for chunk := (len(steps) - fixed + 1) / 2; chunk >= 1 && time.Now().Before(deadline); {
		removed := false
		for start := 0; start+chunk <= len(steps)-fixed; {
			cand := append(slices.Clone(steps[:start]), steps[start+chunk:]...)
			if try(cand) {
				steps, removed = cand, true
			} else {
				start += chunk
			}
		}
		if !removed {
			chunk /= 2
		}
	}
	for i := range steps {
		if steps[i].Rows == nil {
			continue
		}
		for chunk := (len(steps[i].Rows) + 1) / 2; chunk >= 1 && time.Now().Before(deadline); {
			removed := false
			for start := 0; start+chunk <= len(steps[i].Rows) && len(steps[i].Rows) > 1; {
				cand := slices.Clone(steps)
				cand[i].Rows = append(slices.Clone(steps[i].Rows[:start]), steps[i].Rows[start+chunk:]...)
				cand[i].render()
				if try(cand) {
					steps, removed = cand, true
				} else {
					start += chunk
				}
			}
			if !removed {
				chunk /= 2
			}
		}
	}
	return steps, detail
}

// RunHistory runs one seed's history: three tables created with random
// specs, then opts.Steps random statements, each followed by
// opts.QueriesPerStep compared queries.
func RunHistory(ctx context.Context, opts Options, seed uint64) (*Totals, error) {
	h := newHistory(ctx, opts, seed, false)
	var err error
	if h.sess, err = h.open(); err != nil {
		return nil, err
	}
	defer h.sess.close()
	for _, t := range h.tables {
		if ok, err := h.step(h.gen.create(t), nil); !ok || err != nil {
			return h.tot, err
		}
		for range 2 {
			if ok, err := h.step(h.gen.insert(t, 5+h.rng.IntN(20)), nil); !ok || err != nil {
				return h.tot, err
			}
		}
	}
	h.queries(opts.QueriesPerStep)
	for i := range opts.Steps {
		if len(h.tot.Failures) >= opts.MaxFailures || h.pastDeadline(i, opts.MinSteps) {
			break
		}
		before := cloneTables(h.tables)
		st := h.gen.next(h.sess)
		ok, err := h.step(st, before)
		if err != nil {
			return h.tot, fmt.Errorf("seed %d, statement %s: %w", seed, st.Ice, err)
		}
		if !ok {
			break
		}
		h.queries(opts.QueriesPerStep)
	}
	if h.sess.kept && len(h.tot.Failures) == 0 {
		if err := h.keep(h.keepDir()); err != nil {
			return h.tot, fmt.Errorf("seed %d: keep the warehouse: %w", seed, err)
		}
	}
	return h.tot, nil
}

// RunShapes is issue 16's random-query run: three tables t1, t2, t3 of
// rows rows each (3,000), loaded in inserts INSERTs (20) and partitioned
// with transforms, then up to n random queries compared with MariaDB and
// timed.
func RunShapes(ctx context.Context, opts Options, seed uint64, rows, inserts, n int) (*Totals, error) {
	loadStart := time.Now()
	opts.Keep = "" // only histories are kept
	h := newHistory(ctx, opts, seed, true)
	var err error
	if h.sess, err = h.open(); err != nil {
		return nil, err
	}
	defer h.sess.close()
	if err := h.load(rows, inserts); err != nil || len(h.tot.Failures) > 0 {
		return h.tot, err
	}
	if !opts.Deadline.IsZero() {
		h.opts.Deadline = opts.Deadline.Add(time.Since(loadStart)) // the budget is for queries
	}
	for _, t := range h.tables {
		h.compare(Query{Shape: "rows", Ice: fmt.Sprintf("SELECT * FROM {{t:%s}}", t.Name), Maria: fmt.Sprintf("SELECT * FROM {{t:%s}}", t.Name)})
	}
	h.tot.Statements = 0
	for i := range n {
		if len(h.tot.Failures) >= opts.MaxFailures || h.pastDeadline(i, opts.MinQueries) {
			break
		}
		h.compare(h.gen.q.Next(func() (string, []Column, bool) { return "", nil, false }))
	}
	return h.tot, nil
}

// load creates the shapes run's three tables and fills each with rows
// rows in inserts INSERTs, ids unique (k = id joins match one row). A
// statement that went one way on one side and another on the other is a
// failure in h.tot.
func (h *history) load(rows, inserts int) error {
	h.gen.vg.maxID = rows
	h.loading = true
	defer func() { h.loading = false }()
	for _, t := range h.tables {
		if ok, err := h.step(h.gen.createCoarse(t), nil); !ok || err != nil {
			return err
		}
		per := rows / inserts
		for i := range inserts {
			st := h.gen.insert(t, per)
			for j := range st.Rows {
				st.Rows[j] = slices.Clone(st.Rows[j])
				st.Rows[j][0] = itoa(i*per + j + 1)
			}
			st.render()
			if ok, err := h.step(st, nil); !ok || err != nil {
				return err
			}
		}
	}
	return nil
}

// ShapeCounts lists how many queries of each shape ran, for the log.
func (t *Totals) ShapeCounts() string {
	keys := make([]string, 0, len(t.Shapes))
	for k := range t.Shapes {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, t.Shapes[k]))
	}
	return strings.Join(parts, " ")
}
