package clustertls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"backupmon/vfs"
)

// CAValidity and MemberValidity are how long a new authority and a new
// member's certificate are valid. A member's certificate is issued again
// (the same command) before it expires; the nodes log its expiry at start.
const (
	CAValidity     = 10 * 365 * 24 * time.Hour
	MemberValidity = 2 * 365 * 24 * time.Hour
)

// clockSkew is how far before now a certificate's validity starts, so that
// a member whose clock is a little behind the issuer's takes it.
const clockSkew = time.Hour

// Files are the PEM files one member of a cluster reads: the cluster's
// authority, the member's certificate and the member's private key.
type Files struct{ CA, Cert, Key string }

// Given reports whether any of f's paths is set.
func (f Files) Given() bool { return f.CA != "" || f.Cert != "" || f.Key != "" }

// memberName is what a member's name may be: it names its files.
var memberName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)

// Issue writes name's certificate and key into dir (NAME.pem, NAME.key),
// signed by dir's authority, which it makes first when dir has none
// (ca.pem, ca.key). hosts are the DNS names and IP addresses the other
// members dial name by. It returns the member's files, or an error when
// the name or a host is not valid, dir holds half an authority, or a file
// cannot be written; an existing certificate of name is replaced.
func Issue(dir, name string, hosts []string, now time.Time) (Files, error) {
	if !memberName.MatchString(name) {
		return Files{}, fmt.Errorf("member name %q: use letters, digits, '.', '_' and '-' (up to 63)", name)
	}
	if strings.EqualFold(name, "ca") {
		return Files{}, fmt.Errorf(`member name %q: "ca" names the authority's own files`, name)
	}
	if len(hosts) == 0 {
		return Files{}, errors.New("no host: give the names or addresses the other members reach this one by")
	}
	tmpl, err := memberTemplate(name, hosts, now)
	if err != nil {
		return Files{}, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return Files{}, fmt.Errorf("make %s: %w", dir, err)
	}
	ca, caKey, err := authority(dir, now)
	if err != nil {
		return Files{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Files{}, fmt.Errorf("make the key of %s: %w", name, err)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return Files{}, fmt.Errorf("sign the certificate of %s: %w", name, err)
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, name+".pem"), Key: filepath.Join(dir, name+".key")}
	if err := writeKey(f.Key, key); err != nil {
		return Files{}, err
	}
	if err := writePEM(f.Cert, "CERTIFICATE", der, 0o644); err != nil {
		return Files{}, err
	}
	return f, nil
}

// memberTemplate is the certificate of a member reached by hosts, valid
// for MemberValidity from now, for both ends of a connection.
func memberTemplate(name string, hosts []string, now time.Time) (*x509.Certificate, error) {
	t := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name, Organization: []string{"backupmon cluster"}},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     now.Add(MemberValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, h := range hosts {
		switch ip := net.ParseIP(h); {
		case ip != nil:
			t.IPAddresses = append(t.IPAddresses, ip)
		case validHost(h):
			t.DNSNames = append(t.DNSNames, h)
		default:
			return nil, fmt.Errorf("host %q is neither an IP address nor a DNS name", h)
		}
	}
	return t, nil
}

var dnsName = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

func validHost(h string) bool { return len(h) <= 253 && dnsName.MatchString(h) }

// authority returns dir's authority, making it when dir has neither of its
// files; an error when it has one of them only, or they cannot be read.
func authority(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "ca.key")
	_, certErr := os.Stat(certPath)
	_, keyErr := os.Stat(keyPath)
	switch {
	case certErr == nil && keyErr == nil:
		return readAuthority(certPath, keyPath)
	case errors.Is(certErr, fs.ErrNotExist) && errors.Is(keyErr, fs.ErrNotExist):
		return makeAuthority(certPath, keyPath, now)
	case certErr == nil:
		return nil, nil, fmt.Errorf("%s has the authority's certificate but not its key %s: issue certificates where the authority was made", dir, keyPath)
	case keyErr == nil:
		return nil, nil, fmt.Errorf("%s has the authority's key but not its certificate %s", dir, certPath)
	default:
		return nil, nil, fmt.Errorf("read the authority in %s: %w", dir, errors.Join(certErr, keyErr))
	}
}

func makeAuthority(certPath, keyPath string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("make the authority's key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "backupmon cluster authority", Organization: []string{"backupmon cluster"}},
		NotBefore:             now.Add(-clockSkew),
		NotAfter:              now.Add(CAValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, fmt.Errorf("sign the authority: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, fmt.Errorf("read the new authority: %w", err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(certPath, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func readAuthority(certPath, keyPath string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certs, err := readCertificates(certPath)
	if err != nil {
		return nil, nil, err
	}
	b, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("read the authority's key: %w", err)
	}
	blk, _ := pem.Decode(b)
	if blk == nil {
		return nil, nil, fmt.Errorf("%s holds no PEM block", keyPath)
	}
	key, err := x509.ParseECPrivateKey(blk.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read the authority's key %s: %w", keyPath, err)
	}
	if !key.PublicKey.Equal(certs[0].PublicKey) {
		return nil, nil, fmt.Errorf("%s is not the key of %s", keyPath, certPath)
	}
	return certs[0], key, nil
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode %s: %w", path, err)
	}
	return writePEM(path, "EC PRIVATE KEY", der, 0o600)
}

// writePEM writes one PEM block to path, durably and whole
// (vfs.WriteFile: a reader never sees half a file).
func writePEM(path, typ string, der []byte, mode fs.FileMode) error {
	return vfs.WriteFile(vfs.OS, path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode)
}

// serial is a random 128-bit serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(fmt.Sprintf("clustertls: random serial: %v", err)) // crypto/rand does not fail on Linux
	}
	return n
}
