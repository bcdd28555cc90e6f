package testserver

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// FrontProxy plays the kube-aggregator in front of a test server: the
// server trusts its client certificate to vouch, in X-Remote-* headers, for
// the user a request is made for, exactly as in a cluster.
type FrontProxy struct {
	caFile  string
	certPEM []byte
	keyPEM  []byte
}

// NewFrontProxy makes a CA and a client certificate signed by it.
func NewFrontProxy(t testing.TB) *FrontProxy {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "test-front-proxy-ca"}, caKey)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "front-proxy-client"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := cert.EncodeCertificates(ca)
	if err != nil {
		t.Fatal(err)
	}
	certPEM, err := cert.EncodeCertificates(&x509.Certificate{Raw: der})
	if err != nil {
		t.Fatal(err)
	}
	caFile := filepath.Join(t.TempDir(), "front-proxy-ca.crt")
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return &FrontProxy{caFile: caFile, certPEM: certPEM, keyPEM: keyPEM}
}

// As returns a client config of the server that makes every request on
// behalf of the given user, as the aggregator does after authenticating it.
func (p *FrontProxy) As(server *Server, name string, groups []string, extra map[string][]string) *rest.Config {
	c := rest.CopyConfig(server.ClientConfig)
	c.CertData, c.KeyData = p.certPEM, p.keyPEM
	c.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return transport.NewAuthProxyRoundTripper(name, "", groups, extra, rt)
	})
	return c
}
