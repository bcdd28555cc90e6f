package guestaccesstest

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"testing"

	"kubevirt.dev/virt/internal/testpki"
)

// ClientName is the common name of virt-apiserver's client certificate, the
// only client a handler serves.
const ClientName = "virt-apiserver"

// CA is a certificate authority made for one test.
type CA = testpki.CA

// NewCA makes a self-signed CA named cn.
func NewCA(t testing.TB, cn string) *CA { return testpki.NewCA(t, cn) }

// PKI is the guest-access part of a cluster's certificates: the
// virt-handler CA that signs virt-apiserver's client certificate (the
// handlers trust it), the handler serving CA virt-controller signs the
// handlers' certificates with (virt-apiserver trusts it), and the directory
// the Secret virt-apiserver-handler-client-tls is mounted as.
type PKI struct {
	CA        *CA
	ServingCA *CA
	// ClientDir is virt-apiserver's --handler-client-cert-dir: ca.crt of
	// ServingCA, virt-apiserver's client certificate of CA.
	ClientDir string
}

// NewPKI makes the CAs and writes ClientDir.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	p := &PKI{CA: NewCA(t, "virt-handler-ca"), ServingCA: NewCA(t, "virt-handler-serving-ca")}
	client := p.CA.Issue(t, ClientName, x509.ExtKeyUsageClientAuth)
	p.ClientDir = testpki.WriteDir(t, p.ServingCA, client)
	return p
}

// HandlerTLS is the TLS configuration of node's handler as node/guestaccess
// makes it: a serving certificate of the serving CA for the node's name,
// HTTP/1.1, and a client certificate of the CA named ClientName demanded.
func (p *PKI) HandlerTLS(t testing.TB, node string) *tls.Config {
	t.Helper()
	return p.HandlerTLSFrom(t, p.ServingCA, node)
}

// HandlerTLSFrom is HandlerTLS with a serving certificate for name signed by
// servingCA: a handler virt-apiserver must refuse unless servingCA is the
// PKI's serving CA and name the node of the VMI it dials for.
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
