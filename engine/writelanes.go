package engine

// nextLane picks the lane for the next run: the one with the fewest
// batches waiting, a lane not yet started counting as idle, ties going to
// the lanes after prev in turn. Strict round robin made the dealer wait on
// a lane whose writer the machine had not scheduled while the other lane
// sat idle; any lane may take any run, since a run is a whole row group of
// consecutive rows whichever lane writes it.
func (p *parallelWriter) nextLane(prev int) int {
	best, bestQueued := -1, 0
	for k := 1; k <= len(p.lanes); k++ {
		i := (prev + k) % len(p.lanes)
		l := p.lanes[i]
		if l == nil {
			return i
		}
		if q := len(l.batches); best < 0 || q < bestQueued {
			best, bestQueued = i, q
		}
	}
	return best
}
