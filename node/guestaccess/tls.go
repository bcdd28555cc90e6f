package guestaccess

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"k8s.io/client-go/util/cert"
)

// DefaultClientName is the common name of virt-apiserver's client
// certificate.
const DefaultClientName = "virt-apiserver"

// LoadTLSConfig returns the server's TLS configuration (see TLSConfig) with
// the client CA read from caFile for every new connection, so a renewed CA
// (the mounted ConfigMap updated) is trusted without a restart; serving is
// the current serving certificate (the certificate manager's). The file
// must be readable now.
func LoadTLSConfig(caFile string, serving func() *tls.Certificate, clientName string) (*tls.Config, error) {
	if _, err := cert.NewPool(caFile); err != nil {
		return nil, fmt.Errorf("guest access client CA: %w", err)
	}
	config := TLSConfig(nil, serving, clientName)
	config.GetConfigForClient = func(*tls.ClientHelloInfo) (*tls.Config, error) {
		pool, err := cert.NewPool(caFile)
		if err != nil {
			return nil, fmt.Errorf("guest access client CA: %w", err)
		}
		return TLSConfig(pool, serving, clientName), nil
	}
	return config, nil
}

// TLSConfig is the server side of the mutual TLS with virt-apiserver: TLS
// 1.2 or newer, HTTP/1.1 (the streams are WebSocket upgrades), the serving
// certificate serving returns at the time of the handshake (nil fails it:
// none was issued yet), and a client certificate for client authentication
// that chains to clientCAs and whose common name is clientName. The client
// CA signs nothing else a handler holds: the handlers' serving
// certificates come from another CA (virt-controller's signer), and are
// serverAuth only. A refused client fails the handshake.
func TLSConfig(clientCAs *x509.CertPool, serving func() *tls.Certificate, clientName string) *tls.Config {
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			if c := serving(); c != nil {
				return c, nil
			}
			return nil, errors.New("no guest-access serving certificate yet: its certificate signing request is not signed")
		},
		ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs:  clientCAs,
		NextProtos: []string{"http/1.1"},
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
