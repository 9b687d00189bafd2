package vector

import (
	"errors"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
)

// Match is a test of a string value that the caller supplies, such as
// SQL's LIKE in the caller's collation: E's value satisfies it when Test
// says so, and it is NULL when E is NULL. Test is called from several
// goroutines at once and must not keep the string it is given. On a
// dictionary-encoded column each dictionary value is tested once, however
// many rows hold it, and a value met before keeps its verdict.
type Match struct {
	E    Expr
	Test func(string) bool
}

func (Match) Type() Type { return boolType }

func checkMatch(e Match) error {
	if e.Test == nil {
		return errors.New("a match without a test")
	}
	if err := Check(e.E, false); err != nil {
		return err
	}
	if e.E.Type().Kind != String {
		return errors.New("a match tests a string")
	}
	return nil
}

// maxRemembered is how many distinct values a Match remembers its verdict
// on, across batches and dictionaries: a column of a few thousand values
// (TPC-H's comments) has each tested once per goroutine rather than once
// per row group, and one of unique values stops filling the memory.
const maxRemembered = 1 << 16

// A Match stops remembering verdicts of plain (not dictionary) values
// once, after memoTrial lookups or more, fewer than one in memoWorth found
// the value.
const (
	memoTrial = 4096
	memoWorth = 4
)

// Verdicts of a dictionary value: not yet tested, false, true.
const (
	untested uint8 = iota
	matchFalse
	matchTrue
)

// dictVerdicts remembers Test's verdicts on the values of the last
// dictionary seen: the batches of a column chunk share one.
type dictVerdicts struct {
	dict arrow.ArrayData
	v    []uint8
}

// of returns the verdicts for dict, forgetting those of another one.
func (d *dictVerdicts) of(dict arrow.Array) []uint8 {
	if data := dict.Data(); data != d.dict {
		d.dict = data
		d.v = grow(d.v, dict.Len())
		clear(d.v)
	}
	return d.v
}

func (c *compiler) match(e Match) (boolFn, error) {
	s, err := c.str(e.E)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var asked, hits int
	test := func(b []byte) bool {
		if seen != nil {
			asked++
			if v, ok := seen[string(b)]; ok {
				hits++
				return v
			}
			if asked >= memoTrial && hits*memoWorth < asked {
				// Mostly values never met before (TPC-H's l_comment):
				// looking them up costs more than testing them.
				seen = nil
			}
		}
		v := e.Test(unsafe.String(unsafe.SliceData(b), len(b)))
		if seen != nil && len(seen) < maxRemembered {
			seen[string(b)] = v
		}
		return v
	}
	var memo dictVerdicts
	out := &boolVec{}
	return func(b *batch, sel []int32) (*boolVec, error) {
		sv := s(b)
		out.v = grow(out.v, len(sel))
		out.null = grow(out.null, len(sel))
		anyNull := false
		dict, _ := sv.arr.(*array.Dictionary)
		var verdicts []uint8
		var values func(i int) []byte
		if dict != nil {
			verdicts = memo.of(dict.Dictionary())
			values = stringReader(dict.Dictionary())
		}
		for i, row := range sel {
			if dict != nil && dict.IsNull(int(row)) {
				out.v[i], out.null[i] = false, true
				anyNull = true
				continue
			}
			if dict == nil {
				v, null := sv.at(int(row))
				out.v[i], out.null[i] = !null && test(v), null
				anyNull = anyNull || null
				continue
			}
			out.null[i] = false
			ix := dict.GetValueIndex(int(row))
			if verdicts[ix] == untested {
				verdicts[ix] = matchFalse
				if test(values(ix)) {
					verdicts[ix] = matchTrue
				}
			}
			out.v[i] = verdicts[ix] == matchTrue
		}
		if !anyNull {
			out.null = nil
		}
		return out, nil
	}, nil
}
