package vecexec

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/cockroachdb/apd/v3"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
	"github.com/dolthub/vitess/go/sqltypes"
	"github.com/icesql/icesql/engine/internal/sqlval"
)

// A vectorized join's keys are int64s. Integer and boolean columns (int,
// long, boolean) are their values: go-mysql-server compares them as
// numbers, TRUE as 1, so an integer joins a boolean as it does on the row
// path. Strings of a collation that compares bytes (utf8mb4_0900_bin, the
// default, and binary) are coded through a dictionary the build side
// fills: equal strings get equal codes, and a probe string the build side
// lacks joins nothing. Other collations, and keys of two kinds, stay on
// the row path, which converts and collates. Dates are their days since
// 1970, and decimals their unscaled values at the larger of the two
// sides' scales, when each side's values have at most 18 digits at that
// scale: DECIMAL(10,2) joins DECIMAL(12,4) as the row path compares them,
// 1.50 equal to 1.5000.

type joinKeyKind uint8

const (
	numberKey joinKeyKind = iota
	stringKey
	dateKey
	decimalKey
)

// keyClass is what must match for two columns' keys to be coded alike
// (decimals of any scales are coded at the larger).
type keyClass struct {
	kind      joinKeyKind
	collation sql.CollationID // of a string
	scale     int32           // of a decimal
	precision int32           // of a decimal
}

// joinKeys codes one join's keys.
type joinKeys struct {
	kind  joinKeyKind
	scale int32 // of a decimal: the scale both sides' keys are coded at
	// lscale and rscale are each side's own scale: a key read from an
	// Arrow array is its unscaled value at that scale.
	lscale, rscale int32
	// mu serializes the build side's workers, which fill dict; the probe
	// side only reads it, once the build side is done.
	mu   sync.Mutex
	dict map[string]int64
}

// joinKeysOf is the keys of a join of l (a column of left's rows) with r
// (of right's), or false when they cannot be coded alike.
func joinKeysOf(ctx *sql.Context, left *vectorFilter, l *expression.GetField, right *vectorFilter, r *expression.GetField) (*joinKeys, bool) {
	lc, ok1 := joinKeyClass(ctx, left, l)
	rc, ok2 := joinKeyClass(ctx, right, r)
	if !ok1 || !ok2 || lc.kind != rc.kind {
		return nil, false
	}
	k := &joinKeys{kind: lc.kind, scale: lc.scale, lscale: lc.scale, rscale: rc.scale}
	switch lc.kind {
	case stringKey:
		if lc.collation != rc.collation {
			return nil, false
		}
	case decimalKey:
		// Both sides at the larger scale, within int64's 18 digits.
		k.scale = max(lc.scale, rc.scale)
		if lc.precision+k.scale-lc.scale > 18 || rc.precision+k.scale-rc.scale > 18 {
			return nil, false
		}
	}
	if lc.kind == stringKey {
		k.dict = map[string]int64{}
	}
	return k, true
}

// joinKeyClass is the class of key gf, a column of v's rows, makes.
func joinKeyClass(ctx *sql.Context, v *vectorFilter, gf *expression.GetField) (keyClass, bool) {
	if !v.t.Owns(gf) || gf.Index() < 0 || gf.Index() >= v.width {
		return keyClass{}, false
	}
	j := v.t.AllColumns().IndexOfColName(gf.Name())
	if j < 0 || j >= len(v.t.ColumnNames()) || v.cols[gf.Index()] != v.t.ColumnNames()[j] {
		return keyClass{}, false
	}
	f, ok := v.t.Iceberg().Schema().FindFieldByName(v.cols[gf.Index()])
	if !ok {
		return keyClass{}, false
	}
	typ := gf.Type(ctx)
	switch ft := f.Type.(type) {
	case iceberg.Int32Type, iceberg.Int64Type, iceberg.BooleanType:
		return keyClass{kind: numberKey}, types.IsSigned(typ)
	case iceberg.DateType:
		return keyClass{kind: dateKey}, typ.Type() == sqltypes.Date
	case iceberg.DecimalType:
		d, ok := typ.(sql.DecimalType)
		return keyClass{kind: decimalKey, scale: int32(ft.Scale()), precision: int32(ft.Precision())},
			ok && ft.Precision() <= 18 && int(d.Scale()) == ft.Scale()
	case iceberg.StringType:
		st, ok := typ.(sql.StringType)
		if !ok || !types.IsText(typ) || strings.HasPrefix(strings.ToLower(typ.String()), "char") {
			return keyClass{}, false
		}
		switch c := st.Collation(); c {
		case sql.Collation_utf8mb4_0900_bin, sql.Collation_binary:
			return keyClass{kind: stringKey, collation: c}, true
		}
	}
	return keyClass{}, false
}

// add is the build side's key for a row's value v, false for NULL.
func (k *joinKeys) add(v any) (int64, bool) {
	if k.kind == stringKey {
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		k.mu.Lock()
		defer k.mu.Unlock()
		return k.code(s), true
	}
	return k.value(v)
}

