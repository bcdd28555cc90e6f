package certificate

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	certificatesv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/internal/servingcert"
)

var handlers = Requester{Namespace: "virt-system", ServiceAccount: "virt-handler"}

// writeCA makes a CA and writes it as the files of the controller's Secret.
func writeCA(t *testing.T) (CA, *x509.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: "virt-handler-serving-ca"}, key)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	crtPEM, _ := cert.EncodeCertificates(ca)
	keyPEM, err := keyutil.MarshalPrivateKeyToPEM(key)
	if err != nil {
		t.Fatal(err)
	}
	files := CA{CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key")}
	if err := os.WriteFile(files.CertFile, crtPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files.KeyFile, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	return files, ca
}

// handlerPod is node-a's handler pod, the one whose token made the requests.
func handlerPod() *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "virt-handler-a", Namespace: "virt-system", UID: "pod-uid-a"},
		Spec:       corev1.PodSpec{NodeName: "node-a"},
		Status:     corev1.PodStatus{PodIP: "198.18.0.10", PodIPs: []corev1.PodIP{{IP: "198.18.0.10"}}},
	}
}

// request is what node-a's handler sends, as the kube-apiserver stores it;
// tests change it.
type request struct {
	template *x509.CertificateRequest
	key      crypto.Signer
	signer   string
	usages   []certificatesv1.KeyUsage
	username string
	extra    map[string]certificatesv1.ExtraValue
	expiry   *int32
	approved bool
}

func ownRequest(t *testing.T) *request {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &request{
		template: servingcert.Request("node-a", []net.IP{net.ParseIP("198.18.0.10")}),
		key:      key,
		signer:   servingcert.SignerName,
		usages:   servingcert.Usages,
		username: handlers.UserName(),
		extra: map[string]certificatesv1.ExtraValue{
			NodeNameExtra: {"node-a"},
			PodNameExtra:  {"virt-handler-a"},
			PodUIDExtra:   {"pod-uid-a"},
		},
		expiry: ptr.To[int32](3600),
	}
}

func (r *request) object(t *testing.T) *certificatesv1.CertificateSigningRequest {
	t.Helper()
	der, err := x509.CreateCertificateRequest(rand.Reader, r.template, r.key)
	if err != nil {
		t.Fatal(err)
	}
	csr := &certificatesv1.CertificateSigningRequest{
		ObjectMeta: metav1.ObjectMeta{Name: "csr-1", UID: types.UID("csr-uid")},
		Spec: certificatesv1.CertificateSigningRequestSpec{
			Request:           pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}),
			SignerName:        r.signer,
			Usages:            r.usages,
			Username:          r.username,
			Extra:             r.extra,
			ExpirationSeconds: r.expiry,
		},
	}
	if r.approved {
		csr.Status.Conditions = []certificatesv1.CertificateSigningRequestCondition{{
			Type: certificatesv1.CertificateApproved, Status: corev1.ConditionTrue, Reason: "ApprovedByAnAdministrator",
		}}
	}
	return csr
}

// run syncs the request as the controller would and returns it as written.
func run(t *testing.T, r *request, now time.Time) (*certificatesv1.CertificateSigningRequest, *x509.Certificate) {
	t.Helper()
	return runProfile(t, r, now, Profile{})
}

