package migrationproxy

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"

	"k8s.io/client-go/util/cert"

	"kubevirt.dev/virt/internal/migrationcert"
)

// Identity is a handler's migration identity (internal/migrationcert):
// its own certificate, and the CA whose certificates it accepts from the
// other handler.
type Identity struct {
	// Certificate is the current certificate (the certificate manager's);
	// nil until virt-controller signed one, and then every handshake
	// fails.
	Certificate func() *tls.Certificate
	// CAs is the migration CA, read when a migration's proxy starts, so a
	// renewed CA is trusted from the next migration on.
	CAs func() (*x509.CertPool, error)
}

// CAFile reads the migration CA from a file (the handler's mounted
// ConfigMap).
func CAFile(path string) func() (*x509.CertPool, error) {
	return func() (*x509.CertPool, error) {
		pool, err := cert.NewPool(path)
		if err != nil {
			return nil, fmt.Errorf("migration CA: %w", err)
		}
		return pool, nil
	}
}

func (id Identity) current() (*tls.Certificate, error) {
	if id.Certificate != nil {
		if c := id.Certificate(); c != nil {
			return c, nil
		}
	}
	return nil, errors.New("no migration certificate yet: its certificate signing request is not signed")
}

// serverConfig is the target's side of a kind's listener: TLS 1.3, the
// kind's ALPN protocol only, and a client certificate of the migration CA
// naming the source node.
func (id Identity) serverConfig(kind Kind, sourceNode string) (*tls.Config, error) {
	pool, err := id.CAs()
	if err != nil {
		return nil, err
	}
	want := migrationcert.CommonName(sourceNode)
	return &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return id.current() },
		ClientAuth:     tls.RequireAndVerifyClientCert,
		ClientCAs:      pool,
		NextProtos:     []string{kind.protocol()},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
				return errors.New("no verified client certificate")
			}
			if cn := cs.VerifiedChains[0][0].Subject.CommonName; cn != want {
				return fmt.Errorf("client certificate of %q refused: only the source node's %q may send this migration", cn, want)
			}
			if cs.NegotiatedProtocol != kind.protocol() {
				return fmt.Errorf("protocol %q on the %s listener", cs.NegotiatedProtocol, kind)
			}
			return nil
		},
	}, nil
}

// clientConfig is the source's side of a kind's connection: the target
// node's certificate of the migration CA (its DNS name and its common
// name), the kind's ALPN protocol.
func (id Identity) clientConfig(kind Kind, targetNode string) (*tls.Config, error) {
	pool, err := id.CAs()
	if err != nil {
		return nil, err
	}
	want := migrationcert.CommonName(targetNode)
	return &tls.Config{
		MinVersion: tls.VersionTLS13,
		RootCAs:    pool,
		// Hostname verification: the certificate's DNS name is its node.
		ServerName:           targetNode,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return id.current() },
		NextProtos:           []string{kind.protocol()},
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("no server certificate")
			}
			if cn := cs.PeerCertificates[0].Subject.CommonName; cn != want {
				return fmt.Errorf("server certificate of %q: the target is %q", cn, want)
			}
			if cs.NegotiatedProtocol != kind.protocol() {
				return fmt.Errorf("the target answered protocol %q, not %q", cs.NegotiatedProtocol, kind.protocol())
			}
			return nil
		},
	}, nil
}
