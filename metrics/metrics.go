// Package metrics exports what icesql serve does in the Prometheus text
// format: statements by kind and outcome, their latency, rows returned and
// affected, open sessions, and the Go runtime's memory and the process's
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
	}
	m.reg.MustRegister(m.queries, m.latency, m.rowsReturned, m.rowsAffected, m.sessions, m.sessionsAll,
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
}

// SessionOpened counts a connection.
func (m *Metrics) SessionOpened() { m.sessions.Inc(); m.sessionsAll.Inc() }

// SessionClosed counts a connection gone.
func (m *Metrics) SessionClosed() { m.sessions.Dec() }

// Handler serves the metrics in the Prometheus text format (GET /metrics).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
