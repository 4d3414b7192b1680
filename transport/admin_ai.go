package transport

import (
	"github.com/fasthttp/router"
	"github.com/valyala/fasthttp"

	"backupmon/aiclient"
	"backupmon/engine"
)

// Admin endpoints of the model's suggestions: the workspace's prompt
// (decisions.md, suggestions from a model). Prompts are shown here and in
// the dashboard's settings only, never by the REST API (api.md 1.7).

func (s *Server) aiRoutes(r *router.Router, a func(string, fasthttp.RequestHandler) fasthttp.RequestHandler) {
	const p = "/admin/v1/workspaces/{wid}/ai-prompt"
	r.GET(p, a("ai_prompt_get", s.adminAIPrompt))
	r.PUT(p, a("ai_prompt_set", s.adminSetAIPrompt))
}

// oneMember reads a body of one member, name, with read; on a problem, or
// when the member is absent (must says so), it answers and returns false.
func oneMember[T any](s *Server, ctx *fasthttp.RequestCtx, name string, read func(*fields, string) engine.Opt[T], must string) (engine.Opt[T], bool) {
	f := s.body(ctx, false)
	if f == nil {
		return engine.Opt[T]{}, false
	}
	v := read(f, name)
	err := f.finish()
	if err == nil && !v.Set {
		err = &engine.Error{Kind: engine.KindInvalid, Field: name, Message: must}
	}
	if err != nil {
		s.adminFail(ctx, err)
		return v, false
	}
	return v, true
}

// aiPromptView is the prompt the model is given, and whether it is the
// default.
type aiPromptView struct {
	Prompt  string `json:"prompt"`
	Default bool   `json:"default"`
}

// AIPromptView returns what the admin API and the dashboard show of a
// workspace's prompt ("" : the default).
func AIPromptView(prompt string) any {
	if prompt == "" {
		return aiPromptView{Prompt: aiclient.DefaultPrompt, Default: true}
	}
	return aiPromptView{Prompt: prompt}
}

func (s *Server) adminAIPrompt(ctx *fasthttp.RequestCtx) {
	p, err := s.eng.AIPrompt(pathParam(ctx, "wid"))
	s.answer(ctx, fasthttp.StatusOK, AIPromptView(p), err)
}

// adminSetAIPrompt sets {prompt}; null or "" goes back to the default.
func (s *Server) adminSetAIPrompt(ctx *fasthttp.RequestCtx) {
	p, ok := oneMember(s, ctx, "prompt", (*fields).str, "prompt is required (null for the default)")
	if !ok {
		return
	}
	wsID := pathParam(ctx, "wid")
	if err := s.eng.SetAIPrompt(wsID, p.V); err != nil {
		s.adminFail(ctx, err)
		return
	}
	v, err := s.eng.AIPrompt(wsID)
	s.answer(ctx, fasthttp.StatusOK, AIPromptView(v), err)
}
