package testserver

// The admin API calls that build what the tests work on.

// NewWorkspace creates a workspace from the create body and returns its id.
func (c *Client) NewWorkspace(body map[string]any) string {
	c.T.Helper()
	return c.newID("/workspaces", body)
}

// NewClient creates a client of workspace ws and returns its id.
func (c *Client) NewClient(ws, name string) string {
	c.T.Helper()
	return c.newID("/workspaces/"+ws+"/clients", map[string]any{"name": name})
}

// NewKey creates a key of type typ, named "k-<typ>" unless extra names it;
// extra's members go into the create body. It returns the secret and the id.
func (c *Client) NewKey(ws, typ string, extra map[string]any) (secret, id string) {
	c.T.Helper()
	body := map[string]any{"name": "k-" + typ, "type": typ}
	for k, v := range extra {
		body[k] = v
	}
	d := c.MustAdmin(201, "POST", "/workspaces/"+ws+"/keys", body).Data()
	secret, _ = d["key"].(string)
	id, _ = d["id"].(string)
	return secret, id
}

// JobBody is a job create body: a veeam job of client on the file server
// fs01; change edits it when not nil.
func JobBody(client, name string, schedule map[string]any, change func(m map[string]any)) map[string]any {
	m := map[string]any{
		"clientId": client, "name": name, "vendor": "veeam",
		"device":   map[string]any{"name": "File server", "type": "server", "hostname": "fs01"},
		"schedule": schedule,
	}
	if change != nil {
		change(m)
	}
	return m
}

// NewJob creates a job (JobBody) and returns its id.
func (c *Client) NewJob(ws, client, name string, schedule map[string]any) string {
	c.T.Helper()
	return c.newID("/workspaces/"+ws+"/jobs", JobBody(client, name, schedule, nil))
}

// Job reads a job through the admin API's job view.
func (c *Client) Job(ws, job string) map[string]any {
	c.T.Helper()
	return c.MustAdmin(200, "GET", "/workspaces/"+ws+"/jobs/"+job, nil).Data()
}

// Daily is the schedule of a job expected once a day.
func Daily() map[string]any { return map[string]any{"intervalMinutes": 1440} }

// newID posts body to path, requires 201 and returns the new record's id.
func (c *Client) newID(path string, body map[string]any) string {
	c.T.Helper()
	r := c.MustAdmin(201, "POST", path, body)
	id, ok := r.Data()["id"].(string)
	if !ok {
		c.T.Fatalf("POST %s: no id in %s", path, r.Body)
	}
	return id
}

// Fixture is a workspace with one client, one job and a key of each type.
type Fixture struct {
	WS, Client, Job              string
	ReportKey, RestKey, AsstKey  string
	ReportKeyID, ReportKeyPrefix string
}

// FixtureOptions change a Fixture; a zero field takes its default.
type FixtureOptions struct {
	Plan     string         // default "pro"
	TimeZone string         // default "UTC"
	Schedule map[string]any // the job's; default Daily()
}

// Fixture creates the workspace "Acme IT", the client "Globex", the job
// "Nightly backup" and the keys "agent" (report), "psa" (rest) and "bot"
// (assistant).
func (c *Client) Fixture(o FixtureOptions) Fixture {
	c.T.Helper()
	if o.Plan == "" {
		o.Plan = "pro"
	}
	if o.TimeZone == "" {
		o.TimeZone = "UTC"
	}
	if o.Schedule == nil {
		o.Schedule = Daily()
	}
	var f Fixture
	f.WS = c.NewWorkspace(map[string]any{"name": "Acme IT", "plan": o.Plan, "timeZone": o.TimeZone})
	f.Client = c.NewClient(f.WS, "Globex")
	f.Job = c.NewJob(f.WS, f.Client, "Nightly backup", o.Schedule)
	rk := c.MustAdmin(201, "POST", "/workspaces/"+f.WS+"/keys", map[string]any{"name": "agent", "type": "report"}).Data()
	f.ReportKey, f.ReportKeyID, f.ReportKeyPrefix = rk["key"].(string), rk["id"].(string), rk["prefix"].(string)
	f.RestKey, _ = c.NewKey(f.WS, "rest", map[string]any{"name": "psa"})
	f.AsstKey, _ = c.NewKey(f.WS, "assistant", map[string]any{"name": "bot"})
	return f
}