// value is the key of a row's value v of a number, date or decimal key.
func (k *joinKeys) value(v any) (int64, bool) {
	switch k.kind {
	case dateKey:
		t, ok := v.(time.Time)
		if !ok {
			return 0, false
		}
		// A date is its UTC midnight (date32Value).
		s := t.Unix()
		d := s / sqlval.SecondsPerDay
		if s%sqlval.SecondsPerDay < 0 {
			d--
		}
		return d, true
	case decimalKey:
		d, ok := v.(*apd.Decimal)
		if !ok || d.Form != apd.Finite {
			return 0, false
		}
		var scaled apd.Decimal
		scaled.Set(d)
		scaled.Exponent += k.scale
		n, err := scaled.Int64()
		return n, err == nil
	}
	return numberValue(v)
}

// code is s's code, adding it to the dictionary. The caller holds mu.
func (k *joinKeys) code(s string) int64 {
	if c, ok := k.dict[s]; ok {
		return c
	}
	c := int64(len(k.dict))
	// s may point into an Arrow buffer that is reused for the next batch.
	k.dict[strings.Clone(s)] = c
	return c
}

// find is the probe side's key for a row's value v, false when v is NULL
// or joins nothing.
func (k *joinKeys) find(v any) (int64, bool) {
	if k.kind == stringKey {
		s, ok := v.(string)
		if !ok {
			return 0, false
		}
		c, ok := k.dict[s]
		return c, ok
	}
	return k.value(v)
}

func numberValue(v any) (int64, bool) {
	switch v := v.(type) {
	case int8:
		return int64(v), true
	case int16:
		return int64(v), true
	case int32:
		return int64(v), true
	case int64:
		return v, true
	}
	return 0, false
}

// keyFunc is the key of a batch column's row i, false when it is NULL or,
// on the probe side, joins nothing.
type keyFunc func(i int) (int64, bool)

// reader reads arr's keys; add says it is the build side's, which adds
// strings to the dictionary (the caller holds mu).
func (k *joinKeys) reader(arr arrow.Array, add bool) (keyFunc, error) {
	valid := func(i int) bool { return true }
	if arr.NullN() > 0 {
		valid = arr.IsValid
	}
	// A decimal side of a smaller scale than the other's is multiplied up
	// to it; joinKeysOf made sure the product has at most 18 digits.
	own := k.lscale
	if add {
		own = k.rscale
	}
	up := int64(1)
	if k.kind == decimalKey {
		up = int64(Pow10[k.scale-own])
	}
	switch a := arr.(type) {
	case *array.Int32:
		if k.kind == numberKey {
			vals := a.Int32Values()
			return func(i int) (int64, bool) { return int64(vals[i]), valid(i) }, nil
		}
	case *array.Int64:
		// A natively decoded decimal is its unscaled value (vecscan.go).
		if k.kind == numberKey || k.kind == decimalKey {
			vals := a.Int64Values()
			return func(i int) (int64, bool) { return vals[i] * up, valid(i) }, nil
		}
	case *array.Boolean:
		if k.kind == numberKey {
			return func(i int) (int64, bool) {
				if a.Value(i) {
					return 1, valid(i)
				}
				return 0, valid(i)
			}, nil
		}
	case *array.Date32:
		if k.kind == dateKey {
			vals := a.Date32Values()
			return func(i int) (int64, bool) { return int64(vals[i]), valid(i) }, nil
		}
	case *array.Decimal128:
		// At most 18 digits (joinKeyClass): the low 64 bits hold it.
		if k.kind == decimalKey && a.DataType().(*arrow.Decimal128Type).Scale == own {
			vals := a.Values()
			return func(i int) (int64, bool) { return int64(vals[i].LowBits()) * up, valid(i) }, nil
		}
	}
	if k.kind != stringKey {
		return nil, fmt.Errorf("%w: key column is %s", errBatchShape, arr.DataType())
	}
	str := func(s string) (int64, bool) {
		if add {
			return k.code(s), true
		}
		c, ok := k.dict[s]
		return c, ok
	}
	switch a := arr.(type) {
	case *array.String:
		return func(i int) (int64, bool) {
			if !valid(i) {
				return 0, false
			}
			return str(a.Value(i))
		}, nil
	case *array.LargeString:
		return func(i int) (int64, bool) {
			if !valid(i) {
				return 0, false
			}
			return str(a.Value(i))
		}, nil
	case *array.Dictionary:
		d, ok := a.Dictionary().(*array.String)
		if !ok {
			break
		}
		// Each dictionary entry is coded once, when a row first uses it.
		const unseen, absent = -2, -1
		codes := make([]int64, d.Len())
		for i := range codes {
			codes[i] = unseen
		}
		return func(i int) (int64, bool) {
			if !valid(i) {
				return 0, false
			}
			e := a.GetValueIndex(i)
			if codes[e] == unseen {
				codes[e] = absent
				if d.IsValid(e) {
					if c, ok := str(d.Value(e)); ok {
						codes[e] = c
					}
				}
			}
			return codes[e], codes[e] != absent
		}, nil
	}
	return nil, fmt.Errorf("%w: key column is %s", errBatchShape, arr.DataType())
}

// buildKeys is the rows of keep whose key is not NULL, and their keys: a
// build batch's, the strings added to the dictionary.
func (k *joinKeys) buildKeys(arr arrow.Array, keep []int32) ([]int32, []int64, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	key, err := k.reader(arr, true)
	if err != nil {
		return nil, nil, err
	}
	rows := make([]int32, 0, len(keep))
	keys := make([]int64, 0, len(keep))
	for _, r := range keep {
		if c, ok := key(int(r)); ok {
			rows = append(rows, r)
			keys = append(keys, c)
		}
	}
	return rows, keys, nil
}
