package transport

import (
	"github.com/valyala/fasthttp"

	"backupmon/engine"
)

// The admin endpoints that differ only in the engine call they make are
// built here from that call: each reads the path's workspace id (and the
// thing's id), the body where there is one, and answers through s.answer.
// They take method expressions such as (*engine.Engine).Keys, called on
// s.eng at request time: the routes are built before the engine is
// attached.

// adminRead builds a GET handler that answers 200 with what read returns
// for the path's workspace, or the admin error its failure maps to.
func adminRead[V any](s *Server, read func(e *engine.Engine, wsID string) (V, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		v, err := read(s.eng, pathParam(ctx, "wid"))
		s.answer(ctx, fasthttp.StatusOK, v, err)
	}
}

// adminReadOne builds a handler that answers 200 with what read returns
// for the path's workspace and the thing the path parameter param names.
func adminReadOne[V any](s *Server, param string, read func(e *engine.Engine, wsID, id string) (V, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		v, err := read(s.eng, pathParam(ctx, "wid"), pathParam(ctx, param))
		s.answer(ctx, fasthttp.StatusOK, v, err)
	}
}

// adminRemove builds a DELETE handler that answers 204 once remove has
// removed the thing the path parameter param names, or the admin error
// its failure maps to.
func adminRemove(s *Server, param string, remove func(e *engine.Engine, wsID, id string) error) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		s.answer(ctx, fasthttp.StatusNoContent, nil, remove(s.eng, pathParam(ctx, "wid"), pathParam(ctx, param)))
	}
}

// byAdmin makes a removal that records who made it into one made by the
// admin API, which records no one.
func byAdmin(remove func(e *engine.Engine, wsID, id, actor string) error) func(e *engine.Engine, wsID, id string) error {
	return func(e *engine.Engine, wsID, id string) error { return remove(e, wsID, id, "") }
}

// adminCreate builds a POST handler that reads a JSON object body with
// read and answers 201 with what create makes of it in the path's
// workspace; a problem of the body or of the change gets its admin error.
func adminCreate[In, V any](s *Server, read func(*fields) In, create func(e *engine.Engine, wsID string, in In) (V, error)) fasthttp.RequestHandler {
	return adminWrite(s, fasthttp.StatusCreated, read, func(ctx *fasthttp.RequestCtx, in In) (V, error) {
		return create(s.eng, pathParam(ctx, "wid"), in)
	})
}

// adminUpdate builds a PATCH handler that reads a JSON object body with
// read and answers 200 with the thing the path parameter param names once
// update has changed it; a problem of the body or of the change gets its
// admin error.
func adminUpdate[In, V any](s *Server, param string, read func(*fields) In, update func(e *engine.Engine, wsID, id string, in In) (V, error)) fasthttp.RequestHandler {
	return adminWrite(s, fasthttp.StatusOK, read, func(ctx *fasthttp.RequestCtx, in In) (V, error) {
		return update(s.eng, pathParam(ctx, "wid"), pathParam(ctx, param), in)
	})
}

// adminWrite builds a handler that reads a JSON object body with read,
// answers its first problem, or else answers status with what call returns.
func adminWrite[In, V any](s *Server, status int, read func(*fields) In, call func(ctx *fasthttp.RequestCtx, in In) (V, error)) fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		f := s.body(ctx, false)
		if f == nil {
			return
		}
		in := read(f)
		if !s.finish(ctx, f) {
			return
		}
		v, err := call(ctx, in)
		s.answer(ctx, status, v, err)
	}
}
