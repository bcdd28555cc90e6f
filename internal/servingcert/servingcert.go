package servingcert

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"strings"

	certificatesv1 "k8s.io/api/certificates/v1"
)

// SignerName is the certificates.k8s.io signer of the handlers' serving
// certificates. Only virt-controller approves and signs for it, and only
// with the serving CA virt-apiserver trusts for handlers; no other signer's
// certificate reaches a guest.
const SignerName = "virtualization.kubevirt.io/guest-access-serving"

// commonNamePrefix marks the subject as a handler's, like the kubelet's
// system:node: prefix.
const commonNamePrefix = "system:virt-handler:"

// CommonName is the subject common name of node's certificate.
func CommonName(node string) string { return commonNamePrefix + node }

// NodeOf returns the node a common name is for, and whether it is a
// handler's at all.
func NodeOf(commonName string) (string, bool) {
	node, ok := strings.CutPrefix(commonName, commonNamePrefix)
	return node, ok && node != ""
}

// Usages are the key usages a handler requests: a serving certificate and
// nothing else, so it can never be a client certificate (handlers demand a
// clientAuth certificate of virt-apiserver).
var Usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}

// Request is the certificate request of node's handler: the common name of
// the node, the node name as the only DNS name (what virt-apiserver checks:
// it dials the pod IP with the VMI's status.nodeName as server name), and
// the handler pod's IPs.
func Request(node string, ips []net.IP) *x509.CertificateRequest {
	return &x509.CertificateRequest{
		Subject:     pkix.Name{CommonName: CommonName(node)},
		DNSNames:    []string{node},
		IPAddresses: ips,
	}
}
