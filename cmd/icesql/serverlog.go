package main

import (
	"fmt"
	"io"
	"time"
)

// serverLog writes the engine's progress lines (long maintenance
// procedures) to the server's log, one timestamped line each.
func serverLog(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) {
		fmt.Fprintf(w, "%s %s\n", time.Now().UTC().Format(time.RFC3339), fmt.Sprintf(format, args...))
	}
}
