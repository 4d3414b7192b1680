package transport

import (
	"errors"
	"time"

	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/mailparse"
	"backupmon/mailrules"
	"backupmon/mailstore"
	"backupmon/smtpin"
)

// Admin endpoints of a workspace's parsing rules (decisions.md, parsing
// rules). Rules, the mails they are tried on and what they read are shown
// here and in the dashboard only, never by the REST API (api.md 1.7).

// RulesMail is what the parsing-rule endpoints need of the mail path; a nil
// member makes its endpoint answer 409.
type RulesMail = smtpin.RulesMail

// MaxPastedMail bounds a mail pasted into a try.
const MaxPastedMail = 1 << 20

func (s *Server) ruleRoutes(r *router.Router, a func(string, fasthttp.RequestHandler) fasthttp.RequestHandler) {
	const rules = "/admin/v1/workspaces/{wid}/parsing-rules"
	r.GET(rules, a("rule_list", adminRead(s, (*engine.Engine).ParseRules)))
	r.POST(rules, a("rule_create", s.adminSaveRule(false)))
	r.PUT(rules, a("rule_order", s.adminOrderRules))
	r.POST(rules+"/try", a("rule_try", s.adminTryRule))
	r.GET(rules+"/{rid}", a("rule_get", adminReadOne(s, "rid", (*engine.Engine).GetParseRule)))
	r.PUT(rules+"/{rid}", a("rule_update", s.adminSaveRule(true)))
	r.DELETE(rules+"/{rid}", a("rule_delete", adminRemove(s, "rid", byAdmin((*engine.Engine).DeleteParseRule))))
	r.POST(rules+"/{rid}/reread", a("rule_reread", s.adminRereadRule))
	s.aiRoutes(r, a)
}

// ruleProblem turns a rule's problem into the admin API's 400.
func ruleProblem(err error) error {
	var p *mailrules.Problem
	if errors.As(err, &p) {
		return &engine.Error{Kind: engine.KindInvalid, Field: p.Field, Message: p.Message}
	}
	return err
}

// adminSaveRule makes a rule (POST, 201) or replaces one (PUT, 200); the
// body is the rule's JSON.
func (s *Server) adminSaveRule(update bool) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		r, spec, err := mailrules.Decode(ctx.PostBody())
		if err != nil {
			s.adminFail(ctx, ruleProblem(err))
			return
		}
		id, status := "", fasthttp.StatusCreated
		if update {
			id, status = pathParam(ctx, "rid"), fasthttp.StatusOK
		}
		v, err := s.eng.SaveParseRule(pathParam(ctx, "wid"), id, r.Name, spec, "")
		s.answer(ctx, status, v, err)
	}
}

// adminOrderRules puts the rules in the order of {ids}.
func (s *Server) adminOrderRules(ctx *fasthttp.RequestCtx) {
	ids, ok := oneMember(s, ctx, "ids", (*fields).strings, "ids is required")
	if !ok {
		return
	}
	v, err := s.eng.OrderParseRules(pathParam(ctx, "wid"), ids.V, "")
	s.answer(ctx, fasthttp.StatusOK, v, err)
}

// tryAnswer is a try's answer: the reading field by field, and the report
// the mail would become.
type tryAnswer struct {
	mailrules.Reading
	Result *tryResult `json:"result"`
}

// tryResult is a reading's report in the Report API's terms.
type tryResult struct {
	Status, JobName string // ok, warn or failed; the job named in the mail
	// StartedAt and CompletedAt are timestamps (null: not stated).
	StartedAt, CompletedAt *string
	// DurationSeconds and SizeBytes are null when not stated.
	DurationSeconds, SizeBytes *int64
	Summary                    string // the error or warning text
}

// MarshalJSON writes the result with the Report API's member names.
func (t *tryResult) MarshalJSON() ([]byte, error) {
	return jsonx.Marshal(map[string]any{"status": t.Status, "jobName": t.JobName, "startedAt": t.StartedAt, "completedAt": t.CompletedAt,
		"durationSeconds": t.DurationSeconds, "sizeBytes": t.SizeBytes, "summary": t.Summary})
}

// TryAnswer builds what a try shows of rd: its fields, and the report when
// it reads one (nil otherwise). The dashboard shows the same.
func TryAnswer(rd mailrules.Reading) any {
	a := tryAnswer{Reading: rd}
	if rd.Status == "" {
		return a
	}
	r := rd.Result
	t := &tryResult{Status: rd.Status, JobName: r.JobName, Summary: r.Summary}
	stamp := func(v time.Time) *string {
		if v.IsZero() {
			return nil
		}
		s := v.UTC().Format("2006-01-02T15:04:05.000Z")
		return &s
	}
	t.StartedAt, t.CompletedAt = stamp(r.StartedAt), stamp(r.CompletedAt)
	if r.DurationSeconds >= 0 {
		t.DurationSeconds = &r.DurationSeconds
	}
	if r.SizeBytes >= 0 {
		t.SizeBytes = &r.SizeBytes
	}
	a.Result = t
	return a
}

