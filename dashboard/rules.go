package dashboard

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/aiclient"
	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/mailparse"
	"backupmon/mailrules"
	"backupmon/smtpin"
)

// The parsing rules page (decisions.md, parsing rules): owners and admins
// write a rule, try it on a kept unparsed mail or a pasted one (field by
// field, with why a field is empty), save it, order and delete rules, and
// re-read the unparsed mails a rule matches; owners set the model's prompt.

// RulesMail is the mail path the page needs; nil members make its
// actions say that mails are not kept here.
type RulesMail = smtpin.RulesMail

// maxPasted bounds a pasted mail.
const maxPasted = 1 << 20

func (s *Server) ruleRoutes(r *router.Router) {
	r.GET("/settings/rules", s.user(canManage, s.rulesPage))
	r.POST("/settings/rules", s.user(canManage, s.saveRule))
	r.POST("/settings/rules/try", s.user(canManage, s.tryRule))
	r.POST("/settings/rules/{rid}/delete", s.user(canManage, s.deleteRule))
	r.POST("/settings/rules/{rid}/up", s.user(canManage, s.moveRule(-1)))
	r.POST("/settings/rules/{rid}/down", s.user(canManage, s.moveRule(1)))
	r.POST("/settings/rules/{rid}/reread", s.user(canManage, s.rereadRule))
	r.POST("/settings/ai-prompt", s.user(canManage, s.setPrompt))
}

// unparsedRow is an unparsed mail as the page lists it.
type unparsedRow struct {
	ID         string `json:"id"`
	JobName    string `json:"jobName"`
	Subject    string `json:"subject"`
	Reason     string `json:"reason"`
	ReceivedAt string `json:"receivedAt"`
}

// fieldRow is one line of a try's table.
type fieldRow struct {
	Field, Text, Value, Why string
}

// rulesData is the page's data: the rules, the mails to try a rule on, the
// editor's draft and a try's reading.
type rulesData struct {
	Rules    []engine.ParseRuleView
	Unparsed []unparsedRow
	Draft    string // the rule's JSON in the editor
	EditID   string // the rule being changed; "" a new one
	TryOn    string // the unparsed mail chosen
	Pasted   string
	Tried    bool
	Reading  mailrules.Reading
	Fields   []fieldRow
	Result   []fieldRow // the report the mail would become
	Problem  string     // why the rule or the mail could not be tried
	Prompt   string
	Default  bool
	CanOwn   bool
}

// ruleExample is the editor's draft for a new rule.
const ruleExample = `{
  "name": "",
  "match": {"subject": {"contains": ""}},
  "status": {"ok": ["success"], "warning": ["warning"], "failed": ["failed", "error"]},
  "jobName": {"after": "Job:"},
  "startedAt": {"after": "Start time:"},
  "completedAt": {"after": "End time:"},
  "size": {"after": "Size:"},
  "error": {"after": "Error:"}
}`

// rulesView loads what every render of the page shows.
func (s *Server) rulesView(u *engine.SessionUser, d *rulesData) error {
	ws := u.Workspace.ID
	rules, err := s.eng.ParseRules(ws)
	if err != nil {
		return err
	}
	list, err := s.eng.Unparsed(ws)
	if err != nil {
		return err
	}
	d.Rules, d.Unparsed = rules, make([]unparsedRow, 0, len(list))
	for _, v := range list {
		var r unparsedRow
		if jsonx.Unmarshal(v.JSON, &r) == nil {
			d.Unparsed = append(d.Unparsed, r)
		}
	}
	p, err := s.eng.AIPrompt(ws)
	if err != nil {
		return err
	}
	d.Prompt, d.Default = p, p == ""
	if p == "" {
		d.Prompt = aiclient.DefaultPrompt
	}
	d.CanOwn = u.Role == engine.RoleOwner
	if d.Draft == "" {
		d.Draft = ruleExample
	}
	return nil
}

