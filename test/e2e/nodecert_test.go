package e2e

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/cert"

	"kubevirt.dev/virt/internal/servingcert"
)

// TestGuestAccessCertificatePerNode: every virt-handler serves a
// certificate of its own node, requested through the CSR API and signed by
// virt-controller, that virt-apiserver's check accepts for that node only;
// and the handler's own identity cannot get a certificate of another node,
// or one with names beside its node's.
func TestGuestAccessCertificatePerNode(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	pki := filepath.Join(cluster.State, "pki")
	roots, err := cert.NewPool(filepath.Join(pki, "virt-handler-serving-ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	client, err := tls.LoadX509KeyPair(filepath.Join(pki, "virt-apiserver-handler-client.crt"), filepath.Join(pki, "virt-apiserver-handler-client.key"))
	if err != nil {
		t.Fatal(err)
	}
	handlers, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=virt-handler"})
	if err != nil {
		t.Fatal(err)
	}
	var pods []corev1.Pod
	for _, p := range handlers.Items {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.PodIP != "" {
			pods = append(pods, p)
		}
	}
	if len(pods) == 0 {
		t.Fatal("no running virt-handler pod")
	}
	// handshake dials the handler as virt-apiserver does, checking its
	// certificate for serverName.
	handshake := func(pod *corev1.Pod, serverName string) (*x509.Certificate, error) {
		d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: &tls.Config{
			RootCAs: roots, ServerName: serverName, MinVersion: tls.VersionTLS12,
			GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &client, nil },
		}}
		conn, err := d.DialContext(ctx, "tcp", net.JoinHostPort(pod.Status.PodIP, "8187"))
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		return conn.(*tls.Conn).ConnectionState().PeerCertificates[0], nil
	}

	for i := range pods {
		pod := &pods[i]
		node := pod.Spec.NodeName
		t.Run("handler of "+node, func(t *testing.T) {
			var leaf *x509.Certificate
			var last error
			if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(context.Context) (bool, error) {
				leaf, last = handshake(pod, node)
				return last == nil, nil
			}); err != nil {
				t.Fatalf("no handshake with the handler of %s for its node name: %v", node, last)
			}
			if leaf.Subject.CommonName != servingcert.CommonName(node) || !slices.Equal(leaf.DNSNames, []string{node}) ||
				!slices.Equal(leaf.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
				t.Errorf("certificate %s DNS %v usages %v, want node %s's serving certificate", leaf.Subject, leaf.DNSNames, leaf.ExtKeyUsage, node)
			}
			if !slices.ContainsFunc(leaf.IPAddresses, func(ip net.IP) bool { return ip.Equal(net.ParseIP(pod.Status.PodIP)) }) {
				t.Errorf("IP addresses %v lack the pod's %s", leaf.IPAddresses, pod.Status.PodIP)
			}
			if life := leaf.NotAfter.Sub(leaf.NotBefore); life > 24*time.Hour+10*time.Minute {
				t.Errorf("lifetime %v, want the handler's 24 h", life)
			}
			// What virt-apiserver does for a VMI on another node.
			if _, err := handshake(pod, "another-node"); err == nil || !strings.Contains(err.Error(), "not another-node") {
				t.Errorf("handshake for another-node = %v, want its certificate refused", err)
			}
		})
	}

	t.Run("the handler's identity gets only its own node's certificate", func(t *testing.T) {
		pod := &pods[0]
		node := pod.Spec.NodeName
		bound := handlerClient(t, podRef(pod))
		ip := net.ParseIP(pod.Status.PodIP)
		for _, tc := range []struct {
			name   string
			client kubernetes.Interface
			req    *x509.CertificateRequest
			usages []certificatesv1.KeyUsage
			// why is part of the denial; "" means approved and issued.
			why string
		}{
			{name: "its own node", client: bound, req: servingcert.Request(node, []net.IP{ip})},
			{name: "another node", client: bound, req: servingcert.Request("node-evil", nil), why: `asked for a certificate of node "node-evil"`},
			{name: "another node's name beside its own", client: bound, req: withDNS(servingcert.Request(node, nil), node, "node-evil"), why: "DNS names"},
			{name: "an address not its pod's", client: bound, req: servingcert.Request(node, []net.IP{net.ParseIP("198.18.255.254")}), why: "198.18.255.254"},
			{name: "a client certificate", client: bound, req: servingcert.Request(node, nil),
				usages: []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}, why: "client auth"},
			{name: "a token bound to no pod", client: handlerClient(t, nil), req: servingcert.Request(node, nil), why: "authentication.kubernetes.io/node-name"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				usages := tc.usages
				if usages == nil {
					usages = servingcert.Usages
				}
				csr := requestCertificate(t, tc.client, tc.req, usages)
				var got *certificatesv1.CertificateSigningRequest
				if err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
					got, err = cluster.Kube.CertificatesV1().CertificateSigningRequests().Get(ctx, csr.Name, metav1.GetOptions{})
					if err != nil {
						return false, err
					}
					return len(got.Status.Certificate) > 0 || csrCondition(got, certificatesv1.CertificateDenied) != nil, nil
				}); err != nil {
					t.Fatalf("no verdict on %s: %v (status %+v)", csr.Name, err, got.Status)
				}
				denied := csrCondition(got, certificatesv1.CertificateDenied)
				if tc.why == "" {
					if denied != nil || len(got.Status.Certificate) == 0 {
						t.Fatalf("own request not issued: %+v", got.Status.Conditions)
					}
					certs, err := cert.ParseCertsPEM(got.Status.Certificate)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := certs[0].Verify(x509.VerifyOptions{Roots: roots, DNSName: node}); err != nil {
						t.Errorf("issued certificate not valid for %s: %v", node, err)
					}
					return
				}
				if denied == nil || !strings.Contains(denied.Message, tc.why) || len(got.Status.Certificate) != 0 {
					t.Errorf("status %+v, want Denied saying %q and no certificate", got.Status, tc.why)
				}
			})
		}
	})
}

// podRef binds a token to pod, as the kubelet binds a pod's own.
func podRef(pod *corev1.Pod) *authenticationv1.BoundObjectReference {
	return &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: pod.Name, UID: pod.UID}
}

// requestCertificate creates a CSR of the handlers' signer for tmpl with a
// new key, as client, and deletes it when the test ends.
func requestCertificate(t *testing.T, client kubernetes.Interface, tmpl *x509.CertificateRequest, usages []certificatesv1.KeyUsage) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		t.Fatal(err)
	}
	csr, err := client.CertificatesV1().CertificateSigningRequests().Create(t.Context(), &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "e2e-guest-access-"},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName: servingcert.SignerName,
			Usages:     usages,
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create the request as the handler: %v", err)
	}
	t.Cleanup(func() {
		_ = cluster.Kube.CertificatesV1().CertificateSigningRequests().Delete(context.Background(), csr.Name, metav1.DeleteOptions{})
	})
	return csr
}

func withDNS(req *x509.CertificateRequest, names ...string) *x509.CertificateRequest {
	req.DNSNames = names
	return req
}

func csrCondition(csr *certificatesv1.CertificateSigningRequest, ty certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequestCondition {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Type == ty {
			return &csr.Status.Conditions[i]
		}
	}
	return nil
}
