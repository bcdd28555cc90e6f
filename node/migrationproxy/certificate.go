package migrationproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/certificate"

	"kubevirt.dev/virt/internal/migrationcert"
)

// DefaultCertificateLifetime is the lifetime a handler asks for; the
// certificate manager renews at 70-90 % of it, without a restart.
const DefaultCertificateLifetime = 24 * time.Hour

// NewCertificateManager returns the manager of the node's migration
// certificate, as node/guestaccess does for the guest-access one: a key
// made on the node and never sent anywhere, a CertificateSigningRequest of
// migrationcert.SignerName (virt-controller's second signer approves only
// the requesting handler's own node), renewed at 70-90 % of its lifetime.
// dir keeps it across container restarts. It runs from Start until ctx
// ends.
func NewCertificateManager(ctx context.Context, kube kubernetes.Interface, node, dir string, lifetime time.Duration) (certificate.Manager, error) {
	store, err := certificate.NewFileStore("migration", dir, dir, "", "")
	if err != nil {
		return nil, fmt.Errorf("migration certificate store %s: %w", dir, err)
	}
	m, err := certificate.NewManager(&certificate.Config{
		ClientsetFn:                  func(*tls.Certificate) (kubernetes.Interface, error) { return kube, nil },
		Template:                     migrationcert.Request(node),
		SignerName:                   migrationcert.SignerName,
		Usages:                       migrationcert.Usages,
		RequestedCertificateLifetime: &lifetime,
		CertificateStore:             store,
		Name:                         "migration",
		Ctx:                          &ctx,
	})
	if err != nil {
		return nil, fmt.Errorf("migration certificate manager: %w", err)
	}
	return m, nil
}
