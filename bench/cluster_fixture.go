package main

// The fixture of bench cluster, made through the admin API of a cluster
// (any node) or of a single node, and the cluster's shard owners.

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"backupmon/cluster"
	"backupmon/jsonx"
)

// benchAdminToken is the admin token of the servers bench cluster starts.
const benchAdminToken = "bench-cluster-admin-token-0123456789abcdef"

// adminParallel is how many admin requests the set-up sends at once: the
// admin listener serves at most 64 connections from one address.
const adminParallel = 48

// adminAPI is the admin API of a single node, or of a cluster's nodes,
// which take the requests in turn (any node answers).
type adminAPI struct {
	urls []string // http://host:port of each admin listener
	hc   *http.Client
	next atomic.Uint32
}

func newAdminAPI(urls []string) *adminAPI {
	return &adminAPI{urls: urls, hc: &http.Client{Timeout: 30 * time.Second,
		Transport: &http.Transport{MaxConnsPerHost: adminParallel, MaxIdleConnsPerHost: adminParallel, DisableCompression: true}}}
}

// call sends body (JSON; nil for none) to path under /admin/v1 on the next
// node, requires the status want, and decodes the answer's data member into
// into (unless nil). A 503 (no node serves the shard at the moment) is
// sent again for up to 30 seconds. It returns the transport's error, or the
// status and body of an unwanted answer.
func (a *adminAPI) call(method, path string, body any, want int, into any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = jsonx.Marshal(body); err != nil {
			return err
		}
	}
	status, b, err := a.send(method, path, payload)
	// A 503: no node serves the shard at the moment (one is taking it
	// over); the request did nothing, so it is sent again, for a while.
	for deadline := time.Now().Add(30 * time.Second); err == nil && status == http.StatusServiceUnavailable && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		status, b, err = a.send(method, path, payload)
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if status != want {
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, status, want, b)
	}
	if into == nil {
		return nil
	}
	var env struct {
		Data jsonRaw `json:"data"`
	}
	if err := jsonx.Unmarshal(b, &env); err != nil {
		return fmt.Errorf("%s %s: %w: %s", method, path, err, b)
	}
	if err := jsonx.Unmarshal(env.Data, into); err != nil {
		return fmt.Errorf("%s %s: data: %w: %s", method, path, err, b)
	}
	return nil
}