// runProfile is run with the controller of profile p.
func runProfile(t *testing.T, r *request, now time.Time, p Profile) (*certificatesv1.CertificateSigningRequest, *x509.Certificate) {
	t.Helper()
	files, ca := writeCA(t)
	kube := fake.NewClientset([]runtime.Object{r.object(t), handlerPod()}...)
	factory := informers.NewSharedInformerFactory(kube, 0)
	ctrl, err := New(t.Context(), kube, factory.Certificates().V1().CertificateSigningRequests(),
		Config{Requester: handlers, CA: files, MaxLifetime: 2 * time.Hour, Profile: p}, clocktesting.NewFakePassiveClock(now))
	if err != nil {
		t.Fatal(err)
	}
	factory.Start(t.Context().Done())
	t.Cleanup(factory.Shutdown)
	if !cache.WaitForCacheSync(t.Context().Done(), ctrl.synced) {
		t.Fatal("informer did not sync")
	}
	if err := ctrl.sync(t.Context(), "csr-1"); err != nil {
		t.Fatal(err)
	}
	got, err := kube.CertificatesV1().CertificateSigningRequests().Get(t.Context(), "csr-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got, ca
}

func condition(csr *certificatesv1.CertificateSigningRequest, ty certificatesv1.RequestConditionType) *certificatesv1.CertificateSigningRequestCondition {
	for i := range csr.Status.Conditions {
		if csr.Status.Conditions[i].Type == ty {
			return &csr.Status.Conditions[i]
		}
	}
	return nil
}

// TestApprovesAndSignsOwnNode: node-a's handler gets a certificate for
// node-a that virt-apiserver accepts for node-a, serving only, with the
// lifetime it asked for.
func TestApprovesAndSignsOwnNode(t *testing.T) {
	now := time.Now()
	got, ca := run(t, ownRequest(t), now)
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
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "node-a", Roots: roots, CurrentTime: now}); err != nil {
		t.Errorf("not valid for node-a: %v", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "node-b", Roots: roots, CurrentTime: now}); err == nil {
		t.Error("valid for node-b")
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: roots, CurrentTime: now, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
		t.Error("usable as a client certificate")
	}
	if leaf.Subject.CommonName != servingcert.CommonName("node-a") || len(leaf.IPAddresses) != 1 || !leaf.IPAddresses[0].Equal(net.ParseIP("198.18.0.10")) {
		t.Errorf("subject %s, IPs %v", leaf.Subject, leaf.IPAddresses)
	}
	if leaf.IsCA {
		t.Error("a CA certificate")
	}
	if d := leaf.NotAfter.Sub(now); d < 59*time.Minute || d > time.Hour {
		t.Errorf("valid for %v after now, want the hour asked for", d)
	}
}

func TestLifetimeCapped(t *testing.T) {
	r := ownRequest(t)
	r.expiry = ptr.To[int32](30 * 24 * 3600)
	now := time.Now()
	got, _ := run(t, r, now)
	certs, err := cert.ParseCertsPEM(got.Status.Certificate)
	if err != nil {
		t.Fatal(err)
	}
	if d := certs[0].NotAfter.Sub(now); d > 2*time.Hour {
		t.Errorf("valid for %v, want at most the signer's 2h", d)
	}
}

