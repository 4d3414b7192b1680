package transport

import (
	"context"
	"errors"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/password"
)

// Admin endpoints of dashboard users (decisions.md 11). Passwords are
// hashed here, with the dashboard's bounded hasher; the engine keeps only
// the hash.

func (s *Server) adminCreateUser(ctx *fasthttp.RequestCtx) {
	s.adminUser(ctx, true)
}

func (s *Server) adminUpdateUser(ctx *fasthttp.RequestCtx) {
	s.adminUser(ctx, false)
}

func (s *Server) adminUser(ctx *fasthttp.RequestCtx, creating bool) {
	f := s.body(ctx, !creating)
	if f == nil {
		return
	}
	in := engine.UserInput{Email: f.str("email"), Name: f.str("name"), Role: f.str("role")}
	pw := f.str("password")
	if !s.finish(ctx, f) {
		return
	}
	if pw.Set {
		if pw.Null {
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", "password must be a string")
			return
		}
		if msg := password.Validate(pw.V); msg != "" {
			adminError(ctx, fasthttp.StatusBadRequest, "INVALID_REQUEST", msg)
			return
		}
		// Everything a hash is not needed for first: an unknown workspace
		// or user, a bad field or a taken e-mail address costs no hash.
		uid := ""
		if !creating {
			uid = pathParam(ctx, "uid")
		}
		if err := s.eng.CheckUser(pathParam(ctx, "wid"), uid, in); err != nil {
			s.adminFail(ctx, err)
			return
		}
		h, err := s.hasher.Hash(context.Background(), pw.V)
		if err != nil {
			if errors.Is(err, password.ErrBusy) {
				ctx.Response.Header.Set("Retry-After", "1")
				adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", "Too many password hashes at once; retry")
				return
			}
			s.adminFail(ctx, err)
			return
		}
		in.Hash = engine.Some(h)
	}
	if creating {
		v, err := s.eng.CreateUser(pathParam(ctx, "wid"), in)
		s.answer(ctx, fasthttp.StatusCreated, v, err)
		return
	}
	v, err := s.eng.UpdateUser(pathParam(ctx, "wid"), pathParam(ctx, "uid"), in)
	s.answer(ctx, fasthttp.StatusOK, v, err)
}
