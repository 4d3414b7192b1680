package clustertls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"sync/atomic"
	"time"
)

// Member is one member's certificate of the cluster's TLS, with the
// authority that checks the other end. Its certificate can be read again
// from its files (Reload) while connections use it: each new handshake
// takes the current one.
type Member struct {
	files Files
	pool  *x509.CertPool
	cert  atomic.Pointer[tls.Certificate]
}

// Open reads a member's files and returns the member. It returns an error
// naming the file when one is missing or unreadable, the key is not the
// certificate's, or the certificate is not the authority's or not valid
// at now.
func Open(f Files, now time.Time) (*Member, error) {
	if f.CA == "" || f.Cert == "" || f.Key == "" {
		return nil, errors.New("the cluster's TLS takes three files: the authority (ca.pem), the member's certificate and its key")
	}
	cas, err := readCertificates(f.CA)
	if err != nil {
		return nil, err
	}
	m := &Member{files: f, pool: x509.NewCertPool()}
	for _, c := range cas {
		if !c.IsCA {
			return nil, fmt.Errorf("%s holds %q, which is not an authority", f.CA, c.Subject.CommonName)
		}
		m.pool.AddCert(c)
	}
	if err := m.Reload(now); err != nil {
		return nil, err
	}
	return m, nil
}

// Reload reads the member's certificate and key again (the authority
// stays the one Open read) and makes them the ones new handshakes
// present. On an error (the same as Open's) the previous certificate
// stays.
func (m *Member) Reload(now time.Time) error {
	pair, err := tls.LoadX509KeyPair(m.files.Cert, m.files.Key) // fills pair.Leaf
	if err != nil {
		return fmt.Errorf("read %s and %s: %w", m.files.Cert, m.files.Key, err)
	}
	if _, err := pair.Leaf.Verify(x509.VerifyOptions{Roots: m.pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		return fmt.Errorf("%s is not a member certificate of the authority in %s at %s: %w", m.files.Cert, m.files.CA, now.UTC().Format(time.RFC3339), err)
	}
	m.cert.Store(&pair)
	return nil
}

// Config returns the TLS configuration of both ends of the member's
// connections: it presents the member's current certificate, and takes
// from the other end only a certificate the cluster's authority signed
// (TLS 1.3). A nil member's is nil: connections in clear.
func (m *Member) Config() *tls.Config {
	if m == nil {
		return nil
	}
	current := func() *tls.Certificate { return m.cert.Load() }
	return &tls.Config{
		MinVersion:           tls.VersionTLS13,
		GetCertificate:       func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return current(), nil },
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return current(), nil },
		RootCAs:              m.pool,
		ClientCAs:            m.pool,
		ClientAuth:           tls.RequireAndVerifyClientCert,
	}
}

// Certificate returns the member's current certificate.
func (m *Member) Certificate() *x509.Certificate { return m.cert.Load().Leaf }

// Load opens a member's files and returns its Config; the errors are
// Open's.
func Load(f Files, now time.Time) (*tls.Config, error) {
	m, err := Open(f, now)
	if err != nil {
		return nil, err
	}
	return m.Config(), nil
}

// Dialling returns a copy of c for a connection dialled to addr
// (host:port, or a host): it checks that the other end's certificate
// names that host.
func Dialling(c *tls.Config, addr string) *tls.Config {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	d := c.Clone()
	d.ServerName = host
	return d
}

// readCertificates returns the certificates of the PEM file at path, or an
// error when it cannot be read or holds none.
func readCertificates(path string) ([]*x509.Certificate, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var certs []*x509.Certificate
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return certs, nil
}
