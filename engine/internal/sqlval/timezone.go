package sqlval

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression/function"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// Iceberg timestamptz is an instant; icesql shows it as MySQL shows a
// TIMESTAMP: as the wall-clock time of the session's time zone
// (SET time_zone = '+02:00'), and reads a value written or compared with it
// in that zone. Values stay UTC instants everywhere below SQL: rows are
// shifted where they are built from Arrow (zoned) and back where they are
// written (unzoned); a literal pushed to Iceberg is read in the zone
// (instantIn). Iceberg timestamp (without zone) is a wall-clock time and
// is never shifted.

// SessionZone is the session's time zone, nil when it is UTC (nothing to
// shift) or cannot be read.
func SessionZone(ctx *sql.Context) *time.Location {
	if ctx == nil || ctx.Session == nil {
		return nil
	}
	tz, err := function.SessionTimeZone(ctx)
	if err != nil {
		return nil
	}
	var loc *time.Location
	if d, err := sql.MySQLOffsetToDuration(tz); err == nil {
		loc = time.FixedZone(tz, int(d/time.Second))
	} else if loc, err = time.LoadLocation(tz); err != nil {
		return nil
	}
	_, winter := time.Date(2000, 1, 1, 0, 0, 0, 0, loc).Zone()
	_, summer := time.Date(2000, 7, 1, 0, 0, 0, 0, loc).Zone()
	if winter == 0 && summer == 0 {
		return nil
	}
	return loc
}

// isZoned says whether an Arrow column holds timestamptz values.
func isZoned(dt arrow.DataType) bool {
	ts, ok := dt.(*arrow.TimestampType)
	return ok && ts.TimeZone != ""
}

// Zoned is v, read from col, as the session sees it: a timestamptz
// instant becomes the zone's wall-clock time.
func Zoned(col arrow.Array, v any, loc *time.Location) any {
	t, ok := v.(time.Time)
	if !ok || loc == nil || !isZoned(col.DataType()) {
		return v
	}
	return WallClock(t, loc)
}

// WallClock is instant t as loc's wall-clock time (in UTC, as go-mysql-
// server keeps DATETIME values).
func WallClock(t time.Time, loc *time.Location) time.Time {
	w := t.In(loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
}

// Unzoned is v, to be written to a column built by b, as the instant the
// session means: a wall-clock time in its zone for a timestamptz column.
func Unzoned(b array.Builder, v any, loc *time.Location) any {
	t, ok := v.(time.Time)
	if !ok || loc == nil || !isZoned(b.Type()) {
		return v
	}
	return instant(t, loc)
}

// instant is wall-clock time w (in UTC) of zone loc as a UTC instant.
func instant(w time.Time, loc *time.Location) time.Time {
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), loc).UTC()
}

// InstantIn is a value compared with timestamptz field f, as the instant
// Iceberg compares: a time or a string read in the session's zone.
// Values of other fields, or that are not times, are returned as they are.
func InstantIn(ctx *sql.Context, f iceberg.NestedField, v any) any {
	if _, ok := f.Type.(iceberg.TimestampTzType); !ok {
		return v
	}
	loc := SessionZone(ctx)
	if loc == nil {
		return v
	}
	t, ok := v.(time.Time)
	if !ok {
		if _, isText := v.(string); !isText {
			return v
		}
		c, _, err := types.DatetimeMaxPrecision.Convert(ctx, v)
		if t, ok = c.(time.Time); err != nil || !ok {
			return v
		}
	}
	return instant(t, loc)
}
