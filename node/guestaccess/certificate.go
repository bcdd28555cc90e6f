package guestaccess

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"

	"kubevirt.dev/virt/internal/servingcert"
)

// DefaultCertificateLifetime is the lifetime a handler asks for; the
// certificate manager renews at 70-90 % of it, without a restart.
const DefaultCertificateLifetime = 24 * time.Hour

// CertificateConfig says which serving certificate to request and where to
// keep it.
type CertificateConfig struct {
	// NodeName is the certificate's only DNS name: virt-apiserver dials a
	// handler with the VMI's node as the server name.
	NodeName string
	// IPs are the handler pod's addresses, the addresses virt-apiserver
	// dials.
	IPs []net.IP
	// Dir keeps the key and certificate across restarts of the container
	// (an emptyDir of the pod: a new pod has a new key).
	Dir string
	// Lifetime is asked for in the request (spec.expirationSeconds); the
	// signer may cap it.
	Lifetime time.Duration
}

// NewCertificateManager returns the manager of the node's serving
// certificate, in the pattern of the kubelet's: a key made on the node and
// never sent anywhere, a CertificateSigningRequest for
// servingcert.SignerName through kube (the handler's own identity, whose
// bound token names its node), and a new key and request at 70-90 % of the
// certificate's lifetime. Its Current is what TLSConfig serves; it runs
// from Start until ctx ends.
func NewCertificateManager(ctx context.Context, kube kubernetes.Interface, cfg CertificateConfig) (certificate.Manager, error) {
	store, err := certificate.NewFileStore("guest-access-serving", cfg.Dir, cfg.Dir, "", "")
	if err != nil {
		return nil, fmt.Errorf("guest access certificate store %s: %w", cfg.Dir, err)
	}
	lifetime := cfg.Lifetime
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:                  func(*tls.Certificate) (kubernetes.Interface, error) { return kube, nil },
		Template:                     servingcert.Request(cfg.NodeName, cfg.IPs),
		SignerName:                   servingcert.SignerName,
		Usages:                       servingcert.Usages,
		RequestedCertificateLifetime: &lifetime,
		CertificateStore:             store,
		Name:                         "guest-access-serving",
		Ctx:                          &ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("guest access certificate manager: %w", err)
	}
	return m, nil
}
