package history

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Step is one statement of a history: its icesql text and the MySQL
// statements that do the same to the oracle (none for what MySQL has no
// notion of: partition specs, write modes, file maintenance).
type Step struct {
	ID    int // position in the history as generated (kept while shrinking)
	Table string
	Kind  string
	Ice   string
	Maria []string
	// Cols and Rows are an INSERT's (or a literal INSERT OVERWRITE's)
	// rows, kept apart so that shrinking can drop rows.
	Cols []string
	Rows [][]string
	// Target is the step whose snapshot a rollback returns to.
	Target int
	// Keep is how many ancestors an expire_snapshots keeps.
	Keep int
	// Ref is the branch a write goes to (empty: main), or the branch or
	// tag a ref statement creates, drops or fast-forwards main to.
	Ref string
}

// branchTable is the MariaDB table that holds the rows of table t's
// branch b (the oracle of a branch is a table of its own).
func branchTable(t, b string) string { return "br_" + t + "_" + b }

// targets are the names a write's statement gives its target table on
// each side: the table, or its branch (db.t.branch_b on icesql).
func (s *Step) targets() (ice, maria string) {
	if s.Ref == "" {
		return s.Table, s.Table
	}
	return fmt.Sprintf("h.%s.branch_%s", s.Table, s.Ref), branchTable(s.Table, s.Ref)
}

// render writes the SQL of a step made of rows.
func (s *Step) render() {
	if s.Rows == nil {
		return
	}
	vals := make([]string, len(s.Rows))
	for i, r := range s.Rows {
		vals[i] = "(" + strings.Join(r, ", ") + ")"
	}
	ice, maria := s.targets()
	rest := fmt.Sprintf(" (%s) VALUES %s", strings.Join(s.Cols, ", "), strings.Join(vals, ", "))
	list := s.Table + rest
	switch s.Kind {
	case "insert":
		s.Ice = "INSERT INTO " + ice + rest
		s.Maria = []string{"INSERT INTO " + maria + rest}
	case "overwrite/values":
		s.Ice = "INSERT OVERWRITE " + list
		s.Maria = []string{"DELETE FROM " + s.Table, "INSERT INTO " + list}
	}
}

// SQL is the step as an icesql script line (rollbacks name the snapshot
// by the step that made it: its id differs on every run).
func (s *Step) SQL() string {
	switch s.Kind {
	case "rollback":
		return fmt.Sprintf("CALL system.rollback_to_snapshot('h.%s', <snapshot after statement %d>)", s.Table, s.Target+1)
	}
	return s.Ice
}

// stepGen draws the statements of a history over the model tables.
type stepGen struct {
	rng    *rand.Rand
	cfg    *Config
	vg     *valueGen
	tables []*Table
	q      *queryGen
	// recent rows per table, for duplicates.
	recent map[string][][]string
}

func newStepGen(rng *rand.Rand, cfg *Config, tables []*Table) *stepGen {
	vg := &valueGen{rng: rng, cfg: cfg, maxID: 60}
	return &stepGen{rng: rng, cfg: cfg, vg: vg, tables: tables, q: &queryGen{rng: rng, cfg: cfg, vg: vg, tables: tables}, recent: map[string][][]string{}}
}

var writeModes = []string{"copy-on-write", "merge-on-read"}

// create is a CREATE TABLE with a random spec, format and write modes.
func (g *stepGen) create(t *Table) Step {
	t.Cols = baseColumns()
	return g.createWith(t, randomSpec(g.rng, t, g.cfg))
}

