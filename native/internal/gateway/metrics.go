package gateway

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// callBuckets are the bounds, in seconds, of the call latency histogram: a proxied call of a
// local server answers in a millisecond or two, a remote one in tens to hundreds, and a
// server's timeout is seconds to a minute.
var callBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// metrics is what GET /metrics serves, in a registry of the gateway's own (two gateways in one
// process, as in tests, do not share counts). Counters the gateway keeps anyway (restarts,
// sessions, dropped traces, the learner's counts) are read at scrape time rather than counted
// twice.
type metrics struct {
	reg      *prometheus.Registry
	calls    *prometheus.CounterVec
	errors   *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	recorded prometheus.Counter
}

func newMetrics(g *Gateway) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "caskg_gateway_calls_total",
			Help: "Tool calls forwarded to a downstream server."}, []string{"server"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "caskg_gateway_call_errors_total",
			Help: "Forwarded tool calls that ended in an error: an isError result, a JSON-RPC error, a timeout or the server unavailable."}, []string{"server"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "caskg_gateway_call_duration_seconds",
			Help: "Time from a call_tool reaching the gateway to its result, per downstream server.", Buckets: callBuckets}, []string{"server"}),
		recorded: prometheus.NewCounter(prometheus.CounterOpts{Name: "caskg_gateway_traces_recorded_total",
			Help: "Traces this process handed to the learning loop and the loop stored."}),
	}
	m.reg.MustRegister(m.calls, m.errors, m.latency, m.recorded,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, d := range g.downs {
		name := d.cfg.Name
		// Every server has its series from the start, so that a rate over them is defined
		// before its first call.
		m.calls.WithLabelValues(name)
		m.errors.WithLabelValues(name)
		m.latency.WithLabelValues(name)
		labels := prometheus.Labels{"server": name}
		m.reg.MustRegister(
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "caskg_gateway_server_restarts_total", ConstLabels: labels,
				Help: "Sessions with a downstream server that ended (connection lost, degraded) and were started again."},
				func() float64 { return float64(d.status().Restarts) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_server_up", ConstLabels: labels,
				Help: "1 while the downstream server is ready, 0 otherwise."},
				func() float64 {
					if _, cs, _ := d.snapshot(); cs != nil {
						return 1
					}
					return 0
				}))
	}
	m.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "caskg_gateway_traces_dropped_total",
			Help: "Traces dropped because their client was over --trace-rate."},
			func() float64 { return float64(g.traceRate.droppedTotal()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_sessions",
			Help: "Front sessions open."},
			func() float64 {
				g.mu.Lock()
				defer g.mu.Unlock()
				return float64(len(g.sessions))
			}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "caskg_gateway_sessions_started_total",
			Help: "Front sessions started by this process."},
			func() float64 {
				g.mu.Lock()
				defer g.mu.Unlock()
				return float64(g.seq)
			}),
	)
	if l := g.opt.Learner; l != nil {
		m.reg.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_traces_stored",
				Help: "Traces in the state folder, recorded by this run and earlier ones."},
				func() float64 { return float64(l.Status().TracesRecorded) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_traces_learned",
				Help: "Traces the current graph learned."},
				func() float64 { return float64(l.Status().TracesLearned) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_graph_edges",
				Help: "Edges of the current graph."},
				func() float64 { return float64(l.Status().Edges) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "caskg_gateway_graph_building",
				Help: "1 while the learning loop builds a graph."},
				func() float64 {
					if l.Status().Building {
						return 1
					}
					return 0
				}),
		)
	}
	return m
}

// called counts a forwarded call of server that took d.
func (m *metrics) called(server string, ok bool, d time.Duration) {
	m.calls.WithLabelValues(server).Inc()
	if !ok {
		m.errors.WithLabelValues(server).Inc()
	}
	m.latency.WithLabelValues(server).Observe(d.Seconds())
}

// handler serves the registry in the Prometheus text exposition format (or what the scraper's
// Accept asks for among the formats client_golang writes).
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}