// ReadPasted decodes a mail pasted into a try: a whole message, or a body
// alone (read as plain text).
func ReadPasted(text string) (*mailparse.Message, error) {
	if m, err := mailparse.Read([]byte(text)); err == nil {
		return m, nil
	}
	m, err := mailparse.Read([]byte("Content-Type: text/plain; charset=utf-8\r\n\r\n" + text))
	if err != nil {
		return nil, &engine.Error{Kind: engine.KindInvalid, Field: "mail", Message: "mail holds no readable text"}
	}
	return m, nil
}

// adminTryRule reads one mail with a rule not saved: {rule, unparsedId} or
// {rule, mail} (the raw message or its body, pasted).
func (s *Server) adminTryRule(ctx *fasthttp.RequestCtx) {
	f := s.body(ctx, false)
	if f == nil {
		return
	}
	raw, _, hasRule := f.raw("rule")
	uid, mail := f.str("unparsedId"), f.str("mail")
	if err := f.finish(); err != nil {
		s.adminFail(ctx, err)
		return
	}
	if !hasRule {
		s.adminFail(ctx, &engine.Error{Kind: engine.KindInvalid, Field: "rule", Message: "rule is required"})
		return
	}
	r, _, err := mailrules.Decode(raw)
	if err != nil {
		s.adminFail(ctx, ruleProblem(err))
		return
	}
	var m *mailparse.Message
	switch {
	case uid.Set && !uid.Null && uid.V != "":
		if s.rules.Raw == nil {
			adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "Report e-mails are not kept by this server")
			return
		}
		b, err := s.rules.Raw(pathParam(ctx, "wid"), uid.V)
		if err != nil {
			s.rawFail(ctx, err)
			return
		}
		if m, err = mailparse.Read(b); err != nil {
			adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "The e-mail cannot be decoded: "+err.Error())
			return
		}
	case mail.Set && !mail.Null && mail.V != "":
		if len(mail.V) > MaxPastedMail {
			s.adminFail(ctx, &engine.Error{Kind: engine.KindInvalid, Field: "mail", Message: "mail is at most 1 MiB"})
			return
		}
		if m, err = ReadPasted(mail.V); err != nil {
			s.adminFail(ctx, err)
			return
		}
	default:
		s.adminFail(ctx, &engine.Error{Kind: engine.KindInvalid, Field: "unparsedId", Message: "unparsedId or mail is required"})
		return
	}
	rd, err := mailrules.Try(r, m)
	if err != nil {
		s.adminFail(ctx, ruleProblem(err))
		return
	}
	adminData(ctx, fasthttp.StatusOK, TryAnswer(rd))
}

// rawFail answers a raw message that cannot be had.
func (s *Server) rawFail(ctx *fasthttp.RequestCtx, err error) {
	if errors.Is(err, mailstore.ErrNotFound) {
		adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "The raw e-mail is no longer kept")
		return
	}
	s.adminFail(ctx, err)
}

// rereadAnswer is what a re-read of the mails a rule matches answers.
type rereadAnswer struct {
	Reread        []reparseAnswer `json:"reread"`
	StillUnparsed []stillUnparsed `json:"stillUnparsed"`
}

type stillUnparsed struct {
	UnparsedID string `json:"unparsedId"`
	Reason     string `json:"reason"`
}

// adminRereadRule reads again every unparsed e-mail the saved rule
// matches, with the workspace's rules in their order.
func (s *Server) adminRereadRule(ctx *fasthttp.RequestCtx) {
	if s.rules.Reread == nil {
		adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "Report e-mails are not kept by this server")
		return
	}
	wsID := pathParam(ctx, "wid")
	v, err := s.eng.GetParseRule(wsID, pathParam(ctx, "rid"))
	if err != nil {
		s.adminFail(ctx, err)
		return
	}
	list, err := s.rules.Reread(wsID, string(v.Rule))
	if err != nil {
		s.adminFail(ctx, err)
		return
	}
	adminData(ctx, fasthttp.StatusOK, RereadAnswer(list))
}

// RereadAnswer is the admin API's (and the dashboard's) account of a
// re-read.
func RereadAnswer(list []smtpin.Reread) any {
	ans := rereadAnswer{Reread: []reparseAnswer{}, StillUnparsed: []stillUnparsed{}}
	for _, r := range list {
		if r.Reason != "" {
			ans.StillUnparsed = append(ans.StillUnparsed, stillUnparsed{UnparsedID: r.UnparsedID, Reason: r.Reason})
			continue
		}
		ans.Reread = append(ans.Reread, reparseAnswerOf(r.UnparsedID, r.Reply))
	}
	return ans
}
