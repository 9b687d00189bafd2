package vecexec

import (
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/expression/function/aggregation"
)

// countDistinctArg says whether the vector path counts a's distinct values
// as go-mysql-server does. go-mysql-server tells values apart by their
// text, so only one plain column qualifies: a column's values have one
// text each (a decimal column one scale), where an expression's decimal
// zero may print as 0.00 or -0.00 and count twice.
func countDistinctArg(a *aggregation.CountDistinct) error {
	kids := a.Children()
	if len(kids) != 1 {
		return decline("COUNT(DISTINCT) of %d values", len(kids))
	}
	if _, ok := kids[0].(*expression.GetField); !ok {
		return decline("COUNT(DISTINCT) of %s, not a column", kids[0])
	}
	return nil
}
