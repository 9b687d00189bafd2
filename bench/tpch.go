package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// A deterministic generator of TPC-H's lineitem and orders, with dbgen's
// value distributions where the queries below depend on them (dates,
// quantities, prices, discounts, flags) and seeded random text elsewhere.
// It is not dbgen: the rows differ, the shapes and selectivities match.

const (
	batchRows     = 64 * 1024
	ordersPerSF   = 1_500_000
	startDate     = "1992-01-01"
	orderDateDays = 2405 // orders span 1992-01-01 .. 1998-08-02
)

var (
	day0        = mustDate(startDate)
	shipModes   = []string{"REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"}
	instructs   = []string{"DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"}
	priorities  = []string{"1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"}
	commentWord = []string{"carefully", "quickly", "furiously", "slyly", "blithely", "final", "pending",
		"regular", "express", "ironic", "deposits", "accounts", "packages", "requests", "theodolites"}
	currentDate = mustDate("1995-06-17") // dbgen's CURRENTDATE: decides returnflag and linestatus
)

func mustDate(s string) time.Time {
	t, err := time.Parse("2006-01-02", s)
	if err != nil {
		panic(err)
	}
	return t
}

func decimalType() *arrow.Decimal128Type { return &arrow.Decimal128Type{Precision: 15, Scale: 2} }

// lineitemSchema and ordersSchema are TPC-H's, with Spark/Iceberg types.
var lineitemSchema = arrow.NewSchema([]arrow.Field{
	{Name: "l_orderkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "l_partkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "l_suppkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "l_linenumber", Type: arrow.PrimitiveTypes.Int32},
	{Name: "l_quantity", Type: decimalType()},
	{Name: "l_extendedprice", Type: decimalType()},
	{Name: "l_discount", Type: decimalType()},
	{Name: "l_tax", Type: decimalType()},
	{Name: "l_returnflag", Type: arrow.BinaryTypes.String},
	{Name: "l_linestatus", Type: arrow.BinaryTypes.String},
	{Name: "l_shipdate", Type: arrow.FixedWidthTypes.Date32},
	{Name: "l_commitdate", Type: arrow.FixedWidthTypes.Date32},
	{Name: "l_receiptdate", Type: arrow.FixedWidthTypes.Date32},
	{Name: "l_shipinstruct", Type: arrow.BinaryTypes.String},
	{Name: "l_shipmode", Type: arrow.BinaryTypes.String},
	{Name: "l_comment", Type: arrow.BinaryTypes.String},
}, nil)

var ordersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "o_orderkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "o_custkey", Type: arrow.PrimitiveTypes.Int64},
	{Name: "o_orderstatus", Type: arrow.BinaryTypes.String},
	{Name: "o_totalprice", Type: decimalType()},
	{Name: "o_orderdate", Type: arrow.FixedWidthTypes.Date32},
	{Name: "o_orderpriority", Type: arrow.BinaryTypes.String},
	{Name: "o_clerk", Type: arrow.BinaryTypes.String},
	{Name: "o_shippriority", Type: arrow.PrimitiveTypes.Int32},
	{Name: "o_comment", Type: arrow.BinaryTypes.String},
}, nil)

const lineitemDDL = `CREATE TABLE tpch.lineitem (l_orderkey BIGINT, l_partkey BIGINT, l_suppkey BIGINT,
	l_linenumber INT, l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2),
	l_tax DECIMAL(15,2), l_returnflag STRING, l_linestatus STRING, l_shipdate DATE, l_commitdate DATE,
	l_receiptdate DATE, l_shipinstruct STRING, l_shipmode STRING, l_comment STRING) USING iceberg`

const ordersDDL = `CREATE TABLE tpch.orders (o_orderkey BIGINT, o_custkey BIGINT, o_orderstatus STRING,
	o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority STRING, o_clerk STRING,
	o_shippriority INT, o_comment STRING) USING iceberg`

// generator produces both tables order by order, so each order's lines
// follow it, as in dbgen.
type generator struct {
	rng    *rand.Rand
	orders int64
	next   int64 // next order number, 1-based
	li, or *array.RecordBuilder
}

func newGenerator(sf float64) *generator {
	return &generator{
		rng:    rand.New(rand.NewPCG(1, 2)),
		orders: int64(sf * ordersPerSF),
		next:   1,
		li:     array.NewRecordBuilder(memory.DefaultAllocator, lineitemSchema),
		or:     array.NewRecordBuilder(memory.DefaultAllocator, ordersSchema),
	}
}