func (s *Server) showRules(ctx *fasthttp.RequestCtx, u *engine.SessionUser, d *rulesData) {
	if s.failed(ctx, s.rulesView(u, d)) {
		return
	}
	s.render(ctx, fasthttp.StatusOK, "rules", s.newView(ctx, u, "Parsing rules", "settings", d))
}

func (s *Server) rulesPage(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	d := &rulesData{}
	if id := string(ctx.QueryArgs().Peek("edit")); id != "" {
		v, err := s.eng.GetParseRule(u.Workspace.ID, id)
		if s.failed(ctx, err) {
			return
		}
		d.EditID, d.Draft = v.ID, string(jsonx.Pretty(v.Rule))
	}
	s.showRules(ctx, u, d)
}

// draft reads the editor's fields back.
func draft(ctx *fasthttp.RequestCtx) *rulesData {
	a := ctx.PostArgs()
	return &rulesData{Draft: string(a.Peek("rule")), EditID: strings.TrimSpace(string(a.Peek("id"))),
		TryOn: strings.TrimSpace(string(a.Peek("unparsedId"))), Pasted: string(a.Peek("mail"))}
}

// tryRule reads the chosen (or pasted) mail with the draft and shows the
// reading under the editor.
func (s *Server) tryRule(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	d := draft(ctx)
	d.Tried = true
	r, _, err := mailrules.Decode([]byte(d.Draft))
	if err != nil {
		d.Problem = "The rule is not valid: " + err.Error()
		s.showRules(ctx, u, d)
		return
	}
	m, problem := s.tryMail(u, d)
	if problem != "" {
		d.Problem = problem
		s.showRules(ctx, u, d)
		return
	}
	rd, err := mailrules.Try(r, m)
	if err != nil {
		d.Problem = "The rule is not valid: " + err.Error()
		s.showRules(ctx, u, d)
		return
	}
	d.Reading = rd
	for _, f := range rd.Fields {
		d.Fields = append(d.Fields, fieldRow(f))
	}
	if rd.Status != "" {
		d.Result = resultRows(rd)
	}
	s.showRules(ctx, u, d)
}

// tryMail decodes the mail a try reads, or says why there is none.
func (s *Server) tryMail(u *engine.SessionUser, d *rulesData) (*mailparse.Message, string) {
	switch {
	case strings.TrimSpace(d.Pasted) != "":
		if len(d.Pasted) > maxPasted {
			return nil, "The pasted mail is over 1 MiB."
		}
		text := strings.ReplaceAll(d.Pasted, "\r\n", "\n")
		if m, err := mailparse.Read([]byte(text)); err == nil {
			return m, ""
		}
		m, err := mailparse.Read([]byte("Content-Type: text/plain; charset=utf-8\n\n" + text))
		if err != nil {
			return nil, "The pasted mail holds no readable text."
		}
		return m, ""
	case d.TryOn != "":
		if s.rulesMail.Raw == nil {
			return nil, "Report e-mails are not kept by this server."
		}
		raw, err := s.rulesMail.Raw(u.Workspace.ID, d.TryOn)
		if err != nil {
			return nil, "That mail cannot be had: " + engine.ErrorText(err) + "."
		}
		m, err := mailparse.Read(raw)
		if err != nil {
			return nil, "That mail cannot be decoded: " + err.Error() + "."
		}
		return m, ""
	}
	return nil, "Choose an unparsed mail, or paste one."
}

// resultRows is the report a reading makes, field by field.
func resultRows(rd mailrules.Reading) []fieldRow {
	r := rd.Result
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	num := func(n int64) string {
		if n < 0 {
			return ""
		}
		return fmt.Sprint(n)
	}
	return []fieldRow{
		{Field: "status", Value: rd.Status}, {Field: "job name", Value: r.JobName},
		{Field: "started", Value: stamp(r.StartedAt)}, {Field: "completed", Value: stamp(r.CompletedAt)},
		{Field: "duration (s)", Value: num(r.DurationSeconds)}, {Field: "size (bytes)", Value: num(r.SizeBytes)},
		{Field: "error text", Value: r.Summary},
	}
}

