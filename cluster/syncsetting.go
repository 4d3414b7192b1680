package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"backupmon/jsonx"
)

// syncCheckWait bounds the question to one server's monitoring.
const syncCheckWait = 5 * time.Second

// CheckSync asks the monitoring endpoint of each NATS server at urls
// (nats-server's http_port, e.g. http://h1:8222) for its JetStream
// settings (/jsz) and returns an error naming the first server that does not fsync every write (sync_interval: always):
// without it JetStream acknowledges a write before it is on disk, and a
// power cut on a majority of the servers loses reports the cluster said
// were recorded (memo 1.1 and 4.1). A server that does not answer, or
// answers something else, is logged and left out: one server down must not
// keep a node from starting. tlsConfig, when set, is used for https URLs.
func CheckSync(ctx context.Context, urls []string, tlsConfig *tls.Config, logger *slog.Logger) error {
	client := &http.Client{Timeout: syncCheckWait}
	if tlsConfig != nil {
		client.Transport = &http.Transport{TLSClientConfig: tlsConfig.Clone()}
	}
	for _, u := range urls {
		always, err := syncAlways(ctx, client, u)
		switch {
		case err != nil:
			logger.Warn("the NATS server's fsync setting could not be read; it was not checked", "monitor", u, "err", err)
		case !always:
			return fmt.Errorf("the NATS server at %s does not fsync every write (its /jsz shows no sync_interval: always): it acknowledges writes before they are on disk, and a power cut can lose reports the cluster said were recorded; set sync_interval: always in its jetstream block (backupmon nats does)", u)
		default:
			logger.Info("the NATS server fsyncs every write", "monitor", u)
		}
	}
	return nil
}

// syncAlways reads the sync_always setting of JetStream from the server's
// /jsz.
func syncAlways(ctx context.Context, client *http.Client, base string) (bool, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(base, "/")+"/jsz", nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK {
		return false, fmt.Errorf("%s", resp.Status)
	}
	var jsz struct {
		Disabled bool `json:"disabled"`
		Config   *struct {
			SyncAlways bool `json:"sync_always"`
		} `json:"config"`
	}
	if err := jsonx.Unmarshal(body, &jsz); err != nil {
		return false, fmt.Errorf("its /jsz: %w", err)
	}
	if jsz.Disabled || jsz.Config == nil {
		return false, errors.New("its /jsz shows no JetStream")
	}
	return jsz.Config.SyncAlways, nil
}
