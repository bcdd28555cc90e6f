package migrationcert

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// SignerName is the certificates.k8s.io signer of the handlers' migration
// certificates. Only virt-controller approves and signs for it, with the
// migration CA.
const SignerName = "virtualization.kubevirt.io/virt-handler-migration"

// commonNamePrefix marks the subject as a handler's migration identity.
const commonNamePrefix = "system:virt-handler-migration:"

// CommonName is the subject common name of node's certificate.
func CommonName(node string) string { return commonNamePrefix + node }

// NodeOf returns the node a common name is for, and whether it is a
// handler's migration identity at all.
func NodeOf(commonName string) (string, bool) {
	node, ok := strings.CutPrefix(commonName, commonNamePrefix)
	return node, ok && node != ""
}

// Usages are the key usages a handler requests: it is the client of the
// target's handler when it is a source, the server when it is a target.
var Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth, certificatesv1.UsageServerAuth}

// Request is the certificate request of node's handler: the common name of
// the node and the node name as the only DNS name (the source dials the
// target's pod IP with the target node as server name). No IP address: a
// pod IP says nothing a node name does not, and is not checked.
func Request(node string) *x509.CertificateRequest {
	return &x509.CertificateRequest{
		Subject:  pkix.Name{CommonName: CommonName(node)},
		DNSNames: []string{node},
	}
}
