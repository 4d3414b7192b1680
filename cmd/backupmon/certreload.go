package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	"backupmon/clustertls"
	"backupmon/transport"

	"github.com/prometheus/client_golang/prometheus"
)

// reloadable is a certificate the process reads again on SIGHUP.
type reloadable struct {
	name     string                    // what it serves, for the log: "TLS", "SMTP TLS", "cluster TLS"
	listener string                    // the same, for /metrics: "public", "smtp", "cluster"
	reload   func(now time.Time) error // reads the files again; on an error the previous one stays
	leaf     func() *x509.Certificate  // the current certificate
}

// certificateExpiry is the /metrics name of when a served certificate
// expires, labelled by listener.
const certificateExpiry = "backupmon_tls_certificate_expiry_timestamp_seconds"

// registerCertificates serves each of certs' expiry on m (its current
// certificate's, so a reload shows).
func registerCertificates(m *transport.Metrics, certs []reloadable) {
	for _, c := range certs {
		m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: certificateExpiry,
			Help:        "When the certificate a listener serves expires (Unix time): public (--tls-cert), smtp (--smtp-tls-cert), cluster (the cluster's TLS).",
			ConstLabels: prometheus.Labels{"listener": c.listener}},
			func() float64 { return float64(c.leaf().NotAfter.Unix()) }))
	}
}

// servedCert is the certificate a listener serves (--tls-cert,
// --smtp-tls-cert): each new handshake takes the current one.
type servedCert struct {
	what, listener, certFile, keyFile string
	cur                               atomic.Pointer[tls.Certificate]
}

// loadServedCert reads the certificate in certFile and its key in keyFile
// for the listener what names (listener on /metrics); nil when certFile
// is empty. The error names what.
func loadServedCert(certFile, keyFile, what, listener string) (*servedCert, error) {
	if certFile == "" {
		return nil, nil
	}
	c := &servedCert{what: what, listener: listener, certFile: certFile, keyFile: keyFile}
	if err := c.reload(time.Time{}); err != nil {
		return nil, err
	}
	return c, nil
}

// reload reads the certificate and its key again; on an error the
// previous certificate stays.
func (c *servedCert) reload(time.Time) error {
	pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile) // fills pair.Leaf
	if err != nil {
		return fmt.Errorf("load %s certificate: %w", c.what, err)
	}
	c.cur.Store(&pair)
	return nil
}

// config is the listener's TLS configuration (TLS 1.2 and later); nil for
// a nil servedCert.
func (c *servedCert) config() *tls.Config {
	if c == nil {
		return nil
	}
	return &tls.Config{MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return c.cur.Load(), nil }}
}

func (c *servedCert) reloadable() reloadable {
	return reloadable{name: c.what, listener: c.listener, reload: c.reload, leaf: func() *x509.Certificate { return c.cur.Load().Leaf }}
}

// memberReloadable is the member certificate of the cluster's TLS.
func memberReloadable(m *clustertls.Member) reloadable {
	return reloadable{name: "cluster TLS", listener: "cluster", reload: m.Reload, leaf: m.Certificate}
}

// certificateWarning is how long before its expiry a certificate is
// logged at warning level.
const certificateWarning = 30 * 24 * time.Hour

// logCertificate logs msg with when leaf expires: once it has, the
// listener or the cluster's connections it serves refuse new handshakes,
// so within certificateWarning of it the line is a warning saying what to
// do.
func logCertificate(log *slog.Logger, msg string, leaf *x509.Certificate) {
	at := leaf.NotAfter
	if left := time.Until(at); left < certificateWarning {
		log.Warn(msg+": the certificate expires soon; put a new one in its files and send this process SIGHUP", "expires", at.UTC().Format(time.RFC3339), "days_left", int(left.Hours()/24))
		return
	}
	log.Info(msg, "certificate_expires", at.UTC().Format(time.RFC3339))
}

// reloadOnHangup reads certs again at each SIGHUP, so that a renewed
// certificate is taken without a restart (connections already open keep
// theirs), and logs each one's outcome; files that do not do are logged
// and the previous certificate stays. Without certs SIGHUP keeps its
// default (it ends the process).
func reloadOnHangup(log *slog.Logger, certs []reloadable) {
	if len(certs) == 0 {
		return
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	go func() {
		for range hup {
			for _, c := range certs {
				if err := c.reload(time.Now()); err != nil {
					log.Error(c.name+" not reloaded: the previous certificate stays", "err", err)
					continue
				}
				logCertificate(log, c.name+" reloaded", c.leaf())
			}
		}
	}()
}
