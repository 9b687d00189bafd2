package vector

import (
	"testing"
	"time"
)

// yearOfDay agrees with the time package on every day from 1600 to 2400,
// and around the epoch and leap days.
func TestYearOfDay(t *testing.T) {
	start := time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)
	for d := start; d.Year() < 2400; d = d.AddDate(0, 0, 1) {
		days := d.Unix() / 86400
		if got := yearOfDay(days); got != int64(d.Year()) {
			t.Fatalf("%s (day %d): year %d", d.Format("2006-01-02"), days, got)
		}
	}
}
