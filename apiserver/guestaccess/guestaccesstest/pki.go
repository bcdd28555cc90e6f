package guestaccesstest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"kubevirt.dev/virt/apiserver/guestaccess"
)

// ClientName is the common name of virt-apiserver's client certificate, the
// only client a handler serves.
const ClientName = "virt-apiserver"

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
// names, as hack/cluster/certs.sh does.
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

// PKI is the guest-access part of a cluster's certificates: the
// virt-handler CA and virt-apiserver's client certificate in the directory
// the Secret virt-apiserver-handler-client-tls is mounted as.
type PKI struct {
	CA *CA
	// ClientDir is virt-apiserver's --handler-client-cert-dir.
	ClientDir string
}

// NewPKI makes a CA and writes ClientDir.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{CA: NewCA(t, "virt-handler-ca"), ClientDir: t.TempDir()}
	client := p.CA.Issue(t, ClientName, x509.ExtKeyUsageClientAuth)
	caPEM, err := cert.EncodeCertificates(p.CA.Cert)
	if err != nil {
		t.Fatal(err)
	}
	crtPEM, err := cert.EncodeCertificates(client.Leaf)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(client.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{guestaccess.CAFile: caPEM, guestaccess.CertFile: crtPEM, guestaccess.KeyFile: keyPEM} {
		if err := os.WriteFile(filepath.Join(p.ClientDir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// HandlerTLS is a handler's TLS configuration as node/guestaccess makes it:
// a serving certificate of the PKI's CA (CN and DNS name virt-handler),
// HTTP/1.1, and a client certificate of the CA named ClientName demanded.
func (p *PKI) HandlerTLS(t testing.TB) *tls.Config {
	t.Helper()
	return p.HandlerTLSFrom(t, p.CA, guestaccess.ServerName)
}

// HandlerTLSFrom is HandlerTLS with a serving certificate for name signed by
// servingCA: a handler virt-apiserver must refuse unless servingCA is the
// PKI's and name is virt-handler.
func (p *PKI) HandlerTLSFrom(t testing.TB, servingCA *CA, name string) *tls.Config {
	t.Helper()
	serving := servingCA.Issue(t, name, x509.ExtKeyUsageServerAuth, name)
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{serving},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.CA.Pool(),
		NextProtos:   []string{"http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 {
				return errors.New("no verified client certificate")
			}
			if cn := cs.VerifiedChains[0][0].Subject.CommonName; cn != ClientName {
				return fmt.Errorf("client %q refused", cn)
			}
			return nil
		},
	}
}
