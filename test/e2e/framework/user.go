package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// UserConfig is a client configuration of an ordinary user of the cluster:
// a client certificate for user (in groups) signed by the cluster's CA, the
// way an administrator hands out kubeconfigs. Requests made with it go the
// way every user's go: authenticated by the kube-apiserver, authorized by
// RBAC, and proxied by the aggregator with the user's identity.
func (c *Cluster) UserConfig(user string, groups ...string) (*rest.Config, error) {
	pki := filepath.Join(c.State, "pki")
	caCerts, err := cert.CertsFromFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, fmt.Errorf("read the cluster CA: %w", err)
	}
	caKey, err := keyutil.PrivateKeyFromFile(filepath.Join(pki, "ca.key"))
	if err != nil {
		return nil, fmt.Errorf("read the cluster CA's key: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: user, Organization: groups},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCerts[0], key.Public(), caKey)
	if err != nil {
		return nil, fmt.Errorf("sign a certificate for %s: %w", user, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	caPEM, err := os.ReadFile(filepath.Join(pki, "ca.crt"))
	if err != nil {
		return nil, err
	}
	cfg := &rest.Config{
		Host:      c.Config.Host,
		UserAgent: "virt-e2e-user",
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   caPEM,
			CertData: pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}),
			KeyData:  pem.EncodeToMemory(&pem.Block{Type: keyutil.ECPrivateKeyBlockType, Bytes: keyDER}),
		},
	}
	return cfg, nil
}

// AnonymousConfig is a client configuration that presents no credentials.
func (c *Cluster) AnonymousConfig() *rest.Config {
	return &rest.Config{Host: c.Config.Host, TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData, CAFile: c.Config.CAFile}}
}
