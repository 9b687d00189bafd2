package engine

import (
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/dolthub/go-mysql-server/sql"
	"github.com/dolthub/go-mysql-server/sql/expression"
	"github.com/dolthub/go-mysql-server/sql/types"
)

// A vectorized join's keys are int64s. Integer and boolean columns (int,
// long, boolean) are their values: go-mysql-server compares them as
// numbers, TRUE as 1, so an integer joins a boolean as it does on the row
// path. Strings of a collation that compares bytes (utf8mb4_0900_bin, the
// default, and binary) are coded through a dictionary the build side
// fills: equal strings get equal codes, and a probe string the build side
// lacks joins nothing. Other collations, and keys of two kinds, stay on
// the row path, which converts and collates.

type joinKeyKind uint8

const (
	numberKey joinKeyKind = iota
	stringKey
)

// joinKeys codes one join's keys.
type joinKeys struct {
	kind joinKeyKind
	// mu serializes the build side's workers, which fill dict; the probe
	// side only reads it, once the build side is done.
	mu   sync.Mutex
	dict map[string]int64
}

// joinKeysOf is the keys of a join of l (a column of left's rows) with r
// (of right's), or false when they cannot be coded alike.
func joinKeysOf(ctx *sql.Context, left *vectorFilter, l *expression.GetField, right *vectorFilter, r *expression.GetField) (*joinKeys, bool) {
	lk, lc, ok1 := joinKeyKindOf(ctx, left, l)
	rk, rc, ok2 := joinKeyKindOf(ctx, right, r)
	if !ok1 || !ok2 || lk != rk || lc != rc {
		return nil, false
	}
	k := &joinKeys{kind: lk}
	if lk == stringKey {
		k.dict = map[string]int64{}
	}
	return k, true
}

// joinKeyKindOf is the kind of key gf, a column of v's rows, makes, and for a
// string its collation.
func joinKeyKindOf(ctx *sql.Context, v *vectorFilter, gf *expression.GetField) (joinKeyKind, sql.CollationID, bool) {
	if !v.t.owns(gf) || gf.Index() < 0 || gf.Index() >= v.width {
		return 0, 0, false
	}
	j := v.t.schema.IndexOfColName(gf.Name())
	if j < 0 || j >= len(v.t.names) || v.cols[gf.Index()] != v.t.names[j] {
		return 0, 0, false
	}
	f, ok := v.t.tbl.Schema().FindFieldByName(v.cols[gf.Index()])
	if !ok {
		return 0, 0, false
	}
	typ := gf.Type(ctx)
	switch f.Type.String() {
	case "int", "long", "boolean":
		return numberKey, 0, types.IsSigned(typ)
	case "string":
		st, ok := typ.(sql.StringType)
		if !ok || !types.IsText(typ) || strings.HasPrefix(strings.ToLower(typ.String()), "char") {
			return 0, 0, false
		}
		switch c := st.Collation(); c {
		case sql.Collation_utf8mb4_0900_bin, sql.Collation_binary:
			return stringKey, c, true
		}
	}
	return 0, 0, false
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
	return numberValue(v)
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
	if k.kind == numberKey {
		switch a := arr.(type) {
		case *array.Int32:
			vals := a.Int32Values()
			return func(i int) (int64, bool) { return int64(vals[i]), valid(i) }, nil
		case *array.Int64:
			vals := a.Int64Values()
			return func(i int) (int64, bool) { return vals[i], valid(i) }, nil
		case *array.Boolean:
			return func(i int) (int64, bool) {
				if a.Value(i) {
					return 1, valid(i)
				}
				return 0, valid(i)
			}, nil
		}
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