// TestDenies: every request that is not node-a's handler asking for
// node-a's serving certificate is Denied with the reason and gets no
// certificate.
func TestDenies(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*request)
		why    string
	}{
		{name: "another node's name", change: func(r *request) {
			r.template = servingcert.Request("node-b", nil)
		}, why: `the handler of node "node-a" asked for a certificate of node "node-b"`},
		{name: "another node's DNS name beside its own", change: func(r *request) {
			r.template.DNSNames = []string{"node-a", "node-b"}
		}, why: "DNS names"},
		{name: "a wildcard DNS name", change: func(r *request) {
			r.template.DNSNames = []string{"*"}
		}, why: "DNS names"},
		{name: "virt-apiserver's name", change: func(r *request) {
			r.template.Subject = pkix.Name{CommonName: "virt-apiserver"}
		}, why: "common name"},
		{name: "an organization", change: func(r *request) {
			r.template.Subject.Organization = []string{"system:masters"}
		}, why: "more than one common name"},
		{name: "an IP that is not the pod's", change: func(r *request) {
			r.template.IPAddresses = append(r.template.IPAddresses, net.ParseIP("198.18.0.99"))
		}, why: "IP address 198.18.0.99"},
		{name: "an e-mail address", change: func(r *request) {
			r.template.EmailAddresses = []string{"a@example.org"}
		}, why: "e-mail"},
		{name: "client auth", change: func(r *request) {
			r.usages = append(r.usages, certificatesv1.UsageClientAuth)
		}, why: `usage "client auth"`},
		{name: "no server auth", change: func(r *request) {
			r.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature}
		}, why: `usage "server auth" not requested`},
		{name: "another service account", change: func(r *request) {
			r.username = "system:serviceaccount:virt-system:virt-controller"
		}, why: "only \"system:serviceaccount:virt-system:virt-handler\""},
		{name: "the handler's account in another namespace", change: func(r *request) {
			r.username = "system:serviceaccount:tenant:virt-handler"
		}, why: "only"},
		{name: "a user", change: func(r *request) { r.username = "alice" }, why: "only"},
		{name: "a token bound to no node", change: func(r *request) {
			delete(r.extra, NodeNameExtra)
		}, why: NodeNameExtra},
		{name: "two node claims", change: func(r *request) {
			r.extra[NodeNameExtra] = certificatesv1.ExtraValue{"node-a", "node-b"}
		}, why: NodeNameExtra},
		{name: "a token bound to no pod", change: func(r *request) {
			delete(r.extra, PodNameExtra)
		}, why: PodNameExtra},
		{name: "a pod of another node", change: func(r *request) {
			r.extra[NodeNameExtra] = certificatesv1.ExtraValue{"node-b"}
			r.template = servingcert.Request("node-b", nil)
		}, why: `runs on node "node-a", not "node-b"`},
		{name: "a replaced pod", change: func(r *request) {
			r.extra[PodUIDExtra] = certificatesv1.ExtraValue{"old-uid"}
		}, why: "was replaced"},
		{name: "a pod that is gone", change: func(r *request) {
			r.extra[PodNameExtra] = certificatesv1.ExtraValue{"virt-handler-gone"}
		}, why: "is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ownRequest(t)
			tc.change(r)
			got, _ := run(t, r, time.Now())
			c := condition(got, certificatesv1.CertificateDenied)
			if c == nil || c.Reason != ReasonDenied || !strings.Contains(c.Message, tc.why) {
				t.Errorf("conditions %+v, want Denied saying %q", got.Status.Conditions, tc.why)
			}
			if condition(got, certificatesv1.CertificateApproved) != nil || len(got.Status.Certificate) != 0 {
				t.Errorf("approved or signed: %+v", got.Status)
			}
		})
	}
}

// TestOtherSignerLeftAlone: requests for other signers are not the
// controller's to approve, deny or sign.
func TestOtherSignerLeftAlone(t *testing.T) {
	r := ownRequest(t)
	r.signer = "kubernetes.io/kubelet-serving"
	got, _ := run(t, r, time.Now())
	if len(got.Status.Conditions) != 0 || len(got.Status.Certificate) != 0 {
		t.Errorf("status %+v, want untouched", got.Status)
	}
}

// TestSignerRefusesOtherShapes: a request someone else approved is signed
// only if it is a handler's serving certificate request.
func TestSignerRefusesOtherShapes(t *testing.T) {
	r := ownRequest(t)
	r.approved = true
	r.usages = []certificatesv1.KeyUsage{certificatesv1.UsageDigitalSignature, certificatesv1.UsageClientAuth}
	got, _ := run(t, r, time.Now())
	if c := condition(got, certificatesv1.CertificateFailed); c == nil || c.Reason != ReasonSignerFailure {
		t.Errorf("conditions %+v, want Failed", got.Status.Conditions)
	}
	if len(got.Status.Certificate) != 0 {
		t.Error("signed")
	}

	// An administrator's approval of another node's handler's request is
	// the administrator's call: the shape is right, it is signed.
	r = ownRequest(t)
	r.approved = true
	r.extra[NodeNameExtra] = certificatesv1.ExtraValue{"node-b"}
	got, _ = run(t, r, time.Now())
	if len(got.Status.Certificate) == 0 {
		t.Errorf("status %+v, want the certificate", got.Status)
	}
}
