package testserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Response is an HTTP answer with its whole body, decoded into JSON when the
// Content-Type says it is JSON.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	JSON   map[string]any
}

// Data returns the "data" member of the answer as an object (nil when it is
// not one).
func (r Response) Data() map[string]any {
	d, _ := r.JSON["data"].(map[string]any)
	return d
}

// List returns the "data" member of the answer as a list of objects.
func (r Response) List() []map[string]any {
	return Objects(r.JSON["data"])
}

// Objects returns a JSON list as a list of objects; an item that is not an
// object is nil, and v that is not a list gives an empty list.
func Objects(v any) []map[string]any {
	raw, _ := v.([]any)
	out := make([]map[string]any, len(raw))
	for i, item := range raw {
		out[i], _ = item.(map[string]any)
	}
	return out
}

// Send sends a request with hc and reads the whole answer, decoding a JSON
// body. It touches no testing.T, so it is safe on any goroutine; the error
// is a failed exchange or a JSON answer that is not an object.
func Send(hc *http.Client, method, url string, header map[string]string, body []byte) (Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: read the answer: %w", method, url, err)
	}
	r := Response{Status: resp.StatusCode, Header: resp.Header, Body: b}
	if len(b) > 0 && strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &r.JSON); err != nil {
			return r, fmt.Errorf("%s %s: answer is not a JSON object: %v: %s", method, url, err, b)
		}
	}
	return r, nil
}

// Call sends a request to url with key as a bearer token (none when "")
// and body as JSON (see Client.Admin; a Content-Type only with a body),
// without touching a testing.T.
func Call(hc *http.Client, method, url, key string, body any) (Response, error) {
	b, err := jsonBody(body)
	if err != nil {
		return Response{}, fmt.Errorf("%s %s: %w", method, url, err)
	}
	h := Bearer(key)
	if b != nil {
		h["Content-Type"] = "application/json"
	}
	return Send(hc, method, url, h, b)
}

// Bearer is the Authorization header of a key or token; "" sends none.
func Bearer(key string) map[string]string {
	if key == "" {
		return map[string]string{}
	}
	return map[string]string{"Authorization": "Bearer " + key}
}

// jsonBody returns body as request bytes: nil stays nil, []byte and string
// are sent as they are, anything else is marshalled.
func jsonBody(body any) ([]byte, error) {
	switch v := body.(type) {
	case nil:
		return nil, nil
	case []byte:
		return v, nil
	case string:
		return []byte(v), nil
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("marshal the request body: %w", err)
		}
		return b, nil
	}
}
