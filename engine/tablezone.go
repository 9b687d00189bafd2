package engine

import (
	"time"

	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// inSessionZone is v, a value of column name of t, as the session sees
// it (see zoned).
func (t *Table) InSessionZone(ctx *sql.Context, name string, v any) any {
	tv, ok := v.(time.Time)
	if !ok {
		return v
	}
	f, ok := t.tbl.Schema().FindFieldByNameCaseInsensitive(name)
	if _, tz := f.Type.(iceberg.TimestampTzType); !ok || !tz {
		return v
	}
	if loc := sqlval.SessionZone(ctx); loc != nil {
		return sqlval.WallClock(tv, loc)
	}
	return v
}
