package vector

import "fmt"

// Year is the calendar year of a date (EXTRACT(YEAR FROM d), YEAR(d)), an
// integer; NULL for a NULL date.
type Year struct{ E Expr }

func (Year) Type() Type { return Type{Kind: Int} }

func checkYear(e Year) error {
	if err := Check(e.E, false); err != nil {
		return err
	}
	if e.E.Type().Kind != Date {
		return fmt.Errorf("the year of kind %d", e.E.Type().Kind)
	}
	return nil
}

func (c *compiler) year(e Year) (numFn, error) {
	if err := checkYear(e); err != nil {
		return nil, err
	}
	d, err := c.num(e.E)
	if err != nil {
		return nil, err
	}
	out := &numVec{}
	return func(b *batch, sel []int32) (*numVec, error) {
		dv, err := d(b, sel)
		if err != nil {
			return nil, err
		}
		out.v = grow(out.v, len(sel))
		for i, days := range dv.v[:len(sel)] {
			out.v[i] = yearOfDay(days)
		}
		out.null = dv.null
		return out, nil
	}, nil
}

// yearOfDay is the proleptic Gregorian year of the day days after
// 1970-01-01 (the civil-from-days algorithm: eras of 400 years, years
// starting on March 1st).
func yearOfDay(days int64) int64 {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100) // [0, 365]
	mp := (5*doy + 2) / 153                  // [0, 11], March first
	if mp >= 10 {                            // January or February
		y++
	}
	return y
}
