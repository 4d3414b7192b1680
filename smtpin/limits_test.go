package smtpin

import (
	"io"
	"strings"
	"testing"
	"time"

	"backupmon/internal/loopback"
)

// rawSession is a raw SMTP client from a chosen loopback address.
type rawSession struct{ *loopback.Conn }

func dialFrom(t *testing.T, src, addr string) *rawSession {
	return &rawSession{loopback.Dial(t, src, addr, 20*time.Second)}
}

// line reads one answer line.
func (s *rawSession) line(t *testing.T) string {
	t.Helper()
	l, err := s.R.ReadString('\n')
	if err != nil {
		t.Fatalf("reading an answer: %q %v", l, err)
	}
	return l
}

// cmd sends a command and returns its answer's last line.
func (s *rawSession) cmd(t *testing.T, c string) string {
	t.Helper()
	if _, err := io.WriteString(s, c+"\r\n"); err != nil {
		t.Fatal(err)
	}
	for {
		l := s.line(t)
		if len(l) < 4 || l[3] != '-' {
			return l
		}
	}
}

// rest returns everything up to the server's close.
func (s *rawSession) rest(t *testing.T) string {
	t.Helper()
	b, err := io.ReadAll(s.R)
	if err != nil {
		t.Fatalf("reading to the close: %v (read %q)", err, b)
	}
	return string(b)
}

const tooMany = "421 4.7.0 Too many connections, try again later\r\n"

// Sessions past the per-address limit, then past the total, are answered
// 421 4.7.0 at once and closed, instead of waiting in the backlog; other
// addresses are served meanwhile, and a closed session's place comes back.
func TestSessionLimits(t *testing.T) {
	f := startOpts(t, fixtureOpts{config: func(c *Config) { c.MaxSessions, c.MaxSessionsPerAddress = 4, 2 }})
	greeted := func(src string) *rawSession {
		s := dialFrom(t, src, f.addr)
		if g := s.line(t); !strings.HasPrefix(g, "220 ") {
			t.Fatalf("greeting from %s: %q", src, g)
		}
		return s
	}
	refused := func(src string) {
		start := time.Now()
		if got := dialFrom(t, src, f.addr).rest(t); got != tooMany {
			t.Fatalf("from %s: %q, want %q", src, got, tooMany)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("refused after %v", d)
		}
	}
	first := greeted("127.0.0.1")
	greeted("127.0.0.1")
	refused("127.0.0.1")
	greeted("127.0.0.2")
	greeted("127.0.0.2")
	refused("127.0.0.3") // the total
	first.cmd(t, "QUIT")
	first.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := dialFrom(t, "127.0.0.3", f.addr)
		if g := s.line(t); strings.HasPrefix(g, "220 ") {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("after a session ended: %q", g)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A session ends SessionLifetime after it began however busy it is: a
// client sending NOOP more often than the idle timeout, and one sending a
// message's data slowly, are told 421 4.4.2 and disconnected; the slow
// message is not recorded.
func TestSessionLifetime(t *testing.T) {
	const lifetime = 800 * time.Millisecond
	f := startOpts(t, fixtureOpts{config: func(c *Config) { c.SessionLifetime, c.Timeout = lifetime, 10*time.Second }})
	j := f.job("j", "generic")
	const bye = "421 4.4.2 Session time limit reached, closing connection\r\n"
	t.Run("NOOP", func(t *testing.T) {
		start := time.Now() // before the dial: the server's clock starts at its accept
		s := dialFrom(t, "127.0.0.1", f.addr)
		s.line(t)
		for time.Since(start) < 5*lifetime {
			io.WriteString(s, "NOOP\r\n")
			l, err := s.R.ReadString('\n')
			if err != nil || l != "250 2.0.0 I have successfully done nothing\r\n" {
				if l+s.rest(t) != bye {
					t.Fatalf("at the end: %q %v, want %q", l, err, bye)
				}
				if d := time.Since(start); d < lifetime || d > lifetime+time.Second {
					t.Errorf("ended after %v, want %v", d, lifetime)
				}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		t.Fatalf("still in session after %v of NOOPs", time.Since(start))
	})
	t.Run("slow data", func(t *testing.T) {
		start := time.Now() // before the dial: the server's clock starts at its accept
		s := dialFrom(t, "127.0.0.1", f.addr)
		s.line(t)
		s.cmd(t, "EHLO h.example")
		s.cmd(t, "MAIL FROM:<cron@h.example>")
		s.cmd(t, "RCPT TO:<"+j.IngestAddress+">")
		if a := s.cmd(t, "DATA"); !strings.HasPrefix(a, "354 ") {
			t.Fatalf("DATA: %q", a)
		}
		mail := strings.SplitAfter(string(generic("slow", "OK", "-")), "\n")
		go func() {
			for i := 0; ; i++ {
				if _, err := io.WriteString(s, mail[i%len(mail)]); err != nil {
					return
				}
				time.Sleep(50 * time.Millisecond)
			}
		}()
		if got := s.rest(t); got != bye {
			t.Fatalf("answers: %q, want %q", got, bye)
		}
		if d := time.Since(start); d < lifetime || d > lifetime+time.Second {
			t.Errorf("ended after %v, want %v", d, lifetime)
		}
		if h := f.view(j.ID).History; len(h) != 0 {
			t.Errorf("the cut message was recorded: %+v", h)
		}
	})
}
