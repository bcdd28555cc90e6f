package guestaccess

import (
	"crypto/tls"
	"fmt"
	"path/filepath"

	"k8s.io/client-go/util/cert"
)

// Files of the certificate directory: the keys of the Secret
// virt-apiserver-handler-client-tls.
const (
	// CAFile is the handler serving CA: virt-controller signs the
	// handlers' serving certificates with it (the CSR signer
	// internal/servingcert.SignerName), and it signs nothing else.
	CAFile = "ca.crt"
	// CertFile and KeyFile are virt-apiserver's client certificate (CN
	// virt-apiserver, clientAuth) and key.
	CertFile = "tls.crt"
	KeyFile  = "tls.key"
)

// LoadTLSConfig reads CAFile, CertFile and KeyFile from dir and returns the
// client side of the mutual TLS with the handlers: TLS 1.2 or newer, the
// handler's certificate verified against the handler serving CA,
// virt-apiserver's client certificate, and HTTP/1.1 (the streams are
// WebSocket upgrades, which HTTP/2 does not carry). It has no server
// name: each node's transport sets its own (Handlers.Location), so a
// handler is checked for the node of the VMI. The files are read once:
// new certificates take a restart.
func LoadTLSConfig(dir string) (*tls.Config, error) {
	roots, err := cert.NewPool(filepath.Join(dir, CAFile))
	if err != nil {
		return nil, fmt.Errorf("handler serving CA: %w", err)
	}
	client, err := tls.LoadX509KeyPair(filepath.Join(dir, CertFile), filepath.Join(dir, KeyFile))
	if err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return &tls.Config{
		MinVersion: tls.VersionTLS12,
		RootCAs:    roots,
		// Always sent, even when the handler names other acceptable CAs:
		// the handler then says which CA it refused ("unknown certificate
		// authority") instead of "certificate required".
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &client, nil },
		NextProtos:           []string{"http/1.1"},
	}, nil
}
