package sqlfunc

import (
	"bytes"
	"context"

	"github.com/dolthub/vitess/go/mysql"
	"github.com/dolthub/vitess/go/sqltypes"
	querypb "github.com/dolthub/vitess/go/vt/proto/query"
)

// go-mysql-server writes the year of a DATE, DATETIME or TIMESTAMP without
// its leading zeros (types/datetime.go, appendDateFormat): 0011-03-05 went
// out as 11-03-05. Clients read that as another date, or not at all: over
// the binary protocol (prepared statements) vitess could not encode it and
// the connection dropped. icesql pads the year where values leave: the
// wire handler (yearPadHandler) and the in-process driver (textValue).

// PaddedYear is text, a date or date-time as MySQL writes it, with its year
// padded to four digits; changed says it was short.
func PaddedYear(text []byte) (out []byte, changed bool) {
	i := bytes.IndexByte(text, '-')
	if i <= 0 || i >= 4 {
		return text, false
	}
	for _, c := range text[:i] {
		if c < '0' || c > '9' {
			return text, false
		}
	}
	out = make([]byte, 0, len(text)+4-i)
	out = append(out, "000"[:4-i]...)
	return append(out, text...), true
}

// IsDateType says values of a result column of type t are dates or
// date-times.
func IsDateType(t querypb.Type) bool {
	return t == sqltypes.Date || t == sqltypes.Datetime || t == sqltypes.Timestamp
}

// padYears pads the years of the date columns of res in place.
func padYears(res *sqltypes.Result) {
	if res == nil {
		return
	}
	for i, f := range res.Fields {
		if !IsDateType(f.Type) {
			continue
		}
		for _, row := range res.Rows {
			if i >= len(row) || row[i].IsNull() {
				continue
			}
			if padded, changed := PaddedYear(row[i].Raw()); changed {
				row[i] = sqltypes.MakeTrusted(row[i].Type(), padded)
			}
		}
	}
}

// YearPadHandler pads the years of the dates every result carries.
type YearPadHandler struct {
	mysql.Handler
}

func (h YearPadHandler) ComQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) error {
	return h.Handler.ComQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		padYears(res)
		return callback(res, more)
	})
}

func (h YearPadHandler) ComMultiQuery(ctx context.Context, c *mysql.Conn, query string, callback mysql.ResultSpoolFn) (string, error) {
	return h.Handler.ComMultiQuery(ctx, c, query, func(res *sqltypes.Result, more bool) error {
		padYears(res)
		return callback(res, more)
	})
}

func (h YearPadHandler) ComStmtExecute(ctx context.Context, c *mysql.Conn, prepare *mysql.PrepareData, callback func(*sqltypes.Result) error) error {
	return h.Handler.ComStmtExecute(ctx, c, prepare, func(res *sqltypes.Result) error {
		padYears(res)
		return callback(res)
	})
}
