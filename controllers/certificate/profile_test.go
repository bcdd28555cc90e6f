package certificate

import (
	"crypto/x509"
	"net"
	"slices"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/util/cert"

	"kubevirt.dev/virt/internal/migrationcert"
)

// migrationRequest is node-a's handler's request of its migration
// identity.
func migrationRequest(t *testing.T) *request {
	r := ownRequest(t)
	r.template = migrationcert.Request("node-a")
	r.signer = migrationcert.SignerName
	r.usages = migrationcert.Usages
	return r
}

// TestMigrationProfile: the migration signer issues node-a's handler a
// client-and-server certificate naming node-a, and nothing of another
// shape.
func TestMigrationProfile(t *testing.T) {
	now := time.Now()
	got, ca := runProfile(t, migrationRequest(t), now, Migration)
	if c := condition(got, certificatesv1.CertificateApproved); c == nil || c.Reason != ReasonApproved {
		t.Fatalf("conditions %+v, want Approved", got.Status.Conditions)
	}
	certs, err := cert.ParseCertsPEM(got.Status.Certificate)
	if err != nil {
		t.Fatalf("status.certificate: %v", err)
	}
	leaf := certs[0]
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth} {
		if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "node-a", Roots: roots, KeyUsages: []x509.ExtKeyUsage{usage}, CurrentTime: now}); err != nil {
			t.Errorf("usage %v: %v", usage, err)
		}
	}
	if leaf.Subject.CommonName != migrationcert.CommonName("node-a") || !slices.Equal(leaf.DNSNames, []string{"node-a"}) || len(leaf.IPAddresses) != 0 {
		t.Errorf("subject %q, DNS names %q, IPs %v", leaf.Subject.CommonName, leaf.DNSNames, leaf.IPAddresses)
	}

	denied := map[string]func(*request){
		"a guest-access request": func(r *request) { *r = *ownRequest(t); r.signer = migrationcert.SignerName },
		"another node":           func(r *request) { r.template = migrationcert.Request("node-b") },
		"an IP address": func(r *request) {
			r.template.IPAddresses = []net.IP{net.ParseIP("198.18.0.10")}
		},
		"server auth only": func(r *request) {
			r.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageServerAuth}
		},
		"code signing": func(r *request) { r.usages = append(r.usages, certificatesv1.UsageCodeSigning) },
	}
	for name, change := range denied {
		t.Run(name, func(t *testing.T) {
			r := migrationRequest(t)
			change(r)
			got, _ := runProfile(t, r, now, Migration)
			if c := condition(got, certificatesv1.CertificateDenied); c == nil || len(got.Status.Certificate) != 0 {
				t.Fatalf("conditions %+v, certificate %d bytes: want Denied and none", got.Status.Conditions, len(got.Status.Certificate))
			}
		})
	}

	// The guest-access signer does not issue a migration identity.
	got, _ = run(t, migrationRequest(t), now)
	if len(got.Status.Certificate) != 0 {
		t.Fatal("the guest-access controller issued a migration certificate")
	}
}