func (g *generator) comment(words int) string {
	b := make([]byte, 0, words*10)
	for i := range words {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, commentWord[g.rng.IntN(len(commentWord))]...)
	}
	return string(b)
}

func cents(c int64) decimal128.Num { return decimal128.FromI64(c) }

// batch generates the next batch of orders with their lines; done when all
// orders are out.
func (g *generator) batch() (lineitem, orders arrow.RecordBatch, done bool) {
	for g.next <= g.orders && g.or.Field(0).Len() < batchRows/4 {
		g.order()
	}
	return g.li.NewRecordBatch(), g.or.NewRecordBatch(), g.next > g.orders
}

// orderKey is the key of the n-th order (1-based): dbgen leaves gaps in
// order keys, using 8 of every 32.
func orderKey(n int64) int64 { return (n-1)/8*32 + (n-1)%8 + 1 }

func (g *generator) order() {
	key := orderKey(g.next)
	g.next++
	orderDate := day0.AddDate(0, 0, g.rng.IntN(orderDateDays-151))
	lines := 1 + g.rng.IntN(7)
	var total int64
	shipped, open := 0, 0
	li := g.li
	for n := 1; n <= lines; n++ {
		qty := int64(1 + g.rng.IntN(50))
		part := int64(1 + g.rng.IntN(200_000))
		price := qty * (90_000 + (part/10)%20_001 + 100*(part%1_000)) / 100 // cents
		disc := int64(g.rng.IntN(11))                                       // 0.00 .. 0.10
		tax := int64(g.rng.IntN(9))                                         // 0.00 .. 0.08
		ship := orderDate.AddDate(0, 0, 1+g.rng.IntN(121))
		commit := orderDate.AddDate(0, 0, 30+g.rng.IntN(61))
		receipt := ship.AddDate(0, 0, 1+g.rng.IntN(30))
		flag := "N"
		if !receipt.After(currentDate) {
			if g.rng.IntN(2) == 0 {
				flag = "R"
			} else {
				flag = "A"
			}
		}
		status := "O"
		if !ship.After(currentDate) {
			status = "F"
			shipped++
		} else {
			open++
		}
		total += price * (100 - disc) * (100 + tax) / 10_000
		li.Field(0).(*array.Int64Builder).Append(key)
		li.Field(1).(*array.Int64Builder).Append(part)
		li.Field(2).(*array.Int64Builder).Append(1 + (part+int64(n))%10_000)
		li.Field(3).(*array.Int32Builder).Append(int32(n))
		li.Field(4).(*array.Decimal128Builder).Append(cents(qty * 100))
		li.Field(5).(*array.Decimal128Builder).Append(cents(price))
		li.Field(6).(*array.Decimal128Builder).Append(cents(disc))
		li.Field(7).(*array.Decimal128Builder).Append(cents(tax))
		li.Field(8).(*array.StringBuilder).Append(flag)
		li.Field(9).(*array.StringBuilder).Append(status)
		li.Field(10).(*array.Date32Builder).Append(arrow.Date32FromTime(ship))
		li.Field(11).(*array.Date32Builder).Append(arrow.Date32FromTime(commit))
		li.Field(12).(*array.Date32Builder).Append(arrow.Date32FromTime(receipt))
		li.Field(13).(*array.StringBuilder).Append(instructs[g.rng.IntN(len(instructs))])
		li.Field(14).(*array.StringBuilder).Append(shipModes[g.rng.IntN(len(shipModes))])
		li.Field(15).(*array.StringBuilder).Append(g.comment(3))
	}
	status := "P"
	switch {
	case open == 0:
		status = "F"
	case shipped == 0:
		status = "O"
	}
	or := g.or
	or.Field(0).(*array.Int64Builder).Append(key)
	or.Field(1).(*array.Int64Builder).Append(1 + g.rng.Int64N(int64(float64(g.orders)/10)+1))
	or.Field(2).(*array.StringBuilder).Append(status)
	or.Field(3).(*array.Decimal128Builder).Append(cents(total))
	or.Field(4).(*array.Date32Builder).Append(arrow.Date32FromTime(orderDate))
	or.Field(5).(*array.StringBuilder).Append(priorities[g.rng.IntN(len(priorities))])
	or.Field(6).(*array.StringBuilder).Append(fmt.Sprintf("Clerk#%09d", 1+g.rng.IntN(1000)))
	or.Field(7).(*array.Int32Builder).Append(0)
	or.Field(8).(*array.StringBuilder).Append(g.comment(5))
}
