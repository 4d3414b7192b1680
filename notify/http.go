package notify

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"backupmon/engine"
	"backupmon/jsonx"
)

// maxResponseRead is how much of a receiver's answer is read (and
// discarded) so that the connection can be reused.
const maxResponseRead = 64 << 10

// Webhook headers.
const (
	HeaderSignature = "X-Backupmon-Signature"
	HeaderEvent     = "X-Backupmon-Event"
	HeaderDelivery  = "X-Backupmon-Delivery"
)

// WebhookBody returns the exact bytes a webhook channel receives for nt
// sent at sentAt:
//
//	{"event":<event>,"sentAt":<timestamp>,"workspaceId":<uuid>,"alert":<alert>,"job":<job>}
//
// without spaces, where sentAt is YYYY-MM-DDTHH:MM:SS.mmmZ (UTC), and alert
// and job are nt.Alert and nt.Job as they are (null when empty). It returns
// an error when Alert or Job is not valid JSON.
func WebhookBody(nt engine.Notice, sentAt time.Time) ([]byte, error) {
	alert, err := rawJSON("alert", nt.Alert)
	if err != nil {
		return nil, err
	}
	job, err := rawJSON("job", nt.Job)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 96+len(nt.Event)+len(alert)+len(job))
	b = append(b, `{"event":`...)
	b = jsonx.AppendString(b, nt.Event)
	b = append(b, `,"sentAt":`...)
	b = jsonx.AppendTime(b, sentAt.UnixMilli())
	b = append(b, `,"workspaceId":"`...)
	b = nt.Workspace.AppendTo(b)
	b = append(b, `","alert":`...)
	b = append(b, alert...)
	b = append(b, `,"job":`...)
	b = append(b, job...)
	return append(b, '}'), nil
}

func rawJSON(name string, v []byte) ([]byte, error) {
	if len(bytes.TrimSpace(v)) == 0 {
		return []byte("null"), nil
	}
	if !jsonx.Valid(v) {
		return nil, fmt.Errorf("invalid notice: %s is not valid JSON", name)
	}
	return v, nil
}

// Signature returns the X-Backupmon-Signature value of body under secret:
// "sha256=" and the lowercase hex HMAC-SHA256 of body keyed with secret.
func Signature(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// SlackBody returns the JSON a Slack channel receives for nt: {"text":"..."},
// the message of a Slack incoming webhook.
func SlackBody(nt engine.Notice) []byte {
	b := append([]byte(nil), `{"text":`...)
	b = jsonx.AppendString(b, slackText(nt))
	return append(b, '}')
}

func (n *Notifier) sendWebhook(ctx context.Context, nt engine.Notice) error {
	body, err := WebhookBody(nt, n.now())
	if err != nil {
		return err
	}
	return n.post(ctx, nt.Channel.URL, body, func(h http.Header) {
		h.Set(HeaderSignature, Signature(nt.Channel.Secret, body))
		h.Set(HeaderEvent, nt.Event)
		h.Set(HeaderDelivery, nt.Delivery.String())
	})
}

func (n *Notifier) sendSlack(ctx context.Context, nt engine.Notice) error {
	return n.post(ctx, nt.Channel.URL, SlackBody(nt), func(h http.Header) { h.Set(HeaderDelivery, nt.Delivery.String()) })
}

// post sends body to rawURL as JSON and returns nil for a 2xx answer, else
// the failure. Its errors never contain the URL, which may hold a secret
// (a Slack webhook's URL is its credential).
func (n *Notifier) post(ctx context.Context, rawURL string, body []byte, headers func(http.Header)) error {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errors.New("invalid channel URL (want an absolute http or https URL)")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return errors.New("invalid channel URL")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "backupmon")
	if headers != nil {
		headers(req.Header)
	}
	resp, err := n.http.Do(req)
	if err != nil {
		var refused *RefusedError
		if errors.As(err, &refused) {
			return refused // without `dial tcp <address>: ` before it
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop `Post "<url>": `
		}
		return err
	}
	// The answer's body is not used; reading a bounded part of it lets the
	// connection be reused. A failure to read it does not change the outcome.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseRead))
	_ = resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("HTTP %d", resp.StatusCode)
	}
	return nil
}
