package cluster

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are a node's figures: shards owned, taken over and broken,
// requests forwarded and their time, lease renewals, appends and their
// time, and its link to NATS. Register them on the /metrics registry with
// Collectors.
type Metrics struct {
	ownedShards   prometheus.Gauge
	takeovers     prometheus.Counter
	takeoverTime  prometheus.Histogram
	broken        prometheus.Gauge
	forwards      *prometheus.CounterVec
	forwardTime   prometheus.Histogram
	renewals      prometheus.Counter
	appendTime    prometheus.Histogram
	appendRecords prometheus.Histogram
	natsUp        prometheus.GaugeFunc
	natsLost      prometheus.Counter

	link atomic.Pointer[func() bool] // the node's connection's state, once it has one
}

// NewMetrics makes a node's metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		ownedShards: prometheus.NewGauge(prometheus.GaugeOpts{Name: "backupmon_cluster_shards_owned", Help: "Shards this node owns and serves."}),
		takeovers:   prometheus.NewCounter(prometheus.CounterOpts{Name: "backupmon_cluster_takeovers_total", Help: "Shards this node took over (lease taken, replayed, fenced)."}),
		takeoverTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "backupmon_cluster_takeover_seconds", Help: "From taking a shard's lease to serving it.",
			Buckets: prometheus.ExponentialBuckets(0.01, 2, 14)}),
		broken:   prometheus.NewGauge(prometheus.GaugeOpts{Name: "backupmon_cluster_shards_broken", Help: "Shards this node found broken (their history failed its checks: a gap, a foreign epoch, a damaged message); no node serves them until an operator repairs them."}),
		forwards: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "backupmon_cluster_forwards_total", Help: "Requests sent to another node, by outcome, and by way: node to node over TCP (peer) or over NATS."}, []string{"outcome", "via"}),
		forwardTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "backupmon_cluster_forward_seconds", Help: "Time of a request forwarded to its shard's owner.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		renewals: prometheus.NewCounter(prometheus.CounterOpts{Name: "backupmon_cluster_lease_renewals_total", Help: "Shard leases renewed."}),
		appendTime: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "backupmon_cluster_append_seconds", Help: "From publishing a log message to its acknowledgement.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 2, 16)}),
		appendRecords: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "backupmon_cluster_append_records", Help: "Records in one log message (group commit).",
			Buckets: prometheus.ExponentialBuckets(1, 2, 11)}),
		natsLost: prometheus.NewCounter(prometheus.CounterOpts{Name: "backupmon_cluster_nats_disconnects_total", Help: "Times this node's connection to NATS was lost (it reconnects by itself; its shards go to other nodes when it stays lost past their leases)."}),
	}
	m.natsUp = prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "backupmon_cluster_nats_connected", Help: "1 while this node is connected to a NATS server, 0 otherwise."}, func() float64 {
		if f := m.link.Load(); f != nil && (*f)() {
			return 1
		}
		return 0
	})
	return m
}

// Collectors returns the metrics to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.ownedShards, m.takeovers, m.takeoverTime, m.broken, m.forwards, m.forwardTime, m.renewals, m.appendTime, m.appendRecords, m.natsUp, m.natsLost}
}

func (m *Metrics) owned(n int) { m.ownedShards.Set(float64(n)) }
func (m *Metrics) shardTaken(took time.Duration) {
	m.takeovers.Inc()
	m.takeoverTime.Observe(took.Seconds())
}
func (m *Metrics) shardBroken(n int) { m.broken.Set(float64(n)) }
func (m *Metrics) leaseRenewed()     { m.renewals.Inc() }
func (m *Metrics) linkLost()         { m.natsLost.Inc() }

// watchLink makes the connected gauge read connected.
func (m *Metrics) watchLink(connected func() bool) { m.link.Store(&connected) }
func (m *Metrics) forwarded(outcome, via string, took time.Duration) {
	m.forwards.WithLabelValues(outcome, via).Inc()
	m.forwardTime.Observe(took.Seconds())
}
func (m *Metrics) appended(records int, took time.Duration) {
	m.appendRecords.Observe(float64(records))
	m.appendTime.Observe(took.Seconds())
}
