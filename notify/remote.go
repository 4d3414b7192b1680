package notify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"backupmon/jsonx"
)

// The JSON APIs of the PSAs and PagerDuty: one request, its answer, and
// the remote's error turned into a failure that says whether a retry can
// help.

// RemoteError is a remote API's refusal: its HTTP status and the message
// its error body gives.
type RemoteError struct {
	Status  int
	Message string
}

func (e *RemoteError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message)
}

// Permanent reports whether no retry of the same request can succeed: a
// 4xx answer other than 408 (timeout), 409 (conflict), 425 (too early)
// and 429 (rate limited), such as bad credentials (401, 403), an unknown
// company or field (400, 404, 422).
func (e *RemoteError) Permanent() bool {
	switch e.Status {
	case http.StatusRequestTimeout, http.StatusConflict, http.StatusTooEarly, http.StatusTooManyRequests:
		return false
	}
	return e.Status >= 400 && e.Status < 500
}

// isPermanent reports whether err is a RemoteError that no retry can mend.
func isPermanent(err error) bool {
	var re *RemoteError
	return errors.As(err, &re) && re.Permanent()
}

// apiRequest is one call of a remote JSON API.
type apiRequest struct {
	method, url string
	header      http.Header
	body        []byte // JSON, or a form when form is set
	form        bool
}

// call makes req and returns the answer's body for a 2xx status; any
// other status is a *RemoteError whose message messageOf reads from the
// body (the API's own error shape). Its errors never contain the URL or
// a header: both may hold credentials.
func (n *Notifier) call(ctx context.Context, req apiRequest, messageOf func([]byte) string) ([]byte, error) {
	u, err := url.Parse(req.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("invalid API URL (want an absolute http or https URL)")
	}
	var body io.Reader
	if req.body != nil {
		body = bytes.NewReader(req.body)
	}
	hr, err := http.NewRequestWithContext(ctx, req.method, req.url, body)
	if err != nil {
		return nil, errors.New("invalid API URL")
	}
	for k, v := range req.header {
		hr.Header[k] = v
	}
	hr.Header.Set("Accept", "application/json")
	hr.Header.Set("User-Agent", "backupmon")
	if req.body != nil {
		if req.form {
			hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			hr.Header.Set("Content-Type", "application/json")
		}
	}
	resp, err := n.http.Do(hr)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return nil, refused
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop `Post "<url>": `
		}
		return nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseRead))
	if err != nil {
		return nil, &stepError{step: "reading the answer", err: err}
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := ""
		if messageOf != nil {
			msg = messageOf(answer)
		}
		if msg == "" {
			msg = plainMessage(answer)
		}
		return nil, &RemoteError{Status: resp.StatusCode, Message: oneLine(msg)}
	}
	return answer, nil
}

// plainMessage is an error body that is short text, not JSON or HTML, or
// "".
func plainMessage(b []byte) string {
	s := strings.TrimSpace(string(b))
	if s == "" || len(s) > 300 || strings.HasPrefix(s, "<") || strings.HasPrefix(s, "{") || strings.HasPrefix(s, "[") {
		return ""
	}
	return s
}

// jsonMessage reads the first of keys that holds a string in a JSON
// object body, or "".
func jsonMessage(b []byte, keys ...string) string {
	var m map[string]jsonx.RawMessage
	if jsonx.Unmarshal(b, &m) != nil {
		return ""
	}
	for _, k := range keys {
		var s string
		if raw, ok := m[k]; ok && jsonx.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// jsonBody encodes v, which is made of maps, slices and strings only and
// so cannot fail to encode.
func jsonBody(v any) []byte {
	b, err := jsonx.Marshal(v)
	if err != nil {
		panic("notify: encode a request body: " + err.Error())
	}
	return b
}

// withPermanence turns err into the outcome's failure text and whether it
// is for good.
func (n *Notifier) outcomeOf(err error) (failure string, permanent bool) {
	if err == nil {
		return "", false
	}
	return n.failure(err), isPermanent(err)
}
