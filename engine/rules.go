package engine

import (
	"fmt"

	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/analyzer"
	"github.com/dolthub/go-mysql-server/sql/plan"
	"github.com/dolthub/go-mysql-server/sql/transform"
)

// icesql's analyzer rules take ids far above go-mysql-server's own.
const (
	rememberCTASOptionsID analyzer.RuleId = 1000 + iota
	markFullAnalysisID
	pushRowFiltersID
	countFromMetadataID
	minMaxFromMetadataID
	bindScanIDsID
	resolveQuantifiedID
	vectorizeID
	orderLargeJoinsID
	viewStatementsID
	fixSetOpsID
	innerOuterJoinsID
	fixWindowsID
	keyCorrelatedSubqueriesID
	filterOuterJoinsID
)

// rememberCTASOptions keeps the table options of CREATE TABLE ... AS SELECT
// for Database.CreateTable: go-mysql-server's resolveCreateSelect rule
// rebuilds the CREATE node without them, and they carry what the planner
// moved out of TBLPROPERTIES, COMMENT and PARTITIONED BY.
func rememberCTASOptions(ctx *sql.Context, _ *analyzer.Analyzer, n sql.Node, _ *plan.Scope, _ analyzer.RuleSelector, _ *sql.QueryFlags) (sql.Node, transform.TreeIdentity, error) {
	if ct, ok := n.(*plan.CreateTable); ok && ct.Temporary() {
		if err := temporaryOptions(ct); err != nil { // temptables.go
			return nil, transform.SameTree, err
		}
	}
	if ct, ok := n.(*plan.CreateTable); ok && ct.Select() != nil {
		if comment, ok := ct.TableOpts["comment"].(string); ok && comment != "" {
			sessionOf(ctx).rememberCreateComment(ctx, ct.Name(), comment)
		}
	}
	return n, transform.SameTree, nil
}

// replaceRule puts replace(rule) in place of go-mysql-server's analyzer
// rule named name (its RuleId's String: the ids are not exported), in every
// batch of a.
func replaceRule(a *analyzer.Analyzer, name string, replace func(analyzer.RuleFunc) analyzer.RuleFunc) error {
	found := false
	for _, b := range a.Batches {
		for i := range b.Rules {
			if b.Rules[i].Id.String() == name {
				b.Rules[i].Apply, found = replace(b.Rules[i].Apply), true
			}
		}
	}
	if !found {
		return fmt.Errorf("go-mysql-server has no analyzer rule %s to replace", name)
	}
	return nil
}
