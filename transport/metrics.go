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
	backups         *prometheus.CounterVec
	backupSent      prometheus.Gauge
	backupBytes     prometheus.Gauge
	counters        sync.Map // requestKey → prometheus.Counter
}

type requestKey struct {
	route  string
	status int
}

// NewMetrics registers the service's metrics (and the Go runtime's) on a
// registry of their own.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg:      prometheus.NewRegistry(),
		requests: counterVec("backupmon_http_requests_total", "HTTP requests answered, by route and status.", "route", "status"),
		reportsIngested: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "backupmon_reports_ingested_total",
			Help: "Reports recorded (not duplicates).",
		}),
		walSync: prometheus.NewHistogram(histogramOpts("backupmon_wal_fsync_seconds",
			"Time to write and fsync one batch of log records.", prometheus.ExponentialBuckets(0.0001, 2, 16))),
		walBatch: prometheus.NewHistogram(histogramOpts("backupmon_wal_batch_records",
			"Log records made durable by one fsync.", prometheus.ExponentialBuckets(1, 2, 12))),
		notices: counterVec("backupmon_notification_attempts_total",
			"Notification delivery attempts, by channel type and outcome (delivered or failed).", "channel", "outcome"),
		noticeTime: prometheus.NewHistogramVec(histogramOpts("backupmon_notification_attempt_seconds",
			"Time one notification delivery attempt took, by channel type.", prometheus.ExponentialBuckets(0.005, 2, 12)), []string{"channel"}),
		mail: counterVec("backupmon_mail_received_total",
			"Report e-mails received, one per recipient, by outcome (recorded, duplicate, unparsed, unknown_recipient, inactive, cap_reached, not_recorded) and the job's vendor.",
			"outcome", "vendor"),
		refused: counterVec("backupmon_connections_refused_total",
			"Connections answered at once and closed because a listener (public, admin, smtp) was at its limit, in all (reason total) or for the client's address (reason address).",
			"listener", "reason"),
		backups: counterVec("backupmon_backups_total",
			"Backups asked for on GET /admin/v1/backup, by outcome: sent (whole, trailer included), cut_short (the file ended without its trailer) or refused (503, before any byte).",
			"outcome"),
		backupSent: prometheus.NewGauge(prometheus.GaugeOpts{Name: "backupmon_backup_last_sent_timestamp_seconds",
			Help: "When the last backup was sent whole (Unix seconds; 0: none since the start), for an alert on backups that stopped."}),
		backupBytes: prometheus.NewGauge(prometheus.GaugeOpts{Name: "backupmon_backup_last_sent_bytes",
			Help: "The size of the last backup sent whole."}),
	}
	m.reg.MustRegister(m.requests, m.reportsIngested, m.walSync, m.walBatch, m.notices, m.noticeTime, m.mail, m.refused, m.backups, m.backupSent, m.backupBytes,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// counterVec makes a counter with labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// histogramOpts names a histogram and its buckets.
func histogramOpts(name, help string, buckets []float64) prometheus.HistogramOpts {
	return prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}
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

// ObserveBackup counts a backup by its outcome ("sent", "cut_short",
// "refused"); a backup sent whole also sets the time and size of the last.
func (m *Metrics) ObserveBackup(outcome string, bytes int64, at time.Time) {
	m.backups.WithLabelValues(outcome).Inc()
	if outcome == "sent" {
		m.backupSent.Set(float64(at.UnixMilli()) / 1000)
		m.backupBytes.Set(float64(bytes))
	}
}