func (g *stepGen) createWith(t *Table, spec []string) Step {
	t.Cols = baseColumns()
	t.Format = 2 + g.rng.IntN(2)
	for i := range t.Modes {
		t.Modes[i] = writeModes[g.rng.IntN(2)]
	}
	t.Spec = spec
	var ice, maria []string
	for _, c := range t.Cols {
		ice = append(ice, c.Name+" "+c.IceType())
		maria = append(maria, c.Name+" "+c.MariaType())
	}
	part := ""
	if len(t.Spec) > 0 {
		part = " PARTITIONED BY (" + strings.Join(t.Spec, ", ") + ")"
	}
	props := fmt.Sprintf(" TBLPROPERTIES ('format-version' = '%d', 'write.update.mode' = '%s', 'write.delete.mode' = '%s', 'write.merge.mode' = '%s')",
		t.Format, t.Modes[0], t.Modes[1], t.Modes[2])
	return Step{Table: t.Name, Kind: "create",
		Ice: fmt.Sprintf("CREATE TABLE %s (%s)%s%s", t.Name, strings.Join(ice, ", "), part, props),
		// An index on d keeps some of the oracle's joins fast (its times
		// are the shapes run's baseline). Not on s: MariaDB 10.11 answers
		// a correlated IN wrong with a prefix index on it and
		// join_cache_level=4 (FINDINGS.md, tester bugs). Not on m, k or
		// id: through an index MariaDB rounds a constant compared with a
		// DECIMAL or integer column (m = 0.009 matches 0.01, k = 22.3
		// matches 22; FINDINGS.md #27).
		Maria: []string{fmt.Sprintf("CREATE TABLE %s (%s, INDEX (d)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin", t.Name, strings.Join(maria, ", "))}}
}

// coarseSpecs are the shapes run's partition specs: with ids numbered in
// insert order, each INSERT writes one to three files (issue 16's tables
// are 3,000 rows in about 20 files each), not one per row.
var coarseSpecs = [][]string{{"truncate(1000, id)"}, {"bucket(2, id)"}, {"truncate(1000, id)", "b"}}

// createCoarse is a CREATE TABLE with one of the coarseSpecs.
func (g *stepGen) createCoarse(t *Table) Step {
	spec := coarseSpecs[g.rng.IntN(len(coarseSpecs))]
	for _, p := range spec {
		if g.cfg.excludedPartition(p) {
			spec = nil
		}
	}
	return g.createWith(t, spec)
}

// insert is a batch of n rows into t.
func (g *stepGen) insert(t *Table, n int) Step {
	cols := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		cols[i] = c.Name
	}
	s := Step{Table: t.Name, Kind: "insert", Cols: cols}
	for range n {
		r := g.vg.row(t.Cols, g.recent[t.Name])
		s.Rows = append(s.Rows, r)
		g.recent[t.Name] = append(g.recent[t.Name], r)
	}
	if len(g.recent[t.Name]) > 50 {
		g.recent[t.Name] = g.recent[t.Name][len(g.recent[t.Name])-50:]
	}
	s.render()
	return s
}

// snapshots is what the runner knows of a table's snapshots, for the
// statements and queries that name one.
type snapshots interface {
	// rollbackTargets are the steps whose snapshots are ancestors of the
	// table's current one, alive, with the current columns.
	rollbackTargets(table string) []int
}

// next draws the next statement. It changes the model as the statement
// would, so the statement must be applied.
func (g *stepGen) next(snaps snapshots) Step {
	for {
		t := g.tables[g.rng.IntN(len(g.tables))]
		kind := weighted(g.rng, []weightedKind{
			{"insert", 30}, {"update", 10}, {"delete", 8}, {"merge", 8}, {"mode", 4},
			{"column/add", 5}, {"column/drop", 3}, {"column/rename", 3}, {"column/widen", 3},
			{"partition/add", 4}, {"partition/drop", 3}, {"partition/replace", 2}, {"column/reorder", 2}, {"sortorder", 2},
			{"overwrite", 3}, {"truncate", 1},
			{"call/rewrite_data_files", 3}, {"call/rewrite_position_delete_files", 3},
			{"call/expire_snapshots", 2}, {"rollback", 3}, {"format", 1},
			{"ref/branch", 3}, {"ref/tag", 2}, {"ref/fast_forward", 2}, {"ref/drop", 1},
		})
		if !g.cfg.on("stmt/" + kind) {
			continue
		}
		saved := cloneTables([]*Table{t})[0]
		if s, ok := g.build(t, kind, snaps); ok {
			if strings.HasPrefix(kind, "column/") {
				g.onBranches(t, &s)
			}
			return s
		}
		*t = saved // a statement not drawn leaves the model as it was
	}
}

type weightedKind struct {
	kind   string
	weight int
}

