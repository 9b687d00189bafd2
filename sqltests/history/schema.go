package history

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Kind is a column's logical type, rendered in each dialect.
type Kind int

const (
	KInt Kind = iota
	KBigint
	KString
	KDate
	KTimestamp
	KDouble
	KFloat
	KDecimal
	KBool
)

// Column is a column of the model both databases hold.
type Column struct {
	Name  string
	Kind  Kind
	Prec  int // decimals only
	Scale int
}

// IceType is the type in icesql's DDL.
func (c Column) IceType() string {
	switch c.Kind {
	case KInt:
		return "INT"
	case KBigint:
		return "BIGINT"
	case KString:
		return "STRING"
	case KDate:
		return "DATE"
	case KTimestamp:
		return "TIMESTAMP"
	case KDouble:
		return "DOUBLE"
	case KFloat:
		return "FLOAT"
	case KDecimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", c.Prec, c.Scale)
	default:
		return "BOOLEAN"
	}
}

// MariaType is the type in MariaDB's DDL. Strings compare as Iceberg's
// do: byte-wise, case-sensitive, trailing spaces significant (a binary
// NO PAD collation); timestamps are DATETIME(6), never MySQL's TIMESTAMP.
func (c Column) MariaType() string {
	switch c.Kind {
	case KString:
		return "VARCHAR(2000) COLLATE utf8mb4_nopad_bin"
	case KTimestamp:
		return "DATETIME(6)"
	case KBool:
		return "BOOLEAN"
	default:
		return c.IceType()
	}
}

func (k Kind) numeric() bool {
	return k == KInt || k == KBigint || k == KDouble || k == KFloat || k == KDecimal
}

func (k Kind) integer() bool { return k == KInt || k == KBigint }

// Table is the model of one table: its columns and current partition spec,
// as both databases should have them.
type Table struct {
	Name    string
	Cols    []Column
	Spec    []string // current partition fields, as written in PARTITIONED BY
	Format  int
	Modes   [3]string // write.update.mode, write.delete.mode, write.merge.mode
	nextCol int
	// Branches and Tags are the table's refs besides main, by name;
	// nextRef numbers new ones (b1, g2, ...).
	Branches []string
	Tags     []string
	nextRef  int
}

// Col finds a column by name.
func (t *Table) Col(name string) (Column, bool) {
	for _, c := range t.Cols {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

func (t *Table) colsOf(pred func(Column) bool) []Column {
	var out []Column
	for _, c := range t.Cols {
		if pred(c) {
			out = append(out, c)
		}
	}
	return out
}

func (t *Table) colNames() string {
	names := make([]string, len(t.Cols))
	for i, c := range t.Cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// baseColumns are the columns every table starts with (issue 16's shape).
// They are never dropped or renamed, so queries can join on them; columns
// added later (c1, c2, ...) are.
func baseColumns() []Column {
	return []Column{
		{Name: "id", Kind: KBigint},
		{Name: "k", Kind: KInt},
		{Name: "s", Kind: KString},
		{Name: "d", Kind: KDate},
		{Name: "ts", Kind: KTimestamp},
		{Name: "x", Kind: KDouble},
		{Name: "m", Kind: KDecimal, Prec: 12, Scale: 2},
		{Name: "b", Kind: KBool},
		{Name: "f", Kind: KFloat},
	}
}

func isBase(name string) bool {
	for _, c := range baseColumns() {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Partition transforms the generator draws from, with their source column.
// At most one time transform per source column (Iceberg refuses
// redundant ones such as years(d) with days(d)).
var partitionChoices = []struct{ expr, source string }{
	{"k", "k"}, {"s", "s"}, {"d", "d"}, {"b", "b"},
	{"bucket(4, id)", "id"}, {"bucket(3, s)", "s"}, {"bucket(5, k)", "k"},
	{"truncate(2, s)", "s"}, {"truncate(10, k)", "k"}, {"truncate(100, id)", "id"}, {"truncate(1000, m)", "m"},
	{"days(ts)", "ts"}, {"hours(ts)", "ts"}, {"months(ts)", "ts"}, {"years(ts)", "ts"},
	{"days(d)", "d"}, {"months(d)", "d"}, {"years(d)", "d"},
}

func sourceOf(expr string) string {
	for _, p := range partitionChoices {
		if p.expr == expr {
			return p.source
		}
	}
	return ""
}

func isTimeTransform(expr string) bool {
	for _, p := range []string{"days(", "hours(", "months(", "years("} {
		if strings.HasPrefix(expr, p) {
			return true
		}
	}
	return false
}

// addablePartitions are the fields that may be added to t's spec.
func (t *Table) addablePartitions(cfg *Config) []string {
	var out []string
	for _, p := range partitionChoices {
		if cfg.excludedPartition(p.expr) {
			continue
		}
		ok := true
		for _, cur := range t.Spec {
			src := sourceOf(cur)
			if cur == p.expr || (src == p.source && (isTimeTransform(cur) && isTimeTransform(p.expr) || !isTimeTransform(cur) && !isTimeTransform(p.expr) && transformName(cur) == transformName(p.expr))) {
				ok = false
			}
		}
		if c, found := t.Col(p.source); !found || (strings.HasPrefix(p.expr, "truncate(") && c.Kind == KDecimal && c.Scale != 2) {
			ok = false
		}
		if ok {
			out = append(out, p.expr)
		}
	}
	return out
}

func transformName(expr string) string {
	if i := strings.IndexByte(expr, '('); i >= 0 {
		return expr[:i]
	}
	return "identity"
}

func randomSpec(rng *rand.Rand, t *Table, cfg *Config) []string {
	n := rng.IntN(4)
	var spec []string
	for range n {
		choices := t.addablePartitions(cfg)
		if len(choices) == 0 {
			break
		}
		spec = append(spec, choices[rng.IntN(len(choices))])
		t.Spec = spec
	}
	t.Spec = nil
	return spec
}

func itoa(i int) string { return strconv.Itoa(i) }
