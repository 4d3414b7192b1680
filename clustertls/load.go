package clustertls

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"time"
)

// Load reads a member's files and returns the TLS configuration of both
// ends of its connections: it presents the member's certificate, and takes
// from the other end only a certificate the cluster's authority signed
// (TLS 1.3). It returns an error naming the file when one is missing or
// unreadable, the key is not the certificate's, or the certificate is not
// the authority's or not valid at now.
func Load(f Files, now time.Time) (*tls.Config, error) {
	if f.CA == "" || f.Cert == "" || f.Key == "" {
		return nil, errors.New("the cluster's TLS takes three files: the authority (ca.pem), the member's certificate and its key")
	}
	cas, err := readCertificates(f.CA)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	for _, c := range cas {
		if !c.IsCA {
			return nil, fmt.Errorf("%s holds %q, which is not an authority", f.CA, c.Subject.CommonName)
		}
		pool.AddCert(c)
	}
	pair, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("read %s and %s: %w", f.Cert, f.Key, err)
	}
	leaf := pair.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(pair.Certificate[0]); err != nil {
			return nil, fmt.Errorf("read %s: %w", f.Cert, err)
		}
		pair.Leaf = leaf
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("%s is not a member certificate of the authority in %s at %s: %w", f.Cert, f.CA, now.UTC().Format(time.RFC3339), err)
	}
	return &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
	}, nil
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

// Expiry returns when the member certificate of c stops being valid; the
// zero time when c has none.
func Expiry(c *tls.Config) time.Time {
	if c == nil || len(c.Certificates) == 0 || c.Certificates[0].Leaf == nil {
		return time.Time{}
	}
	return c.Certificates[0].Leaf.NotAfter
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
