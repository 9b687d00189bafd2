package engine

import (
	"strconv"

	"github.com/apache/iceberg-go/table"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Write-audit-publish. Spark's session settings spark.wap.branch and
// spark.wap.id are the session variables icesql_wap_branch and
// icesql_wap_id; the planner rewrites Spark's SET spark.wap.branch = x (and
// SET icesql.wap.branch = x) to SET @@SESSION.icesql_wap_branch = 'x'. They
// act only on tables with write.wap.enabled=true, as in Spark.
const (
	wapBranchVariable = "icesql_wap_branch"
	wapIDVariable     = "icesql_wap_id"
	// wapEnabledProperty is Iceberg's TableProperties.WRITE_AUDIT_PUBLISH_ENABLED.
	wapEnabledProperty = "write.wap.enabled"
)

// registerWapVariables declares the WAP session variables in
// go-mysql-server's registry, which is process-wide; registering twice is
// harmless.
func registerWapVariables() {
	vars := make([]sql.SystemVariable, 0, 2)
	for _, name := range []string{wapBranchVariable, wapIDVariable} {
		vars = append(vars, &sql.MysqlSystemVariable{
			Name:    name,
			Scope:   sql.GetMysqlScope(sql.SystemVariableScope_Both),
			Dynamic: true,
			Type:    types.NewSystemStringType(name),
			Default: "",
		})
	}
	sql.SystemVariables.AddSystemVariables(vars)
}

// wapSettings returns the session's WAP branch and WAP id ("" when unset).
func wapSettings(ctx *sql.Context) (branch, id string) {
	get := func(name string) string {
		v, err := ctx.GetSessionVariable(ctx, name)
		if err != nil {
			return ""
		}
		s, _ := v.(string)
		return s
	}
	return get(wapBranchVariable), get(wapIDVariable)
}

// wapEnabled reports whether the table takes part in write-audit-publish.
func wapEnabled(tbl *table.Table) bool {
	on, _ := strconv.ParseBool(tbl.Properties()[wapEnabledProperty])
	return on
}
