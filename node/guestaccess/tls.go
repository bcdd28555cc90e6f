package guestaccess

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/util/cert"
)

// Files of the certificate directory: the keys of the kubernetes.io/tls
// Secret virt-handler-guest-access-tls plus its ca.crt.
const (
	// CAFile is the virt-handler CA: it signs the client certificates the
	// server accepts (and its own serving certificate, which virt-apiserver
	// checks against the same CA).
	CAFile = "ca.crt"
	// CertFile and KeyFile are the server's certificate (CN and DNS name
	// virt-handler) and key.
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// DefaultClientName is the common name of virt-apiserver's client
// certificate.
const DefaultClientName = "virt-apiserver"

// LoadTLSConfig reads CAFile, CertFile and KeyFile from dir and returns the
// server's TLS configuration (see TLSConfig). The files are read once: new
// certificates take a restart.
func LoadTLSConfig(dir, clientName string) (*tls.Config, error) {
	clientCAs, err := cert.NewPool(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, fmt.Errorf("guest access client CA: %w", err)
	}
	serving, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("guest access serving certificate: %w", err)
	}
	return TLSConfig(clientCAs, serving, clientName), nil
}

// TLSConfig is the server side of the mutual TLS with virt-apiserver: TLS
// 1.2 or newer, HTTP/1.1 (the streams are WebSocket upgrades), and a client
// certificate for client authentication that chains to clientCAs and whose
// common name is clientName. The CA may sign other certificates (the
// handlers' own serving certificate among them): the name tells the client
// apart. A refused client fails the handshake.
func TLSConfig(clientCAs *x509.CertPool, serving tls.Certificate, clientName string) *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		Certificates: []tls.Certificate{serving},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    clientCAs,
		NextProtos:   []string{"http/1.1"},
		VerifyConnection: func(cs tls.ConnectionState) error {
			return checkClient(&cs, clientName)
		},
	}
}

// checkClient accepts a connection whose verified client certificate
// carries the common name name.
func checkClient(cs *tls.ConnectionState, name string) error {
	if cs == nil {
		return errors.New("not a TLS connection")
	}
	if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return errors.New("no verified client certificate")
	}
	if cn := cs.VerifiedChains[0][0].Subject.CommonName; cn != name {
		return fmt.Errorf("client certificate of %q refused: only %q may reach guests", cn, name)
	}
	return nil
}
