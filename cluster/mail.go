package cluster

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"backupmon/engine"
	"backupmon/jsonx"
	"backupmon/mailstore"
)

// The SMTP listener of a cluster node: the node is its Ingest (each
// ingest token names its shard, served here or forwarded to its owner
// over NATS), and MailStore keeps unreadable e-mails in the cluster's
// object store, where the shard's next owner finds them.

// mailCall is an e-mail's question or record forwarded to a shard's owner.
type mailCall struct {
	Op    string            `json:"op"` // "rcpt" or "mail"
	Token string            `json:"token"`
	In    *engine.MailInput `json:"in,omitempty"`
}

// MailRecipient checks a recipient at its shard; MailUnknownRecipient for
// a token that names no shard, MailNotRecorded (451, try later) when the
// shard has no owner now.
func (n *Node) MailRecipient(token string) engine.MailReply {
	return n.mail(mailCall{Op: "rcpt", Token: token})
}

// Mail records an e-mail for one recipient at its shard, as
// engine.Engine.Mail does.
func (n *Node) Mail(token string, in *engine.MailInput) engine.MailReply {
	return n.mail(mailCall{Op: "mail", Token: token, In: in})
}

func (n *Node) mail(c mailCall) engine.MailReply {
	shard, ok := n.dir.tokenShard(c.Token) // an address made before the cluster
	if !ok {
		shard, ok = TokenShard(c.Token, n.shards)
	}
	if !ok {
		return engine.MailReply{Outcome: engine.MailUnknownRecipient}
	}
	if h := n.local(shard); h != nil {
		return answerMail(h.eng, c)
	}
	if !n.nc.IsConnected() {
		return engine.MailReply{Outcome: engine.MailNotRecorded}
	}
	data, err := jsonx.Marshal(c)
	if err != nil {
		return engine.MailReply{Outcome: engine.MailNotRecorded}
	}
	start := time.Now()
	msg, err := n.nc.Request(subject("mail", shard), data, forwardTimeout)
	var reply engine.MailReply
	if err != nil || bytes.Equal(msg.Data, notServing) || jsonx.Unmarshal(msg.Data, &reply) != nil {
		n.cfg.Metrics.forwarded("no_owner", "nats", time.Since(start))
		return engine.MailReply{Outcome: engine.MailNotRecorded}
	}
	n.cfg.Metrics.forwarded("ok", "nats", time.Since(start))
	return reply
}

func answerMail(eng *engine.Engine, c mailCall) engine.MailReply {
	if c.Op == "mail" && c.In != nil {
		return eng.Mail(c.Token, c.In)
	}
	return eng.MailRecipient(c.Token)
}

// onMail answers an e-mail's call forwarded to a shard this node owns.
func (n *Node) onMail(h *hosted, m *nats.Msg) {
	var c mailCall
	if !h.serving.Load() || jsonx.Unmarshal(m.Data, &c) != nil {
		m.Respond(notServing)
		return
	}
	data, err := jsonx.Marshal(answerMail(h.eng, c))
	if err != nil {
		m.Respond(notServing)
		return
	}
	m.Respond(data)
}

// MailStore keeps the raw messages of unreadable e-mails in the cluster's
// object store (three copies, as the shards' logs): any node's listener
// puts one, the owner of its shard reads it again at a re-parse.
type MailStore struct {
	store *objects
}

// MailStore returns the cluster's store of raw e-mails.
func (n *Node) MailStore() *MailStore { return &MailStore{store: n.mailObjects} }

// Put keeps raw and returns its reference (32 random hex characters, as the
// single node's mail store makes them); an error when the object store did
// not acknowledge it.
func (s *MailStore) Put(raw []byte) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	ref := hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := s.store.PutBytes(ctx, ref, raw); err != nil {
		return "", fmt.Errorf("keep e-mail %s: %w", ref, err)
	}
	return ref, nil
}

// Get returns the message ref names, mailstore.ErrNotFound (as the single
// node's store) when there is none.
func (s *MailStore) Get(ref string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := s.store.GetBytes(ctx, ref)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil, mailstore.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read kept e-mail %s: %w", ref, err)
	}
	return b, nil
}

// Remove deletes the messages refs name; missing ones are skipped. It
// returns the first other error.
func (s *MailStore) Remove(refs []string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var first error
	for _, ref := range refs {
		if err := s.store.Delete(ctx, ref); err != nil && !errors.Is(err, jetstream.ErrObjectNotFound) && first == nil {
			first = fmt.Errorf("delete kept e-mail %s: %w", ref, err)
		}
	}
	return first
}
