package certificate

import (
	"crypto/x509"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"kubevirt.dev/virt/internal/migrationcert"
	"kubevirt.dev/virt/internal/servingcert"
)

// Profile is one signer's policy: which requests it approves and what it
// issues. Each signer has a CA of its own, so a certificate of one never
// passes for the other.
type Profile struct {
	// SignerName is the certificates.k8s.io signer.
	SignerName string
	// What names the certificate in messages.
	What string
	// NodeOf is the node of a request's common name, and whether the name
	// is of this signer's shape at all; CommonName its inverse (messages).
	NodeOf     func(commonName string) (string, bool)
	CommonName func(node string) string
	// Allowed usages may be requested, Required ones must be.
	Allowed  sets.Set[certificatesv1.KeyUsage]
	Required []certificatesv1.KeyUsage
	// ExtKeyUsage is what the issued certificate may do.
	ExtKeyUsage []x509.ExtKeyUsage
	// IPs: the request may name the requesting pod's IP addresses; without
	// it a request with any IP address is refused.
	IPs bool
}

// GuestAccessServing is the handlers' guest-access serving certificate
// (internal/servingcert): serverAuth only, the pod's IPs allowed.
var GuestAccessServing = Profile{
	SignerName:  servingcert.SignerName,
	What:        "guest-access serving certificate",
	NodeOf:      servingcert.NodeOf,
	CommonName:  servingcert.CommonName,
	Allowed:     sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment, certificatesv1.UsageServerAuth),
	Required:    []certificatesv1.KeyUsage{certificatesv1.UsageServerAuth},
	ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	IPs:         true,
}

// Migration is the handlers' migration identity (internal/migrationcert):
// client and server of the handler-to-handler TLS, no IP address.
var Migration = Profile{
	SignerName: migrationcert.SignerName,
	What:       "migration certificate",
	NodeOf:     migrationcert.NodeOf,
	CommonName: migrationcert.CommonName,
	Allowed: sets.New(certificatesv1.UsageDigitalSignature, certificatesv1.UsageKeyEncipherment,
		certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth),
	Required:    []certificatesv1.KeyUsage{certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth},
	ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
}

// Selector is the field selector of the profile's requests; the
// controller's informer should list only those.
func (p Profile) Selector() string { return "spec.signerName=" + p.SignerName }