// saveRule saves the draft: a new rule, or the one being changed.
func (s *Server) saveRule(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	d := draft(ctx)
	r, spec, err := mailrules.Decode([]byte(d.Draft))
	if err != nil {
		d.Problem = "Not saved: " + err.Error()
		s.showRules(ctx, u, d)
		return
	}
	v, err := s.eng.SaveParseRule(u.Workspace.ID, d.EditID, r.Name, spec, actor(u))
	if err != nil {
		d.Problem = "Not saved: " + engine.ErrorText(err) + "."
		s.showRules(ctx, u, d)
		return
	}
	redirect(ctx, "/settings/rules", fmt.Sprintf("Rule “%s” saved. Re-read the unparsed mails it matches with its Re-read button.", v.Name), false)
}

func (s *Server) deleteRule(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	err := s.eng.DeleteParseRule(u.Workspace.ID, ctx.UserValue("rid").(string), actor(u))
	redirectAfter(ctx, "/settings/rules", err, "Not deleted", "Rule deleted.")
}

// moveRule moves a rule one place up (-1) or down (1).
func (s *Server) moveRule(by int) handlerFunc {
	return func(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
		rules, err := s.eng.ParseRules(u.Workspace.ID)
		if s.failed(ctx, err) {
			return
		}
		id := ctx.UserValue("rid").(string)
		ids := make([]string, len(rules))
		at := -1
		for i, r := range rules {
			ids[i] = r.ID
			if r.ID == id {
				at = i
			}
		}
		if at < 0 {
			redirect(ctx, "/settings/rules", "Not moved: no such rule.", true)
			return
		}
		if to := at + by; to >= 0 && to < len(ids) {
			ids[at], ids[to] = ids[to], ids[at]
		}
		_, err = s.eng.OrderParseRules(u.Workspace.ID, ids, actor(u))
		redirectAfter(ctx, "/settings/rules", err, "Not moved", "Rules reordered.")
	}
}

// rereadRule reads again the unparsed mails the rule matches.
func (s *Server) rereadRule(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	if s.rulesMail.Reread == nil {
		redirect(ctx, "/settings/rules", "Report e-mails are not kept by this server.", true)
		return
	}
	v, err := s.eng.GetParseRule(u.Workspace.ID, ctx.UserValue("rid").(string))
	if err != nil {
		redirectAfter(ctx, "/settings/rules", err, "Not re-read", "")
		return
	}
	list, err := s.rulesMail.Reread(u.Workspace.ID, string(v.Rule))
	if err != nil {
		var e *engine.Error
		if !errors.As(err, &e) {
			s.log.Error("re-read unparsed mails", "err", err)
		}
		redirect(ctx, "/settings/rules", "Not re-read: "+engine.ErrorText(err)+".", true)
		return
	}
	done, still := 0, 0
	var reason string
	for _, r := range list {
		if r.Reason != "" {
			still++
			reason = r.Reason
			continue
		}
		done++
	}
	msg := fmt.Sprintf("Re-read %d mail(s) the rule matches: %d became reports, %d still unparsed.", len(list), done, still)
	if reason != "" {
		msg += " The last one: " + reason + "."
	}
	redirect(ctx, "/settings/rules", msg, still > 0)
}

// setPrompt sets the model's prompt (owners only; empty for the default).
func (s *Server) setPrompt(ctx *fasthttp.RequestCtx, u *engine.SessionUser) {
	if u.Role != engine.RoleOwner {
		s.errorPage(ctx, fasthttp.StatusForbidden, "Forbidden", "Only owners set the model's prompt.")
		return
	}
	p := strings.TrimSpace(strings.ReplaceAll(string(ctx.PostArgs().Peek("prompt")), "\r\n", "\n"))
	if p == strings.TrimSpace(aiclient.DefaultPrompt) {
		p = ""
	}
	err := s.eng.SetAIPrompt(u.Workspace.ID, p)
	redirectAfter(ctx, "/settings/rules", err, "Not saved", "Prompt saved.")
}
