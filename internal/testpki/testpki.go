package testpki

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// The files of a certificate directory, as a kubernetes.io/tls Secret with
// its CA is mounted.
const (
	CAFile   = "ca.crt"
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// CA is a certificate authority made for one test.
type CA struct {
	Cert *x509.Certificate
	key  crypto.Signer
}

// NewCA makes a self-signed CA named cn.
func NewCA(t testing.TB, cn string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	c, err := cert.NewSelfSignedCACert(cert.Config{CommonName: cn}, key)
	if err != nil {
		t.Fatal(err)
	}
	return &CA{Cert: c, key: key}
}

// Pool is a pool of the CA alone.
func (c *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(c.Cert)
	return p
}

// Issue signs a leaf certificate for cn with the extended key usage and DNS
// names.
func (c *CA) Issue(t testing.TB, cn string, usage x509.ExtKeyUsage, dns ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		DNSNames:     dns,
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{usage},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.Cert, key.Public(), c.key)
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// WriteDir writes the CA and leaf into a new directory of the test as
// CAFile, CertFile and KeyFile, and returns it.
func WriteDir(t testing.TB, ca *CA, leaf tls.Certificate) string {
	t.Helper()
	dir := t.TempDir()
	caPEM, err := cert.EncodeCertificates(ca.Cert)
	if err != nil {
		t.Fatal(err)
	}
	crtPEM, err := cert.EncodeCertificates(leaf.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(leaf.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{CAFile: caPEM, CertFile: crtPEM, KeyFile: keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// Sign signs tmpl for pub, as a signer of certificate signing requests
// does, and returns the certificate.
func (c *CA) Sign(t testing.TB, tmpl *x509.Certificate, pub crypto.PublicKey) *x509.Certificate {
	t.Helper()
	der, err := x509.CreateCertificate(rand.Reader, tmpl, c.Cert, pub, c.key)
	if err != nil {
		t.Error(err)
		return nil
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		t.Error(err)
		return nil
	}
	return leaf
}
