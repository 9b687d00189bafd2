package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/icesql/icesql/engine"
)

// logUsage describes the flags of logFlags.
const logUsage = `
Flags of serve (the server log on stderr and the metrics):
  --log-format text|json
                        lines of key=value pairs (default) or one JSON object per line
  --slow-query-ms N     log each statement that takes N milliseconds or more, with its
                        duration, rows returned and affected, data files read and pruned,
                        and bytes read (default 1000; 0 turns it off)
  Prometheus metrics are served at /metrics on the --http port.
`

// logFlags are the flags of the server log.
type logFlags struct {
	format string
	slowMS int64
}

func addLogFlags(fs *flag.FlagSet) *logFlags {
	f := &logFlags{}
	fs.StringVar(&f.format, "log-format", "text", "server log format: text or json")
	fs.Int64Var(&f.slowMS, "slow-query-ms", 1000, "log statements that take this many milliseconds or more (0: none)")
	return f
}

// logger is the server's structured log on w.
func (f *logFlags) logger(w io.Writer) (*slog.Logger, error) {
	if f.slowMS < 0 {
		return nil, fmt.Errorf("--slow-query-ms must be 0 (off) or more, not %d", f.slowMS)
	}
	switch f.format {
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("--log-format is text or json, not %q", f.format)
}

// serverLog writes the engine's progress lines (long maintenance
// procedures) to the server's log.
func serverLog(log *slog.Logger) func(format string, args ...any) {
	return func(format string, args ...any) { log.Info(fmt.Sprintf(format, args...)) }
}

// maxLoggedQuery bounds the statement text in a log line: a multi-row
// INSERT can be megabytes.
const maxLoggedQuery = 4096

// slowQueryLog logs every statement that takes threshold or more.
type slowQueryLog struct {
	log       *slog.Logger
	threshold time.Duration
}

func (s slowQueryLog) QueryDone(ev engine.QueryEvent) {
	if s.threshold <= 0 || ev.Duration < s.threshold {
		return
	}
	query := ev.Query
	if len(query) > maxLoggedQuery {
		query = query[:maxLoggedQuery] + "..."
	}
	attrs := []any{
		slog.Float64("duration_ms", float64(ev.Duration.Microseconds())/1000),
		slog.String("kind", ev.Kind), slog.Int64("rows", ev.Rows), slog.Int64("rows_affected", ev.RowsAffected),
		slog.Int64("files_read", ev.Scan.FilesRead), slog.Int64("bytes_read", ev.Scan.BytesRead), slog.Int64("files_pruned", ev.Scan.FilesPruned),
		slog.Int64("rows_read", ev.Scan.RowsRead),
		slog.Uint64("connection", uint64(ev.ConnectionID)), slog.String("user", ev.User), slog.String("query", query),
	}
	if ev.Err != nil {
		attrs = append(attrs, slog.Int("error_code", int(ev.Code)), slog.String("error", ev.Err.Error()))
	}
	s.log.Warn("slow query", attrs...)
}

func (slowQueryLog) SessionOpened() {}
func (slowQueryLog) SessionClosed() {}

// observers tells every observer of each event.
type observers []engine.QueryObserver

func (o observers) QueryDone(ev engine.QueryEvent) {
	for _, x := range o {
		x.QueryDone(ev)
	}
}

func (o observers) SessionOpened() {
	for _, x := range o {
		x.SessionOpened()
	}
}

func (o observers) SessionClosed() {
	for _, x := range o {
		x.SessionClosed()
	}
}

// withAuth serves h to requests auth accepts (every request when auth is
// nil): the metrics need the account's bearer token as the catalog does.
func withAuth(h http.Handler, auth func(*http.Request) error) http.Handler {
	if auth == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := auth(r); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
