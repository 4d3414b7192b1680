package main

// What the nodes' /metrics say about a phase: the shard logs' messages
// (group commit) and the requests forwarded between nodes.

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// nodeMetrics are the counters of the nodes' /metrics that bench cluster
// reads, each summed over the nodes.
var nodeMetrics = []string{
	"backupmon_cluster_append_records_sum",   // records appended
	"backupmon_cluster_append_records_count", // log messages appended
	"backupmon_cluster_append_seconds_sum",   // publish to acknowledgement, summed
	"backupmon_cluster_forward_seconds_count",
	"backupmon_cluster_forward_seconds_sum",
}

// scrapeMetrics reads nodeMetrics from each admin URL's /metrics, all at
// once, and returns their sums over the nodes; a node that does not
// answer counts as zero and makes err.
func scrapeMetrics(hc *http.Client, admins []string) (map[string]float64, error) {
	each := make([]map[string]float64, len(admins))
	errs := make([]error, len(admins))
	var wg sync.WaitGroup
	for i, u := range admins {
		each[i] = map[string]float64{}
		wg.Go(func() { errs[i] = scrapeInto(hc, u+"/metrics", each[i]) })
	}
	wg.Wait()
	sums := map[string]float64{}
	for _, m := range each {
		for k, v := range m {
			sums[k] += v
		}
	}
	return sums, errors.Join(errs...)
}

func scrapeInto(hc *http.Client, url string, sums map[string]float64) error {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+benchAdminToken)
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("GET %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d %v", url, resp.StatusCode, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		for _, m := range nodeMetrics {
			if name == m {
				v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
				sums[m] += v
			}
		}
	}
	return nil
}

// metricsDelta is what the nodes' counters moved by over a phase.
type metricsDelta struct {
	records, messages float64
	appendSeconds     float64
	forwards          float64
	forwardSeconds    float64
}

func deltaOf(before, after map[string]float64) metricsDelta {
	d := func(name string) float64 { return after[name] - before[name] }
	return metricsDelta{
		records: d("backupmon_cluster_append_records_sum"), messages: d("backupmon_cluster_append_records_count"),
		appendSeconds: d("backupmon_cluster_append_seconds_sum"),
		forwards:      d("backupmon_cluster_forward_seconds_count"), forwardSeconds: d("backupmon_cluster_forward_seconds_sum"),
	}
}

// line says how many log messages the phase appended, their records and
// time, and the requests forwarded and their time, per request of the
// phase.
func (m metricsDelta) line(requests int64) string {
	mean := func(sum, n float64) string {
		if n == 0 {
			return "-"
		}
		return fmtDur(time.Duration(sum / n * float64(time.Second)))
	}
	per := func(n float64) string {
		if n == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", m.records/n)
	}
	return fmt.Sprintf("shard logs: %s messages (%.2f per request) of %s records on average, publish to acknowledgement mean %s; forwarded %s requests, mean %s",
		thousands(int64(m.messages)), m.messages/float64(max(requests, 1)), per(m.messages), mean(m.appendSeconds, m.messages),
		thousands(int64(m.forwards)), mean(m.forwardSeconds, m.forwards))
}
