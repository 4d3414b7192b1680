package transport

import (
	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/jsonx"
)

// The admin endpoints of the channels of issue 23: a PSA channel's client
// mappings, and the test of any channel (decisions.md 7).

// stringMap reads member n as an object of strings (nil when absent or
// null).
func (f *fields) stringMap(n string) map[string]string {
	raw, null, ok := f.raw(n)
	if !ok || null {
		return nil
	}
	var m map[string]string
	if raw[0] != '{' || jsonx.Unmarshal(raw, &m) != nil {
		f.fail(f.name(n), "%s must be an object of strings", f.name(n))
		return nil
	}
	if m == nil {
		m = map[string]string{}
	}
	return m
}

func clientMapInput(f *fields) engine.ClientMapInput {
	return engine.ClientMapInput{Company: f.str("company"), Board: f.str("board"), TicketType: f.str("ticketType")}
}

// adminMapClient answers PUT .../channels/{chid}/clients/{cid}: 200 and
// the mapping.
func (s *Server) adminMapClient(ctx *fasthttp.RequestCtx) {
	adminWrite(s, fasthttp.StatusOK, clientMapInput, func(ctx *fasthttp.RequestCtx, in engine.ClientMapInput) (engine.ClientMapView, error) {
		return s.eng.MapClient(pathParam(ctx, "wid"), pathParam(ctx, "chid"), pathParam(ctx, "cid"), in)
	})(ctx)
}

// adminUnmapClient answers DELETE .../channels/{chid}/clients/{cid}: 204.
func (s *Server) adminUnmapClient(ctx *fasthttp.RequestCtx) {
	s.answer(ctx, fasthttp.StatusNoContent, nil, s.eng.UnmapClient(pathParam(ctx, "wid"), pathParam(ctx, "chid"), pathParam(ctx, "cid")))
}

// ChannelTestResult is what a channel's test answers: whether the remote
// took it, and what it said.
type ChannelTestResult struct {
	OK     bool   `json:"ok"`
	Answer string `json:"answer"`
}

// adminTestChannel answers POST .../channels/{chid}/test: 200 and what the
// remote answered (ok false when it refused or could not be reached), or
// 404 for an unknown channel.
func (s *Server) adminTestChannel(ctx *fasthttp.RequestCtx) {
	n, err := s.eng.ChannelTestNotice(pathParam(ctx, "wid"), pathParam(ctx, "chid"))
	if err != nil || s.testChannel == nil {
		if err == nil {
			err = &engine.Error{Kind: engine.KindConflict, Message: "channel tests are not available on this server"}
		}
		s.answer(ctx, fasthttp.StatusOK, nil, err)
		return
	}
	ok, answer := s.testChannel(n)
	s.answer(ctx, fasthttp.StatusOK, ChannelTestResult{OK: ok, Answer: answer}, nil)
}
