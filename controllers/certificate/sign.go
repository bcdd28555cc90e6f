package certificate

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"os"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// CA is the handler serving CA as files (tls.crt and tls.key of a
// kubernetes.io/tls Secret). They are read for every signature: requests
// are rare, and a renewed CA is used without a restart.
type CA struct {
	CertFile string
	KeyFile  string
}

// load reads the CA certificate and its key.
func (c CA) load() (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(c.CertFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read the handler serving CA: %w", err)
	}
	certs, err := cert.ParseCertsPEM(certPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("parse the handler serving CA %s: %w", c.CertFile, err)
	}
	keyPEM, err := os.ReadFile(c.KeyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("read the handler serving CA key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("parse the handler serving CA key %s: %w", c.KeyFile, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("the handler serving CA key %s cannot sign", c.KeyFile)
	}
	if !certs[0].IsCA {
		return nil, nil, errors.New("the handler serving CA certificate is not a CA")
	}
	return certs[0], signer, nil
}

// backdate is how far before now a certificate starts, for nodes whose
// clock is a little behind virt-controller's (kube-controller-manager's
// signer does the same).
const backdate = 5 * time.Minute

// issue signs a serving certificate for the request, from now to now plus
// lifetime but not beyond the CA. The request was checked by checkShape:
// only its key, common name, DNS name and IP addresses are taken, every
// other extension is the signer's.
func issue(p Profile, ca *x509.Certificate, caKey crypto.Signer, req *x509.CertificateRequest, now time.Time, lifetime time.Duration) ([]byte, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(lifetime)
	if notAfter.After(ca.NotAfter) {
		notAfter = ca.NotAfter
	}
	usage := x509.KeyUsageDigitalSignature
	if _, ok := req.PublicKey.(*rsa.PublicKey); ok {
		usage |= x509.KeyUsageKeyEncipherment
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: req.Subject.CommonName},
		DNSNames:              req.DNSNames,
		IPAddresses:           req.IPAddresses,
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              usage,
		ExtKeyUsage:           p.ExtKeyUsage,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, req.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("sign: %w", err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	// The chain virt-apiserver needs is the leaf alone: it trusts the CA.
	return cert.EncodeCertificates(leaf)
}

// lifetime is what csr asks for (spec.expirationSeconds), at most max;
// max when it asks for nothing.
func lifetime(csr *certificatesv1.CertificateSigningRequest, max time.Duration) time.Duration {
	if s := csr.Spec.ExpirationSeconds; s != nil {
		if d := time.Duration(*s) * time.Second; d < max {
			return d
		}
	}
	return max
}

// requestedNode is the node of an approved request of the right shape, or
// a refusal: an approval by someone else (an administrator) does not make
// the signer issue anything but a handler's serving certificate.
func requestedNode(p Profile, csr *certificatesv1.CertificateSigningRequest) (*x509.CertificateRequest, string, error) {
	req, err := parse(csr)
	if err != nil {
		return nil, "", err
	}
	node, err := checkShape(p, req, csr.Spec.Usages)
	if err != nil {
		return nil, "", err
	}
	return req, node, nil
}
