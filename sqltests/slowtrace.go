package sqltests

import (
	"fmt"
	"os"
	"strings"
	"time"
)

// slowThreshold is ICESQL_SLT_SLOW as a duration: records that take longer
// are printed to stderr with their line and time, which shows where a long
// corpus file spends its time while it still runs. Unset or invalid: off.
var slowThreshold = func() time.Duration {
	d, err := time.ParseDuration(os.Getenv("ICESQL_SLT_SLOW"))
	if err != nil {
		return 0
	}
	return d
}()

func traceSlow(name string, rec *record, took time.Duration) {
	if slowThreshold <= 0 || took < slowThreshold {
		return
	}
	fmt.Fprintf(os.Stderr, "slow: %s:%d: %s: %.300s\n", name, rec.line, took.Round(time.Millisecond), strings.Join(strings.Fields(rec.sql), " "))
}
