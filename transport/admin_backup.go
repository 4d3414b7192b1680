package transport

import (
	"bufio"
	"bytes"
	"io"
	"time"

	"github.com/valyala/fasthttp"
)

// backupPath is the admin endpoint that streams a backup (docs/decisions.md,
// "Backups"). On a cluster node the front answers it itself, gathering
// every shard's workspaces (Config.Backup).
const backupPath = "/admin/v1/backup"

// backupWriteTimeout bounds the writing of a backup's answer, in place of
// the listener's 15 s: a large state takes minutes to send.
const backupWriteTimeout = time.Hour

// adminHeaderReceived is the admin listener's HeaderReceived hook: a
// backup's answer may take up to backupWriteTimeout to write, every other
// answer the listener's limit.
func adminHeaderReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	uri := h.RequestURI()
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if string(uri) == backupPath {
		return fasthttp.RequestConfig{WriteTimeout: backupWriteTimeout}
	}
	return fasthttp.RequestConfig{}
}

// adminBackup answers GET /admin/v1/backup with a backup file of every
// workspace (engine.Backup's format), streamed as it is written. The status
// is sent before the file: a backup that fails on the way ends without its
// trailer, which every reader of the format refuses as cut short, and the
// failure is logged.
func (s *Server) adminBackup(ctx *fasthttp.RequestCtx) {
	var write func(w io.Writer) error
	if s.backup != nil {
		w, err := s.backup()
		if err != nil {
			s.log.Warn("backup refused", "err", err)
			s.metrics.ObserveBackup("refused", 0, time.Now())
			ctx.Response.Header.Set("Retry-After", "30")
			adminError(ctx, fasthttp.StatusServiceUnavailable, "UNAVAILABLE", err.Error())
			return
		}
		write = w
	} else {
		eng := s.eng
		write = func(w io.Writer) error { _, err := eng.Backup(w); return err }
	}
	log, metrics := s.log, s.metrics
	ctx.SetStatusCode(fasthttp.StatusOK)
	ctx.Response.Header.SetContentType("application/octet-stream")
	ctx.Response.Header.Set("Content-Disposition", `attachment; filename="backupmon.backup"`)
	ctx.Response.Header.Set("Cache-Control", "no-store")
	ctx.SetBodyStreamWriter(func(w *bufio.Writer) {
		start := time.Now()
		cw := &countWriter{w: w}
		err := write(cw)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			log.Error("backup cut short: the file sent ends without its trailer", "err", err, "bytes", cw.n)
			metrics.ObserveBackup("cut_short", cw.n, time.Now())
			return
		}
		log.Info("backup sent", "bytes", cw.n, "elapsed", time.Since(start).Round(time.Millisecond))
		metrics.ObserveBackup("sent", cw.n, time.Now())
	})
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
