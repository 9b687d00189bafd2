package history

import (
	"fmt"
	"strings"
)

// Config switches shapes of the generated statements and queries on and
// off. Everything is on by default; the fixed-seed test turns off the
// shapes behind KnownIssues, so that it passes on main and still catches
// every other regression.
type Config struct {
	HostileStrings bool // string values that need escaping in a partition path, or are not ASCII
	Extremes       bool // INT/BIGINT/DECIMAL/DATE/TIMESTAMP extremes
	Duplicates     bool // repeated rows
	// Shapes off: statement kinds ("merge", "rollback", ...) and query
	// shapes ("union/offset", "join/left", ...) by prefix, and partition
	// transforms ("partition:truncate(1000, m)").
	Off map[string]string
}

// DefaultConfig has every shape on.
func DefaultConfig() *Config {
	return &Config{HostileStrings: true, Extremes: true, Duplicates: true, Off: map[string]string{}}
}

// on says whether a shape is generated: not when it or a prefix of it
// ("join" for "join/left") is off.
func (c *Config) on(shape string) bool {
	for s := shape; s != ""; {
		if _, off := c.Off[s]; off {
			return false
		}
		i := strings.LastIndexByte(s, '/')
		if i < 0 {
			break
		}
		s = s[:i]
	}
	return true
}

func (c *Config) excludedPartition(expr string) bool { return !c.on("partition:" + expr) }

// KnownIssue is an icesql bug the tester found that someone else owns:
// the fixed-seed run leaves its shapes out until it is fixed (then delete
// the entry, and the test checks the fix).
type KnownIssue struct {
	Name   string // what breaks
	Why    string // the reproduction or where it is tracked
	Shapes []string
}

// KnownIssues are the icesql bugs found by this tester and not fixed yet
// (sqltests/history/FINDINGS.md has their shrunk reproductions).
func KnownIssues() []KnownIssue {
	return []KnownIssue{
		{
			Name:   "WHERE over a CROSS JOIN that an outer join follows: wrong rows (RIGHT) or ERROR 1105 unable to find field (LEFT)",
			Why:    "FINDINGS.md #2 and #13: a CROSS JOIN b RIGHT JOIN c ON a.k = c.k WHERE a.k = b.k keeps c's unmatched rows; a CROSS JOIN b LEFT JOIN c ON ... WHERE a.k = b.id AND ... OR ... fails",
			Shapes: []string{"join/cross-right", "join/cross-left"},
		},
		{
			Name:   "SUM() OVER a window whose values are all NULL is 0, not NULL",
			Why:    "FINDINGS.md #3: SELECT SUM(x) OVER (PARTITION BY id) FROM t where x is NULL answers 0",
			Shapes: []string{"window/sum-null"},
		},
		{
			Name:   "GROUP BY an expression, HAVING, ORDER BY its alias: ERROR 1105 only_full_group_by",
			Why:    "FINDINGS.md #6: SELECT id % 5 AS c0, COUNT(*) FROM t GROUP BY id % 5 HAVING COUNT(*) > 0 ORDER BY c0 is refused (MySQL answers; without HAVING icesql answers too)",
			Shapes: []string{"group/having-order-expr"},
		},
		{
			Name:   "A running SUM() OVER (ORDER BY c) is the partition's total when c has ties",
			Why:    "FINDINGS.md #8: k 5, 40, 10, 20, 7 with x NULL, NULL, 1.5, 1.5, 3: SUM(k) OVER (ORDER BY x) is 82 on every row (MySQL: 45, 45, 75, 75, 82)",
			Shapes: []string{"window/running-sum"},
		},
	}
}

// WithoutKnownIssues turns off the shapes of every known issue and
// describes what it left out.
func (c *Config) WithoutKnownIssues() []string {
	var lines []string
	for _, k := range KnownIssues() {
		for _, s := range k.Shapes {
			c.Off[s] = k.Name
		}
		lines = append(lines, fmt.Sprintf("known issue %q: excluded %s (%s)", k.Name, strings.Join(k.Shapes, ", "), k.Why))
	}
	return lines
}
