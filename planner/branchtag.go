package planner

import (
	"strconv"
	"strings"
	"time"

	ast "github.com/dolthub/vitess/go/vt/sqlparser"
)

// RefDDL is the branch and tag DDL of Iceberg's Spark extensions, an
// AlterTable action:
//
//	CREATE [OR REPLACE] BRANCH|TAG [IF NOT EXISTS] name [AS OF VERSION id]
//	    [RETAIN n DAYS|HOURS|MINUTES]
//	    [WITH SNAPSHOT RETENTION [n SNAPSHOTS] [n DAYS|HOURS|MINUTES]]   (branches)
//	REPLACE BRANCH|TAG name [AS OF VERSION id] [RETAIN …] [WITH SNAPSHOT RETENTION …]
//	DROP BRANCH|TAG [IF EXISTS] name
//
// Durations are in milliseconds, as Iceberg stores them; nil means the
// clause was not written.
type RefDDL struct {
	Tag         bool // a tag; else a branch
	Name        string
	Drop        bool
	Create      bool // CREATE; with Replace, CREATE OR REPLACE
	Replace     bool
	IfNotExists bool
	IfExists    bool
	SnapshotID  *int64

	MaxRefAgeMs        *int64 // RETAIN
	MinSnapshotsToKeep *int   // WITH SNAPSHOT RETENTION n SNAPSHOTS
	MaxSnapshotAgeMs   *int64 // WITH SNAPSHOT RETENTION … n DAYS
}

// Kind is "BRANCH" or "TAG", for messages.
func (r *RefDDL) Kind() string {
	if r.Tag {
		return "TAG"
	}
	return "BRANCH"
}

// isRefDDL reports whether the ALTER TABLE action at token i is one of
// RefDDL's forms.
func (s statement) isRefDDL(i int) bool {
	isRef := func(j int) bool { return s.word(j, "branch") || s.word(j, "tag") }
	switch {
	case s.word(i, "create"):
		return isRef(i+1) || s.word(i+1, "or") && s.word(i+2, "replace") && isRef(i+3)
	case s.word(i, "replace"), s.word(i, "drop"):
		return isRef(i + 1)
	}
	return false
}

// refDDL reads the RefDDL starting at token i.
func (s statement) refDDL(i int) (*RefDDL, error) {
	r := &RefDDL{}
	switch {
	case s.word(i, "drop"):
		r.Drop = true
	case s.word(i, "replace"):
		r.Replace = true
	case s.word(i+1, "or"):
		r.Create, r.Replace = true, true
		i += 2
	default:
		r.Create = true
	}
	i++
	r.Tag = s.word(i, "tag")
	i++
	switch {
	case r.Drop && s.word(i, "if") && s.word(i+1, "exists"):
		r.IfExists = true
		i += 2
	case r.Create && !r.Replace && s.word(i, "if") && s.word(i+1, "not") && s.word(i+2, "exists"):
		r.IfNotExists = true
		i += 3
	}
	if !s.name(i) {
		return nil, s.syntaxError(i, "%s expects a name", r.Kind())
	}
	r.Name = s.toks[i].val
	i++
	if r.Drop {
		if i != len(s.toks) {
			return nil, s.syntaxError(i, "DROP %s takes no further clauses", r.Kind())
		}
		return r, nil
	}
	return r, s.refOptions(i, r)
}

// refOptions reads [AS OF VERSION id] [RETAIN n unit] [WITH SNAPSHOT
// RETENTION …] at token i, in that order, to the end of the statement.
func (s statement) refOptions(i int, r *RefDDL) error {
	if s.word(i, "as") && s.word(i+1, "of") && s.word(i+2, "version") {
		id, err := s.integer(i+3, "AS OF VERSION expects a snapshot id")
		if err != nil {
			return err
		}
		r.SnapshotID = &id
		i += 4
	}
	if s.word(i, "retain") {
		ms, err := s.duration(i+1, "RETAIN")
		if err != nil {
			return err
		}
		r.MaxRefAgeMs = &ms
		i += 3
	}
	if s.word(i, "with") && s.word(i+1, "snapshot") && s.word(i+2, "retention") && !r.Tag {
		i += 3
		if s.word(i+1, "snapshots") {
			n, err := s.integer(i, "WITH SNAPSHOT RETENTION expects a number of SNAPSHOTS")
			if err != nil {
				return err
			}
			keep := int(n)
			if int64(keep) != n {
				return s.syntaxError(i, "too many snapshots")
			}
			r.MinSnapshotsToKeep = &keep
			i += 2
		}
		if i < len(s.toks) {
			ms, err := s.duration(i, "WITH SNAPSHOT RETENTION")
			if err != nil {
				return err
			}
			r.MaxSnapshotAgeMs = &ms
			i += 2
		}
		if r.MinSnapshotsToKeep == nil && r.MaxSnapshotAgeMs == nil {
			return s.syntaxError(i, "WITH SNAPSHOT RETENTION expects n SNAPSHOTS and/or n DAYS|HOURS|MINUTES")
		}
	}
	if i != len(s.toks) {
		want := "AS OF VERSION, RETAIN or WITH SNAPSHOT RETENTION"
		if r.Tag {
			want = "AS OF VERSION or RETAIN"
		}
		return s.syntaxError(i, "%s %s expects %s", r.Kind(), r.Name, want)
	}
	return nil
}

// integer reads the whole number at token i.
func (s statement) integer(i int, msg string) (int64, error) {
	if i >= len(s.toks) || s.toks[i].typ != ast.INTEGRAL {
		return 0, s.syntaxError(i, "%s", msg)
	}
	n, err := strconv.ParseInt(s.toks[i].val, 10, 64)
	if err != nil {
		return 0, s.syntaxError(i, "%s: %v", msg, err)
	}
	return n, nil
}

// duration reads n DAYS|HOURS|MINUTES at token i as milliseconds.
func (s statement) duration(i int, clause string) (int64, error) {
	n, err := s.integer(i, clause+" expects a number of DAYS, HOURS or MINUTES")
	if err != nil {
		return 0, err
	}
	units := map[string]time.Duration{"days": 24 * time.Hour, "hours": time.Hour, "minutes": time.Minute}
	if i+1 >= len(s.toks) || s.toks[i+1].quoted {
		return 0, s.syntaxError(i+1, "%s expects DAYS, HOURS or MINUTES", clause)
	}
	unit, ok := units[strings.ToLower(s.toks[i+1].val)]
	if !ok {
		return 0, s.syntaxError(i+1, "%s expects DAYS, HOURS or MINUTES", clause)
	}
	if n > int64(1<<62)/unit.Milliseconds() {
		return 0, s.syntaxError(i, "%s: %d is too long", clause, n)
	}
	return n * unit.Milliseconds(), nil
}
