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
			Name:   "-5 % 5 is -0, a GROUP BY key apart from 0",
			Why:    "FINDINGS.md #10: k -5 and 60: SELECT k % 5, COUNT(*) ... GROUP BY k % 5 gives groups -0 and 0 (MySQL: one group 0, and -5 % 5 = 0)",
			Shapes: []string{"expr/mod-negative-zero"},
		},
		{
			Name:   "truncate(W, c) of an INT or BIGINT within W of its minimum wraps around, and pruning drops the row",
			Why:    "FINDINGS.md #11: PARTITIONED BY (truncate(100, id)) with id = -9223372036854775807 (partition 9223372036854775716): WHERE id BETWEEN -9223372036854775807 AND 55 misses it",
			Shapes: []string{"value/int-near-min"},
		},
		{
			Name:   "COALESCE(float_column, 0) is text: ORDER BY and comparisons on it are by string",
			Why:    "FINDINGS.md #7: f FLOAT holding 3.5, 21, 100: ORDER BY COALESCE(f, 0) gives 100, 21, 3.5",
			Shapes: []string{"expr/coalesce-float"},
		},
		{
			Name:   "BIGINT arithmetic overflows silently (wraps) instead of failing with 1690",
			Why:    "FINDINGS.md #4: SELECT 9223372036854775807 + 1 answers -9223372036854775808",
			Shapes: []string{"arith/bigint-overflow"},
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
