package main

import (
	"context"
	gosql "database/sql"
	"slices"
	"time"
)

// measureCPU runs q once to warm up, then runs times, and returns the
// median process CPU time (user and system, all threads: DuckDB runs in
// this process too) of one run. On a machine other processes share, wall
// time says what they left over; CPU time says what the query costs.
func measureCPU(ctx context.Context, db *gosql.DB, q string, runs int) (time.Duration, error) {
	if _, err := resultText(ctx, db, q); err != nil {
		return 0, err
	}
	times := make([]time.Duration, 0, runs)
	for range runs {
		c0 := cpuTime()
		if _, err := resultText(ctx, db, q); err != nil {
			return 0, err
		}
		times = append(times, cpuTime()-c0)
	}
	slices.Sort(times)
	return times[len(times)/2], nil
}