func weighted(r *rand.Rand, ks []weightedKind) string {
	total := 0
	for _, k := range ks {
		total += k.weight
	}
	n := r.IntN(total)
	for _, k := range ks {
		if n < k.weight {
			return k.kind
		}
		n -= k.weight
	}
	return ks[0].kind
}

// onBranches applies a column change to the oracle's branch tables too: a
// branch reads with the table's current schema.
func (g *stepGen) onBranches(t *Table, s *Step) {
	prefix := "ALTER TABLE " + t.Name + " "
	var more []string
	for _, b := range t.Branches {
		for _, q := range s.Maria {
			if strings.HasPrefix(q, prefix) {
				more = append(more, "ALTER TABLE "+branchTable(t.Name, b)+" "+strings.TrimPrefix(q, prefix))
			}
		}
	}
	s.Maria = append(s.Maria, more...)
}

// branchOrMain picks the target of a write: one of t's branches a third
// of the time, else main ("").
func (g *stepGen) branchOrMain(t *Table) string {
	if len(t.Branches) == 0 || g.rng.IntN(3) > 0 {
		return ""
	}
	return t.Branches[g.rng.IntN(len(t.Branches))]
}

func (g *stepGen) build(t *Table, kind string, snaps snapshots) (Step, bool) {
	r := g.rng
	s := Step{Table: t.Name, Kind: kind, Ref: g.branchOrMain(t)}
	ice, maria := s.targets()
	switch kind {
	case "insert":
		ref := s.Ref
		s = g.insert(t, 1+r.IntN(25))
		s.Ref = ref
		s.render()
		return s, true
	case "update":
		set, where := g.assignments(t), g.q.tablePredicate(t)
		s.Ice = fmt.Sprintf("UPDATE %s SET %s WHERE %s", ice, set, where)
		s.Maria = []string{fmt.Sprintf("UPDATE %s SET %s WHERE %s", maria, set, where)}
	case "delete":
		where := g.q.tablePredicate(t)
		s.Ice = fmt.Sprintf("DELETE FROM %s WHERE %s", ice, where)
		s.Maria = []string{fmt.Sprintf("DELETE FROM %s WHERE %s", maria, where)}
	case "merge":
		return g.merge(t, s.Ref), true
	case "mode":
		i := r.IntN(3)
		prop := []string{"write.update.mode", "write.delete.mode", "write.merge.mode"}[i]
		t.Modes[i] = writeModes[r.IntN(2)]
		s.Ice = fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES ('%s' = '%s')", t.Name, prop, t.Modes[i])
	case "format":
		if t.Format != 2 {
			return s, false
		}
		t.Format = 3
		s.Ice = fmt.Sprintf("ALTER TABLE %s SET TBLPROPERTIES ('format-version' = '3')", t.Name)
	case "column/add":
		if len(t.Cols) >= 14 {
			return s, false
		}
		t.nextCol++
		kinds := []Column{{Kind: KInt}, {Kind: KBigint}, {Kind: KString}, {Kind: KDate}, {Kind: KTimestamp}, {Kind: KDouble}, {Kind: KFloat}, {Kind: KDecimal, Prec: 9, Scale: 2}, {Kind: KBool}}
		c := kinds[r.IntN(len(kinds))]
		c.Name = fmt.Sprintf("c%d", t.nextCol)
		t.Cols = append(t.Cols, c)
		s.Ice = fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.Name, c.Name, c.IceType())
		s.Maria = []string{fmt.Sprintf("ALTER TABLE %s ADD COLUMN %s %s", t.Name, c.Name, c.MariaType())}
		g.recent[t.Name] = nil
	case "column/drop":
		extra := t.colsOf(func(c Column) bool { return !isBase(c.Name) })
		if len(extra) == 0 {
			return s, false
		}
		c := extra[r.IntN(len(extra))]
		t.Cols = slicesDelete(t.Cols, c.Name)
		s.Ice = fmt.Sprintf("ALTER TABLE %s DROP COLUMN %s", t.Name, c.Name)
		s.Maria = []string{s.Ice}
		g.recent[t.Name] = nil
	case "column/rename":
		extra := t.colsOf(func(c Column) bool { return !isBase(c.Name) })
		if len(extra) == 0 {
			return s, false
		}
		c := extra[r.IntN(len(extra))]
		t.nextCol++
		name := fmt.Sprintf("c%d", t.nextCol)
		for i := range t.Cols {
			if t.Cols[i].Name == c.Name {
				t.Cols[i].Name = name
			}
		}
		s.Ice = fmt.Sprintf("ALTER TABLE %s RENAME COLUMN %s TO %s", t.Name, c.Name, name)
		s.Maria = []string{s.Ice}
	case "column/widen":
		var choices []int
		for i, c := range t.Cols {
			if c.Kind == KInt || c.Kind == KFloat || (c.Kind == KDecimal && c.Prec < 12) {
				choices = append(choices, i)
			}
		}
		if len(choices) == 0 {
			return s, false
		}
		i := choices[r.IntN(len(choices))]
		c := &t.Cols[i]
		switch c.Kind {
		case KInt:
			c.Kind = KBigint
		case KFloat:
			c.Kind = KDouble
		default:
			c.Prec = 12
		}
		s.Ice = fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s TYPE %s", t.Name, c.Name, c.IceType())
		s.Maria = []string{fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s", t.Name, c.Name, c.MariaType())}
		g.recent[t.Name] = nil
	case "partition/add":
		choices := t.addablePartitions(g.cfg)
		if len(choices) == 0 {
			return s, false
		}
		p := choices[r.IntN(len(choices))]
		t.Spec = append(t.Spec, p)
		s.Ice = fmt.Sprintf("ALTER TABLE %s ADD PARTITION FIELD %s", t.Name, p)
	case "partition/drop":
		if len(t.Spec) == 0 {
			return s, false
		}
		i := r.IntN(len(t.Spec))
		p := t.Spec[i]
		t.Spec = append(t.Spec[:i:i], t.Spec[i+1:]...)
		s.Ice = fmt.Sprintf("ALTER TABLE %s DROP PARTITION FIELD %s", t.Name, p)
	case "partition/replace":
		if len(t.Spec) == 0 {
			return s, false
		}
		i := r.IntN(len(t.Spec))
		old := t.Spec[i]
		t.Spec = append(t.Spec[:i:i], t.Spec[i+1:]...)
		choices := t.addablePartitions(g.cfg)
		if len(choices) == 0 {
			return s, false
		}
		p := choices[r.IntN(len(choices))]
		t.Spec = append(t.Spec, p)
		s.Ice = fmt.Sprintf("ALTER TABLE %s REPLACE PARTITION FIELD %s WITH %s", t.Name, old, p)
	case "column/reorder":
		i, j := r.IntN(len(t.Cols)), r.IntN(len(t.Cols))
		if i == j {
			return s, false
		}
		c := t.Cols[i]
		rest := slicesDelete(t.Cols, c.Name)
		if r.IntN(3) == 0 {
			t.Cols = append([]Column{c}, rest...)
			s.Ice = fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s FIRST", t.Name, c.Name)
			s.Maria = []string{fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s FIRST", t.Name, c.Name, c.MariaType())}
		} else {
			after := t.Cols[j]
			k := 0
			for k < len(rest) && rest[k].Name != after.Name {
				k++
			}
			t.Cols = append(append(append([]Column{}, rest[:k+1]...), c), rest[k+1:]...)
			s.Ice = fmt.Sprintf("ALTER TABLE %s ALTER COLUMN %s AFTER %s", t.Name, c.Name, after.Name)
			s.Maria = []string{fmt.Sprintf("ALTER TABLE %s MODIFY COLUMN %s %s AFTER %s", t.Name, c.Name, c.MariaType(), after.Name)}
		}
		g.recent[t.Name] = nil
	case "sortorder":
		if r.IntN(4) == 0 {
			s.Ice = fmt.Sprintf("ALTER TABLE %s WRITE UNORDERED", t.Name)
		} else {
			c := baseColumns()[r.IntN(len(baseColumns()))]
			s.Ice = fmt.Sprintf("ALTER TABLE %s WRITE ORDERED BY %s %s", t.Name, c.Name, pick(r, "ASC", "DESC", "DESC NULLS LAST", "ASC NULLS LAST"))
		}
	case "overwrite":
		if r.IntN(2) == 0 {
			s = g.insert(t, r.IntN(12))
			s.Kind = "overwrite/values"
			if len(s.Rows) == 0 {
				return s, false
			}
			s.render()
			return s, true
		}
		s.Kind = "overwrite/select"
		where := g.q.tablePredicate(t)
		s.Ice = fmt.Sprintf("INSERT OVERWRITE %s SELECT * FROM %s WHERE %s", t.Name, t.Name, where)
		s.Maria = []string{
			fmt.Sprintf("CREATE TEMPORARY TABLE ow AS SELECT * FROM %s WHERE %s", t.Name, where),
			"DELETE FROM " + t.Name, fmt.Sprintf("INSERT INTO %s SELECT * FROM ow", t.Name), "DROP TEMPORARY TABLE ow"}
	case "truncate":
		s.Ice = "TRUNCATE TABLE " + t.Name
		s.Maria = []string{s.Ice}
	case "call/rewrite_data_files":
		opts := ""
		if r.IntN(2) == 0 {
			opts = ", options => map('rewrite-all', 'true')"
		}
		s.Ice = fmt.Sprintf("CALL system.rewrite_data_files(table => 'h.%s'%s)", t.Name, opts)
	case "call/rewrite_position_delete_files":
		s.Ice = fmt.Sprintf("CALL system.rewrite_position_delete_files(table => 'h.%s', options => map('rewrite-all', 'true'))", t.Name)
	case "call/expire_snapshots":
		s.Keep = 1 + r.IntN(4)
		s.Ice = fmt.Sprintf("CALL system.expire_snapshots(table => 'h.%s', older_than => TIMESTAMP '2999-12-31 00:00:00', retain_last => %d)", t.Name, s.Keep)
	case "rollback":
		targets := snaps.rollbackTargets(t.Name)
		if len(targets) == 0 {
			return s, false
		}
		s.Target = targets[r.IntN(len(targets))]
	case "ref/branch":
		// A branch starts at main's head; its rows are a copy of main's.
		if len(t.Branches) >= 2 {
			return s, false
		}
		t.nextRef++
		s.Ref = fmt.Sprintf("b%d", t.nextRef)
		t.Branches = append(t.Branches, s.Ref)
		br := branchTable(t.Name, s.Ref)
		s.Ice = fmt.Sprintf("ALTER TABLE %s CREATE BRANCH %s", t.Name, s.Ref)
		s.Maria = []string{fmt.Sprintf("CREATE TABLE %s LIKE %s", br, t.Name), fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", br, t.Name)}
	case "ref/tag":
		// A tag names main's head: the oracle reads it from its copy of
		// that snapshot's rows.
		if len(t.Tags) >= 3 {
			return s, false
		}
		t.nextRef++
		s.Ref = fmt.Sprintf("g%d", t.nextRef)
		t.Tags = append(t.Tags, s.Ref)
		s.Ice = fmt.Sprintf("ALTER TABLE %s CREATE TAG %s", t.Name, s.Ref)
	case "ref/fast_forward":
		// Applied only where main's head is an ancestor of the branch's
		// (the runner skips it otherwise, as Iceberg would refuse it).
		if len(t.Branches) == 0 {
			return s, false
		}
		s.Ref = t.Branches[r.IntN(len(t.Branches))]
		s.Ice = fmt.Sprintf("CALL system.fast_forward(table => 'h.%s', branch => 'main', to => '%s')", t.Name, s.Ref)
		s.Maria = []string{"DELETE FROM " + t.Name, fmt.Sprintf("INSERT INTO %s SELECT * FROM %s", t.Name, branchTable(t.Name, s.Ref))}
	case "ref/drop":
		if len(t.Branches) == 0 {
			return s, false
		}
		s.Ref = t.Branches[r.IntN(len(t.Branches))]
		t.Branches = slices.DeleteFunc(t.Branches, func(b string) bool { return b == s.Ref })
		s.Ice = fmt.Sprintf("ALTER TABLE %s DROP BRANCH %s", t.Name, s.Ref)
		s.Maria = []string{"DROP TABLE " + branchTable(t.Name, s.Ref)}
	}
	if !strings.HasPrefix(kind, "ref/") && kind != "update" && kind != "delete" {
		s.Ref = "" // only writes and ref statements name a branch
	}
	return s, true
}

func slicesDelete(cols []Column, name string) []Column {
	var out []Column
	for _, c := range cols {
		if c.Name != name {
			out = append(out, c)
		}
	}
	return out
}

// assignments is an UPDATE's SET list: each column once, each value a
// literal or a function of that column alone (MySQL evaluates SET left to
// right with the new values; Iceberg with the old ones).
func (g *stepGen) assignments(t *Table) string {
	r := g.rng
	n := 1 + r.IntN(2)
	perm := r.Perm(len(t.Cols))
	var sets []string
	for _, i := range perm[:min(n, len(perm))] {
		c := t.Cols[i]
		expr := g.vg.value(c, true)
		if r.IntN(2) == 0 {
			switch c.Kind {
			case KString:
				expr = fmt.Sprintf("CONCAT(%s, '_u')", c.Name)
			case KInt, KBigint:
				expr = fmt.Sprintf("%s DIV 2", c.Name)
			case KDouble:
				expr = fmt.Sprintf("%s * 2", c.Name)
			case KDecimal:
				expr = fmt.Sprintf("%s - 1", c.Name)
			case KBool:
				expr = fmt.Sprintf("NOT %s", c.Name)
			}
		}
		sets = append(sets, c.Name+" = "+expr)
	}
	return strings.Join(sets, ", ")
}

// merge is a MERGE INTO t from another table's rows, unique per id (a
// target row matched by two source rows is an error in Iceberg, an
// arbitrary pick in MySQL's UPDATE ... JOIN). MySQL runs it as the
// staged UPDATE/DELETE + INSERT it means: the rows to insert are those
// without a match before any change.
func (g *stepGen) merge(t *Table, ref string) Step {
	r := g.rng
	src := g.tables[r.IntN(len(g.tables))]
	where := g.q.tablePredicate(src)
	source := fmt.Sprintf("SELECT id, MAX(k) AS k, MAX(s) AS s, MAX(x) AS x FROM %s WHERE id IS NOT NULL AND %s GROUP BY id", src.Name, where)
	variant := r.IntN(3)
	s := Step{Table: t.Name, Kind: fmt.Sprintf("merge/%d", variant), Ref: ref}
	ice, target := s.targets()
	var clauses []string
	maria := []string{"CREATE TEMPORARY TABLE ms AS " + source}
	if variant != 2 {
		maria = append(maria, fmt.Sprintf("CREATE TEMPORARY TABLE mi AS SELECT id, k, s, x FROM ms WHERE NOT EXISTS (SELECT 1 FROM %s AS tg WHERE tg.id = ms.id)", target))
	}
	switch variant {
	case 0, 2:
		clauses = append(clauses, "WHEN MATCHED THEN UPDATE SET k = src.k, s = src.s")
		maria = append(maria, fmt.Sprintf("UPDATE %s AS tg JOIN ms ON tg.id = ms.id SET tg.k = ms.k, tg.s = ms.s", target))
	case 1:
		clauses = append(clauses, "WHEN MATCHED AND tg.k > src.k THEN DELETE")
		maria = append(maria, fmt.Sprintf("DELETE tg FROM %s AS tg JOIN ms ON tg.id = ms.id WHERE tg.k > ms.k", target))
	}
	if variant != 2 {
		clauses = append(clauses, "WHEN NOT MATCHED THEN INSERT (id, k, s, x) VALUES (src.id, src.k, src.s, src.x)")
		maria = append(maria, fmt.Sprintf("INSERT INTO %s (id, k, s, x) SELECT id, k, s, x FROM mi", target), "DROP TEMPORARY TABLE mi")
	}
	maria = append(maria, "DROP TEMPORARY TABLE ms")
	s.Ice = fmt.Sprintf("MERGE INTO %s AS tg USING (%s) AS src ON tg.id = src.id %s", ice, source, strings.Join(clauses, " "))
	s.Maria = maria
	return s
}
