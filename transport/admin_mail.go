package transport

import (
	"errors"

	"github.com/valyala/fasthttp"

	"backupmon/engine"
	"backupmon/mailparse"
	"backupmon/mailstore"
)

// Admin endpoints of report e-mails (decisions.md 10).

// reparseAnswer is what a successful re-read answers: the report it became,
// in the Report API's terms.
type reparseAnswer struct {
	UnparsedID string  `json:"unparsedId"`
	Status     string  `json:"status"`
	ResultID   *string `json:"resultId"`
	AlertID    *string `json:"alertId"`
	Duplicate  bool    `json:"duplicate"`
	Superseded bool    `json:"superseded"`
}

// adminReparse reads an unparsed e-mail again with its job's parser. Still
// unreadable: 409 with the reason, and the entry stays.
func (s *Server) adminReparse(ctx *fasthttp.RequestCtx) {
	if s.reparse == nil {
		adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "Report e-mails are not kept by this server")
		return
	}
	id := pathParam(ctx, "uid")
	r, err := s.reparse(pathParam(ctx, "wid"), id)
	var ue *mailparse.UnreadableError
	switch {
	case errors.As(err, &ue):
		adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "The e-mail still cannot be read: "+ue.Reason)
		return
	case errors.Is(err, mailstore.ErrNotFound):
		adminError(ctx, fasthttp.StatusConflict, "CONFLICT", "The raw e-mail is no longer kept")
		return
	case err != nil:
		s.adminFail(ctx, err)
		return
	}
	adminData(ctx, fasthttp.StatusOK, reparseAnswerOf(id, r))
}

// reparseAnswerOf is the answer of unparsed e-mail id's re-read.
func reparseAnswerOf(id string, r engine.MailReply) reparseAnswer {
	ans := reparseAnswer{UnparsedID: id, Status: statusWord(r.Status), Duplicate: r.Outcome == engine.MailDuplicate, Superseded: r.Superseded}
	if !r.ResultID.IsZero() {
		v := r.ResultID.String()
		ans.ResultID = &v
	}
	if !r.AlertID.IsZero() {
		v := r.AlertID.String()
		ans.AlertID = &v
	}
	return ans
}

// statusWord is the Report API's word for a report status.
func statusWord(st uint8) string {
	switch st {
	case engine.ReportOK:
		return "ok"
	case engine.ReportWarn:
		return "warn"
	case engine.ReportFailed:
		return "failed"
	}
	return ""
}
