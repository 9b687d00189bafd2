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
// (sqltests/history/FINDINGS.md has their shrunk reproductions). None is
// open: every shape the generator draws runs in the fixed-seed run.
func KnownIssues() []KnownIssue {
	return nil
}

// WithoutKnownIssues turns off the shapes of every known issue and
// describes what it left out.
func (c *Config) WithoutKnownIssues() []string { return c.without(KnownIssues()) }

// without turns off the shapes of issues.
func (c *Config) without(issues []KnownIssue) []string {
	var lines []string
	for _, k := range issues {
		for _, s := range k.Shapes {
			c.Off[s] = k.Name
		}
		lines = append(lines, fmt.Sprintf("known issue %q: excluded %s (%s)", k.Name, strings.Join(k.Shapes, ", "), k.Why))
	}
	return lines
}
