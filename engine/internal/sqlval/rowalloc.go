package sqlval

import (
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
)

// Turning Arrow batches into go-mysql-server rows allocates per row and per
// value; these helpers cut what icesql's own code allocates there.

// RowBlockRows is how many rows share one allocation. go-mysql-server may
// keep any row it is given (sorts, hash joins), and a kept row keeps its
// block alive, so blocks stay small: a filter that keeps one row in many
// pins at most this many rows' slots, not a batch's.
const RowBlockRows = 32

// RowBlocks hands out rows of one width carved from shared blocks. Rows are
// never reused, and each is capped at its width, so appending to one
// reallocates instead of writing into its neighbour.
type RowBlocks struct {
	Width int
	block []any
}

func (b *RowBlocks) Next() sql.Row {
	if b.Width == 0 {
		return sql.Row{}
	}
	if len(b.block) < b.Width {
		b.block = make([]any, b.Width*RowBlockRows)
	}
	row := b.block[:b.Width:b.Width]
	b.block = b.block[b.Width:]
	return sql.Row(row)
}

// Decimal128Value is an Arrow decimal as go-mysql-server's decimal value.
// Values whose unscaled integer fits 64 bits (every DECIMAL of precision 18
// or less, TPC-H's amounts among them) take one allocation instead of the
// four that going through math/big costs.
func Decimal128Value(n decimal128.Num, scale int32) *apd.Decimal {
	hi, lo := n.HighBits(), n.LowBits()
	if (hi == 0 && lo>>63 == 0) || (hi == -1 && lo>>63 == 1) {
		return apd.New(int64(lo), -scale)
	}
	return DecimalValue(n.BigInt(), scale)
}

// Date32Value is an Arrow date as a UTC midnight. arrow.Date32.ToTime gets
// there through time.AddDate, several times slower per row.
func Date32Value(d arrow.Date32) time.Time {
	return time.Unix(int64(d)*SecondsPerDay, 0).UTC()
}

const SecondsPerDay = 24 * 60 * 60