// send sends payload (JSON; nil for none) to path under /admin/v1 on the
// next node and returns the answer's status and body.
func (a *adminAPI) send(method, path string, payload []byte) (int, []byte, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequest(method, a.urls[int(a.next.Add(1))%len(a.urls)]+"/admin/v1"+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+benchAdminToken)
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// jsonRaw keeps a JSON value's bytes as they came.
type jsonRaw []byte

func (r *jsonRaw) UnmarshalJSON(b []byte) error {
	*r = append((*r)[:0], b...)
	return nil
}

// create posts body to path and returns the new record's member named
// field ("id", or "key" for a key's secret).
func (a *adminAPI) create(path string, body map[string]any, field string) (string, error) {
	var m map[string]any
	if err := a.call(http.MethodPost, path, body, http.StatusCreated, &m); err != nil {
		return "", err
	}
	v, ok := m[field].(string)
	if !ok || v == "" {
		return "", fmt.Errorf("POST %s: no %s in the answer", path, field)
	}
	return v, nil
}

// httpFixture is a fixture made through the admin API: the layout's
// workspaces (each Pro, with one client), jobs and report keys, indexed as
// fixture says, and one REST key per workspace.
type httpFixture struct {
	*fixture
	rest   []string // per workspace: its REST key (every scope)
	shards []int    // per workspace: its shard (its keys carry it); 0 on a single node
}

// reportBudget is how many reports an httpFixture has room for, counted
// over the whole run (stricter than the limits' minute or day): at most 100
// per job and 60 per report key.
func (f *httpFixture) reportBudget() int64 {
	return min(int64(len(f.jobIDs))*perJobPerDay, int64(len(f.secrets))*perKeyPerMinute)
}

// readBudget is how many reads an httpFixture has room for: 300 per
// workspace over the whole run.
func (f *httpFixture) readBudget() int64 { return int64(f.workspaces) * restPerMinutePro }

// sizeHTTPFixture returns the layout that has room for the planned reports
// and reads, with planMargin to spare: enough workspaces for the reads
// within the Pro limit (or workspaces, when not 0), enough jobs and report
// keys for the reports.
func sizeHTTPFixture(reports, reads float64, workspaces int) layout {
	reports *= planMargin
	reads *= planMargin
	w := workspaces
	if w <= 0 {
		w = max(1, int(math.Ceil(reads/restPerMinutePro)))
	}
	perWS := func(need float64) int { return max(1, int(math.Ceil(need/float64(w)))) }
	return layout{workspaces: w, clientsPerWS: 1, jobsPerWS: perWS(reports / perJobPerDay), keysPerWS: perWS(reports / perKeyPerMinute),
		keyType: "report", parallel: adminParallel, workspaceName: "Bench MSP"}
}

// setUpHTTP makes the fixture of layout l through api, many workspaces at
// once. With shards > 0 (a cluster of that many shards) it records each
// workspace's shard, and fails unless every key of a workspace carries the
// same one. It returns the first failed request's error.
func setUpHTTP(api *adminAPI, l layout, shards int) (*httpFixture, error) {
	f := &httpFixture{
		fixture: &fixture{layout: l, wsIDs: make([]string, l.workspaces), jobIDs: make([]string, l.jobs()), secrets: make([]string, l.keys())},
		rest:    make([]string, l.workspaces), shards: make([]int, l.workspaces),
	}
	err := parallelDo(l.workspaces, l.parallel, func(w int) error { return f.setUpWorkspace(api, w, shards) })
	if err != nil {
		return nil, fmt.Errorf("set up workspace %w", err)
	}
	return f, nil
}

func (f *httpFixture) setUpWorkspace(api *adminAPI, w, shards int) error {
	ws, err := api.create("/workspaces", map[string]any{"name": fmt.Sprintf("%s %d", f.workspaceName, w), "plan": "pro"}, "id")
	if err != nil {
		return err
	}
	f.wsIDs[w] = ws
	base := "/workspaces/" + ws
	client, err := api.create(base+"/clients", map[string]any{"name": fmt.Sprintf("Client %d", w)}, "id")
	if err != nil {
		return err
	}
	if f.rest[w], err = api.create(base+"/keys", map[string]any{"name": "Bench REST key", "type": "rest"}, "key"); err != nil {
		return err
	}
	if shards > 0 {
		s, ok := cluster.KeyShard(f.rest[w], shards)
		if !ok {
			return fmt.Errorf("the REST key %q carries no shard", f.rest[w])
		}
		f.shards[w] = s
	}
	for m := range f.jobsPerWS {
		id, err := api.create(base+"/jobs", map[string]any{
			"clientId": client, "name": fmt.Sprintf("Nightly backup %d", m), "vendor": "generic",
			"device":   map[string]any{"name": fmt.Sprintf("Server host-%d-%d", w, m), "type": "server", "hostname": fmt.Sprintf("host-%d-%d", w, m)},
			"schedule": map[string]any{"intervalMinutes": 1440, "graceMinutes": 120},
		}, "id")
		if err != nil {
			return err
		}
		f.jobIDs[w+f.workspaces*m] = id
	}
	for m := range f.keysPerWS {
		key, err := api.create(base+"/keys", map[string]any{"name": "Bench report key " + strconv.Itoa(m), "type": "report"}, "key")
		if err != nil {
			return err
		}
		if shards > 0 {
			if s, _ := cluster.KeyShard(key, shards); s != f.shards[w] {
				return fmt.Errorf("report key %q carries shard %d, the workspace's REST key %d", key, s, f.shards[w])
			}
		}
		f.secrets[w+f.workspaces*m] = key
	}
	return nil
}

// clusterStatus is the data of GET /admin/v1/cluster.
type clusterStatus struct {
	Shards int `json:"shards"`
	Nodes  []struct {
		ID     string `json:"id"`
		Shards []int  `json:"shards"`
	} `json:"nodes"`
	Owners []struct {
		Shard int    `json:"shard"`
		State string `json:"state"`
		Owner string `json:"owner"`
		Epoch uint64 `json:"epoch"`
	} `json:"owners"`
}

// owners returns the index in ids of each shard's owner, as the cluster
// says, and the owners' epochs; it fails unless the cluster has shards
// shards, each served by one of ids.
func (a *adminAPI) owners(ids []string, shards int) (owner []int, epochs []uint64, err error) {
	var st clusterStatus
	if err := a.call(http.MethodGet, "/cluster", nil, http.StatusOK, &st); err != nil {
		return nil, nil, err
	}
	if st.Shards != shards || len(st.Owners) != shards {
		return nil, nil, fmt.Errorf("GET /admin/v1/cluster: %d shards and %d owners, want %d", st.Shards, len(st.Owners), shards)
	}
	owner, epochs = make([]int, shards), make([]uint64, shards)
	for _, o := range st.Owners {
		i := -1
		for j, id := range ids {
			if id == o.Owner {
				i = j
			}
		}
		if o.State != "served" || i < 0 || o.Shard < 0 || o.Shard >= shards {
			return nil, nil, fmt.Errorf("GET /admin/v1/cluster: shard %d is %s by %q", o.Shard, o.State, o.Owner)
		}
		owner[o.Shard], epochs[o.Shard] = i, o.Epoch
	}
	return owner, epochs, nil
}

// settleAfter is how long after its start a cluster's shards may still
// move: a node hands a shard to the node that ranks first for it once that
// node has been up 30 seconds (cluster.Node's assign), and the first node
// up takes every shard meanwhile.
const settleAfter = 33 * time.Second

// settle waits until settleAfter has passed since start, then until the
// owners have stayed the same for stable; it returns them (as owners does)
// and how long it waited, or an error when they still move after timeout.
func (a *adminAPI) settle(ids []string, shards int, start time.Time, stable, timeout time.Duration) ([]int, []uint64, time.Duration, error) {
	began := time.Now()
	time.Sleep(time.Until(start.Add(settleAfter)))
	deadline := time.Now().Add(timeout)
	owner, epochs, err := a.owners(ids, shards)
	since := time.Now()
	for err != nil || time.Since(since) < stable {
		if time.Now().After(deadline) {
			return nil, nil, 0, fmt.Errorf("the shards' owners still move after %v (last: %v)", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
		o, e, err2 := a.owners(ids, shards)
		if err2 != nil || err != nil || !slices.Equal(o, owner) || !slices.Equal(e, epochs) {
			since = time.Now()
		}
		owner, epochs, err = o, e, err2
	}
	return owner, epochs, time.Since(began), nil
}
