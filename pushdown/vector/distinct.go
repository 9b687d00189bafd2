package vector

// COUNT(DISTINCT x) keeps, per group, the set of x's non-NULL values:
// numbers by their int64 (decimals unscaled at the argument's one scale),
// strings by their bytes. Workers keep their own sets, merged at the end.

// distinctSets is one CountDistinct aggregate's sets, by group.
type distinctSets struct {
	nums []map[int64]struct{}
	strs []map[string]struct{}
}

func (d *distinctSets) grow(n int, str bool) {
	if str {
		for len(d.strs) < n {
			d.strs = append(d.strs, map[string]struct{}{})
		}
		return
	}
	for len(d.nums) < n {
		d.nums = append(d.nums, map[int64]struct{}{})
	}
}

func (a *accum) updateDistinct(b *batch, sel, gids []int32, arg argFn) error {
	if arg.str != nil {
		a.distinct.grow(len(a.nulls), true)
		sv := arg.str(b)
		for i, row := range sel {
			s, null := sv.at(int(row))
			if null {
				continue
			}
			set := a.distinct.strs[gids[i]]
			if _, ok := set[string(s)]; !ok {
				set[string(s)] = struct{}{}
			}
		}
		return nil
	}
	a.distinct.grow(len(a.nulls), false)
	v, err := arg.num(b, sel)
	if err != nil {
		return err
	}
	for i, g := range gids {
		if v.null != nil && v.null[i] {
			continue
		}
		a.distinct.nums[g][v.v[i]] = struct{}{}
	}
	return nil
}

func (a *accum) mergeDistinct(g int32, o *accum, og int32) {
	str := a.agg.Arg.Type().Kind == String
	a.distinct.grow(len(a.nulls), str)
	if str {
		if int(og) < len(o.distinct.strs) {
			for k := range o.distinct.strs[og] {
				a.distinct.strs[g][k] = struct{}{}
			}
		}
		return
	}
	if int(og) < len(o.distinct.nums) {
		for k := range o.distinct.nums[og] {
			a.distinct.nums[g][k] = struct{}{}
		}
	}
}

func (a *accum) distinctCount(g int32) int64 {
	if int(g) < len(a.distinct.strs) {
		return int64(len(a.distinct.strs[g]))
	}
	if int(g) < len(a.distinct.nums) {
		return int64(len(a.distinct.nums[g]))
	}
	return 0
}
