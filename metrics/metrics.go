// Package metrics exports what icesql serve does in the Prometheus text
// format: statements by kind and outcome, their latency, rows returned and
// affected, data files and bytes scanned, commits and commit conflicts by
// table, open sessions, and the Go runtime's memory and the process's
// resident memory.
package metrics

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/icesql/icesql/engine"
)

// Metrics is an engine.QueryObserver that keeps Prometheus metrics in its
// own registry (not the global one: two servers in one process, as tests
// run them, keep apart).
type Metrics struct {
	reg          *prometheus.Registry
	queries      *prometheus.CounterVec
	latency      *prometheus.HistogramVec
	rowsReturned prometheus.Counter
	rowsAffected prometheus.Counter
	sessions     prometheus.Gauge
	sessionsAll  prometheus.Counter
	scanFiles    *prometheus.CounterVec
	scanBytes    *prometheus.CounterVec
	scanRows     prometheus.Counter
	commits      *prometheus.CounterVec
	conflicts    *prometheus.CounterVec
}

var _ engine.QueryObserver = (*Metrics)(nil)

// New returns metrics with nothing counted yet.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		queries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "icesql_queries_total",
			Help: "Statements run over the MySQL protocol, by kind (first keyword) and outcome (ok, error, conflict: a commit that lost to a concurrent one, error 1213).",
		}, []string{"kind", "outcome"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "icesql_query_duration_seconds",
			Help:    "Time from receiving a statement to sending its last row, by kind.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 300},
		}, []string{"kind"}),
		rowsReturned: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "icesql_rows_returned_total", Help: "Rows sent to clients in result sets.",
		}),
		rowsAffected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "icesql_rows_affected_total", Help: "Rows inserted, updated or deleted, as the OK packets report them.",
		}),
		sessions: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "icesql_sessions_open", Help: "Open MySQL connections.",
		}),
		sessionsAll: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "icesql_sessions_total", Help: "MySQL connections opened since the start.",
		}),
		scanFiles: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "icesql_scan_data_files_total",
			Help: "Data files of table scans: planned (kept by planning), pruned (skipped by partition values and column statistics) and read (opened).",
		}, []string{"result"}),
		scanBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "icesql_scan_bytes_total",
			Help: "Bytes of table scans: planned (the sizes of the data files planned) and read (from data files).",
		}, []string{"result"}),
		scanRows: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "icesql_scan_rows_total",
			Help: "Rows table scans read: what reading data files handed up, after delete files and the filter pushed into the read.",
		}),
		commits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "icesql_commits_total", Help: "Transaction commits that wrote a table (db.table), autocommit statements included.",
		}, []string{"table"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "icesql_commit_conflicts_total", Help: "Commits to a table (db.table) that lost to a concurrent commit (error 1213).",
		}, []string{"table"}),
	}
	m.reg.MustRegister(m.queries, m.latency, m.rowsReturned, m.rowsAffected, m.sessions, m.sessionsAll,
		m.scanFiles, m.scanBytes, m.scanRows, m.commits, m.conflicts,
		collectors.NewGoCollector(),                                       // go_memstats_*: heap in use, GC
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), // process_resident_memory_bytes, open fds
	)
	return m
}

// QueryDone counts a statement.
func (m *Metrics) QueryDone(ev engine.QueryEvent) {
	outcome := "ok"
	switch {
	case ev.Err == nil:
	case ev.Code == 1213:
		outcome = "conflict"
	default:
		outcome = "error"
	}
	m.queries.WithLabelValues(ev.Kind, outcome).Inc()
	m.latency.WithLabelValues(ev.Kind).Observe(ev.Duration.Seconds())
	m.rowsReturned.Add(float64(ev.Rows))
	m.rowsAffected.Add(float64(ev.RowsAffected))
	m.scanFiles.WithLabelValues("planned").Add(float64(ev.Scan.FilesPlanned))
	m.scanFiles.WithLabelValues("pruned").Add(float64(ev.Scan.FilesPruned))
	m.scanFiles.WithLabelValues("read").Add(float64(ev.Scan.FilesRead))
	m.scanBytes.WithLabelValues("planned").Add(float64(ev.Scan.BytesPlanned))
	m.scanBytes.WithLabelValues("read").Add(float64(ev.Scan.BytesRead))
	m.scanRows.Add(float64(ev.Scan.RowsRead))
	for _, c := range ev.Commits {
		if c.Conflict {
			m.conflicts.WithLabelValues(c.Table).Inc()
		} else {
			m.commits.WithLabelValues(c.Table).Inc()
		}
	}
}

// SessionOpened counts a connection.
func (m *Metrics) SessionOpened() { m.sessions.Inc(); m.sessionsAll.Inc() }

// SessionClosed counts a connection gone.
func (m *Metrics) SessionClosed() { m.sessions.Dec() }

// Handler serves the metrics in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
