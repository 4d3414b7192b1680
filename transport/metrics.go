package transport

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
)

// Metrics are the figures /metrics serves in the Prometheus text format.
type Metrics struct {
	reg             *prometheus.Registry
	requests        *prometheus.CounterVec
	reportsIngested prometheus.Counter
	walSync         prometheus.Histogram
	walBatch        prometheus.Histogram
	notices         *prometheus.CounterVec
	noticeTime      *prometheus.HistogramVec
	mail            *prometheus.CounterVec
	refused         *prometheus.CounterVec
	counters        sync.Map // requestKey → prometheus.Counter
}

type requestKey struct {
	route  string
	status int
}

// NewMetrics registers the service's metrics (and the Go runtime's) on a
// registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "backupmon_http_requests_total",
		Help: "HTTP requests answered, by route and status.",
	}, []string{"route", "status"})
	m.reportsIngested = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "backupmon_reports_ingested_total",
		Help: "Reports recorded (not duplicates).",
	})
	m.walSync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "backupmon_wal_fsync_seconds",
		Help:    "Time to write and fsync one batch of log records.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16),
	})
	m.walBatch = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "backupmon_wal_batch_records",
		Help:    "Log records made durable by one fsync.",
		Buckets: prometheus.ExponentialBuckets(1, 2, 12),
	})
	m.notices = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "backupmon_notification_attempts_total",
		Help: "Notification delivery attempts, by channel type and outcome (delivered or failed).",
	}, []string{"channel", "outcome"})
	m.noticeTime = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "backupmon_notification_attempt_seconds",
		Help:    "Time one notification delivery attempt took, by channel type.",
		Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
	}, []string{"channel"})
	m.mail = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "backupmon_mail_received_total",
		Help: "Report e-mails received, one per recipient, by outcome (recorded, duplicate, unparsed, unknown_recipient, inactive, cap_reached, not_recorded) and the job's vendor.",
	}, []string{"outcome", "vendor"})
	m.refused = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "backupmon_connections_refused_total",
		Help: "Connections answered at once and closed because a listener (public, admin, smtp) was at its limit, in all (reason total) or for the client's address (reason address).",
	}, []string{"listener", "reason"})
	m.reg.MustRegister(m.requests, m.reportsIngested, m.walSync, m.walBatch, m.notices, m.noticeTime, m.mail, m.refused,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// ObserveWAL records one durable batch; it is the log's Observe hook.
func (m *Metrics) ObserveWAL(records int, sync time.Duration) {
	m.walBatch.Observe(float64(records))
	m.walSync.Observe(sync.Seconds())
}

// ObserveNotification records one notification delivery attempt; it is the
// notifier's Observe hook.
func (m *Metrics) ObserveNotification(channelType string, ok bool, took time.Duration) {
	outcome := "failed"
	if ok {
		outcome = "delivered"
	}
	m.notices.WithLabelValues(channelType, outcome).Inc()
	m.noticeTime.WithLabelValues(channelType).Observe(took.Seconds())
}

// ObserveOutbox serves the number of pending notification deliveries, as
// pending reports it, under backupmon_notification_outbox_pending.
func (m *Metrics) ObserveOutbox(pending func() int64) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "backupmon_notification_outbox_pending",
		Help: "Notification deliveries waiting in the outboxes (not yet delivered, failed or cancelled).",
	}, func() float64 { return float64(pending()) }))
}

// Register adds a collector (e.g. an engine gauge) to the registry.
func (m *Metrics) Register(c prometheus.Collector) { m.reg.MustRegister(c) }

// countRequest counts one answered request of route.
func (m *Metrics) countRequest(route string, status int) {
	k := requestKey{route, status}
	c, ok := m.counters.Load(k)
	if !ok {
		c, _ = m.counters.LoadOrStore(k, m.requests.WithLabelValues(route, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
}

func (m *Metrics) handler() fasthttp.RequestHandler {
	return fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
}

// ObserveMail counts one recipient of a report e-mail by outcome and
// vendor; it is the SMTP listener's Observe hook.
func (m *Metrics) ObserveMail(outcome, vendor string) {
	m.mail.WithLabelValues(outcome, vendor).Inc()
}

// ObserveRefused counts a connection refused by a listener at its limit;
// it is the listeners' Refused hook.
func (m *Metrics) ObserveRefused(listener, reason string) {
	m.refused.WithLabelValues(listener, reason).Inc()
}
