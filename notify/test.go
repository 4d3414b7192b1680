package notify

import (
	"context"
	"net/http"

	"backupmon/engine"
	"backupmon/state"
)

// A channel's test: one notice made up for it, sent at once (not through
// the outbox), and what the remote answered.

// TestResult is what a channel's test came to: OK when the remote took it,
// and Answer, what it answered (or why it failed), on one line.
type TestResult struct {
	OK     bool   `json:"ok"`
	Answer string `json:"answer"`
}

// Test sends channel nt.Channel a test now and returns the remote's
// answer. It does not go through the queue or the outbox, and is bounded
// by Options.Timeout (twice over for a PSA, whose test makes two calls).
// A PagerDuty test triggers an alert of its own and resolves it at once;
// a PSA test checks the credentials and reads the default company
// without making a ticket.
func (n *Notifier) Test(nt engine.Notice) (res TestResult) {
	defer func() {
		if p := recover(); p != nil {
			res = TestResult{Answer: cleanFailure("internal error")}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 2*n.timeout)
	defer cancel()
	nt.Event = engine.EventTest
	answer, err := n.test(ctx, nt)
	if err != nil {
		return TestResult{Answer: n.failure(err)}
	}
	if answer == "" {
		answer = "accepted"
	}
	return TestResult{OK: true, Answer: cleanFailure(answer)}
}

func (n *Notifier) test(ctx context.Context, nt engine.Notice) (string, error) {
	switch nt.Channel.Type {
	case engine.ChannelWebhook:
		body, err := WebhookBody(nt, n.now())
		if err != nil {
			return "", err
		}
		h := http.Header{HeaderSignature: {Signature(nt.Channel.Secret, body)}, HeaderEvent: {nt.Event}, HeaderDelivery: {nt.Delivery.String()}}
		return n.answer(n.call(ctx, apiRequest{method: http.MethodPost, url: nt.Channel.URL, header: h, body: body}, anyMessage))
	case engine.ChannelSlack:
		return n.answer(n.call(ctx, apiRequest{method: http.MethodPost, url: nt.Channel.URL, body: SlackBody(nt)}, anyMessage))
	case state.ChannelTeams:
		return n.answer(n.call(ctx, apiRequest{method: http.MethodPost, url: secretOf(nt.Channel, "url"), body: TeamsBody(nt, n.dashboard)}, teamsMessage))
	case engine.ChannelEmail:
		if err := n.sendEmail(ctx, nt); err != nil {
			return "", err
		}
		return "the SMTP relay accepted the message to " + nt.Channel.To, nil
	case state.ChannelPagerDuty:
		key := "backupmon-test-" + nt.Delivery.String()
		msg, err := n.sendPagerDuty(ctx, nt, key)
		if err != nil {
			return "", err
		}
		nt.Event = engine.EventResolved
		if _, err := n.sendPagerDuty(ctx, nt, key); err != nil {
			return "", &stepError{step: "resolving the test alert", err: err}
		}
		return "trigger and resolve: " + msg, nil
	}
	if p := n.psaFor(nt); p != nil {
		return p.test(ctx)
	}
	return "", &RemoteError{Status: http.StatusBadRequest, Message: "unknown channel type " + nt.Channel.Type}
}

// answer is a 2xx answer's body as a short line ("" when it is none).
func (n *Notifier) answer(body []byte, err error) (string, error) {
	if err != nil {
		return "", err
	}
	return plainMessage(body), nil
}

// anyMessage reads the message of a receiver's JSON error body in the
// shapes most common ({"message"}, {"error": "..."}, {"error":
// {"message"}}), or "".
func anyMessage(b []byte) string {
	if m := jsonMessage(b, "message", "error_description", "error"); m != "" {
		return m
	}
	return teamsMessage(b)
}
