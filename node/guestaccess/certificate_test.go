package guestaccess

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/util/cert"

	"kubevirt.dev/virt/internal/servingcert"
	"kubevirt.dev/virt/internal/testpki"
)

// signingAPI is a fake certificates.k8s.io API whose signer issues every
// request at once, for lifetime; it records the requests.
type signingAPI struct {
	kube     *fake.Clientset
	ca       *testpki.CA
	lifetime time.Duration

	mu       sync.Mutex
	requests []*certificatesv1.CertificateSigningRequest
}

func newSigningAPI(t *testing.T, lifetime time.Duration) *signingAPI {
	api := &signingAPI{kube: fake.NewClientset(), ca: testpki.NewCA(t, "virt-handler-serving-ca"), lifetime: lifetime}
	api.kube.PrependReactor("create", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		csr := a.(k8stesting.CreateAction).GetObject().(*certificatesv1.CertificateSigningRequest)
		api.mu.Lock()
		defer api.mu.Unlock()
		api.requests = append(api.requests, csr.DeepCopy())
		// What the kube-apiserver does: a name, a UID.
		csr.Name = fmt.Sprintf("csr-%d", len(api.requests))
		csr.UID = types.UID(csr.Name)
		block, _ := pem.Decode(csr.Spec.Request)
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			t.Error(err)
			return true, nil, err
		}
		now := time.Now()
		leaf := api.ca.Sign(t, &x509.Certificate{
			SerialNumber: big.NewInt(int64(len(api.requests))),
			Subject:      pkix.Name{CommonName: req.Subject.CommonName},
			DNSNames:     req.DNSNames,
			IPAddresses:  req.IPAddresses,
			NotBefore:    now,
			NotAfter:     now.Add(api.lifetime),
			KeyUsage:     x509.KeyUsageDigitalSignature,
			ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		}, req.PublicKey)
		crt, _ := cert.EncodeCertificates(leaf)
		csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue}}
		csr.Status.Certificate = crt
		return false, nil, nil // stored by the tracker
	})
	// The fake ignores field selectors; the manager lists its request by
	// metadata.name.
	api.kube.PrependReactor("list", "certificatesigningrequests", func(a k8stesting.Action) (bool, runtime.Object, error) {
		name, ok := a.(k8stesting.ListAction).GetListRestrictions().Fields.RequiresExactMatch("metadata.name")
		if !ok {
			return false, nil, nil
		}
		list := &certificatesv1.CertificateSigningRequestList{}
		obj, err := api.kube.Tracker().Get(certificatesv1.SchemeGroupVersion.WithResource("certificatesigningrequests"), "", name)
		if err == nil {
			list.Items = append(list.Items, *obj.(*certificatesv1.CertificateSigningRequest))
		}
		return true, list, nil
	})
	return api
}

func (api *signingAPI) Requests() []*certificatesv1.CertificateSigningRequest {
	api.mu.Lock()
	defer api.mu.Unlock()
	return slices.Clone(api.requests)
}

// TestServingCertificateRotates: the handler requests its node's
// certificate through the CSR API and serves it, and a new one, with a new
// key, before the first expires, on the same listener: no restart.
func TestServingCertificateRotates(t *testing.T) {
	api := newSigningAPI(t, 3*time.Second)
	clientCA := testpki.NewCA(t, "virt-handler-ca")
	client := clientCA.Issue(t, DefaultClientName, x509.ExtKeyUsageClientAuth)

	m, err := NewCertificateManager(t.Context(), api.kube, CertificateConfig{
		NodeName: nodeName, IPs: []net.IP{net.ParseIP("127.0.0.1")}, Dir: t.TempDir(), Lifetime: time.Hour,
	})
	if err != nil {
		t.Fatal(err)
	}
	m.Start()
	t.Cleanup(m.Stop)

	ln, err := tls.Listen("tcp", "127.0.0.1:0", TLSConfig(clientCA.Pool(), m.Current, DefaultClientName))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.(*tls.Conn).Handshake()
			c.Close()
		}
	}()
	// handshake returns the serving certificate of the handler, checked as
	// virt-apiserver checks it for serverName.
	handshake := func(serverName string) (*x509.Certificate, error) {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{
			RootCAs: api.ca.Pool(), ServerName: serverName,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &client, nil },
		})
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0], nil
	}

	var first *x509.Certificate
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		first, err = handshake(nodeName)
		return err == nil, nil
	}); err != nil {
		t.Fatalf("no serving certificate: %v", err)
	}
	if _, err := handshake("node-2"); err == nil || !strings.Contains(err.Error(), "not node-2") {
		t.Errorf("handshake for node-2 = %v, want the certificate refused", err)
	}
	var second *x509.Certificate
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 20*time.Second, true, func(ctx context.Context) (bool, error) {
		second, err = handshake(nodeName)
		return err == nil && second.SerialNumber.Cmp(first.SerialNumber) != 0, nil
	}); err != nil {
		t.Fatalf("the certificate was not renewed before it expired at %s: %v", first.NotAfter, err)
	}
	if second.NotBefore.After(first.NotAfter) {
		t.Errorf("renewed at %s, after the first expired at %s", second.NotBefore, first.NotAfter)
	}
	if first.PublicKey.(interface{ Equal(crypto.PublicKey) bool }).Equal(second.PublicKey) {
		t.Error("the renewed certificate has the old key")
	}

	reqs := api.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want one per certificate", len(reqs))
	}
	for _, csr := range reqs {
		block, _ := pem.Decode(csr.Spec.Request)
		req, err := x509.ParseCertificateRequest(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		if csr.Spec.SignerName != servingcert.SignerName || !slices.Equal(csr.Spec.Usages, servingcert.Usages) ||
			req.Subject.CommonName != servingcert.CommonName(nodeName) || !slices.Equal(req.DNSNames, []string{nodeName}) ||
			len(req.IPAddresses) != 1 || !req.IPAddresses[0].Equal(net.ParseIP("127.0.0.1")) {
			t.Errorf("request %s %v %s %v %v, want the node's serving certificate", csr.Spec.SignerName, csr.Spec.Usages, req.Subject, req.DNSNames, req.IPAddresses)
		}
		if csr.Spec.ExpirationSeconds == nil || *csr.Spec.ExpirationSeconds != 3600 {
			t.Errorf("expirationSeconds %v, want the configured hour", csr.Spec.ExpirationSeconds)
		}
	}
}
