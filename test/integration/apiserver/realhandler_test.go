package apiserver

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/guestaccess/guestaccesstest"
	"kubevirt.dev/virt/apiserver/testserver"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	handleraccess "kubevirt.dev/virt/node/guestaccess"
)

// TestRealHandlerAnswersPassedOn: virt-apiserver's client side of the
// mutual TLS fits virt-handler's server side (node/guestaccess), with
// certificates issued as hack/cluster/certs.sh issues them, and the
// handler's own answers reach the client unchanged: a VMI the handler's
// informer does not hold is its 404, one without a launcher pod its 503.
func TestRealHandlerAnswersPassedOn(t *testing.T) {
	pki := guestaccesstest.NewPKI(t)
	vmis := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID})
	handler := handleraccess.New(handleraccess.Config{
		NodeName:   "node-1",
		ClientName: handleraccess.DefaultClientName,
		VMIs:       virtlisters.NewVirtualMachineInstanceLister(vmis),
		Pods:       pods,
		HasSynced:  func() bool { return true },
	})
	srv := httptest.NewUnstartedServer(handler.Handler())
	serving := pki.ServingCA.Issue(t, "node-1", x509.ExtKeyUsageServerAuth, "node-1")
	srv.TLS = handleraccess.TLSConfig(pki.CA.Pool(), func() *tls.Certificate { return &serving }, handleraccess.DefaultClientName)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	s := testserver.Start(t, t.TempDir(), testserver.WithGuestAccess(pki.ClientDir,
		guestaccess.StaticResolver{"node-1": srv.Listener.Addr().String()}))
	client := newClient(t, s.ClientConfig)
	vmi := runningVMI(t, client, "vm", "node-1")

	// Not in the handler's informer yet.
	_, err := vmiAction(t, client, "vm", "pause", &virtv1.PauseOptions{})
	wantStatus(t, "pause of a VMI the handler does not know", err, http.StatusNotFound, `"vm" not found`)

	// Known, Running, but no launcher pod.
	if err := vmis.Add(vmi); err != nil {
		t.Fatal(err)
	}
	for _, action := range []string{"pause", "unpause", "softreboot"} {
		_, err = vmiAction(t, client, "vm", action, nil)
		wantStatus(t, action+" without a launcher pod", err, http.StatusServiceUnavailable, "no running launcher pod of VMI vm on node node-1")
	}
	_, resp, err := dialStream(t, s, "vm", "console")
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("console without a launcher pod: %v %v, want the handler's 503", err, resp)
	}
}

// TestHandlerOfAnotherNodeRefused: a real handler serving node-b's
// certificate, at the address virt-apiserver resolves for node-a (a key
// taken from node-b, or a pod IP now node-b's), is refused for a VMI on
// node-a before any request reaches it; the same handler is reached for a
// VMI on node-b.
func TestHandlerOfAnotherNodeRefused(t *testing.T) {
	pki := guestaccesstest.NewPKI(t)
	vmis := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	pods := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID})
	var requests atomic.Int32
	handler := handleraccess.New(handleraccess.Config{
		NodeName:   "node-b",
		ClientName: handleraccess.DefaultClientName,
		VMIs:       virtlisters.NewVirtualMachineInstanceLister(vmis),
		Pods:       pods,
		HasSynced:  func() bool { return true },
	})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		handler.Handler().ServeHTTP(w, r)
	}))
	serving := pki.ServingCA.Issue(t, "node-b", x509.ExtKeyUsageServerAuth, "node-b")
	srv.TLS = handleraccess.TLSConfig(pki.CA.Pool(), func() *tls.Certificate { return &serving }, handleraccess.DefaultClientName)
	srv.StartTLS()
	t.Cleanup(srv.Close)

	s := testserver.Start(t, t.TempDir(), testserver.WithGuestAccess(pki.ClientDir,
		guestaccess.StaticResolver{"node-a": srv.Listener.Addr().String(), "node-b": srv.Listener.Addr().String()}))
	client := newClient(t, s.ClientConfig)
	runningVMI(t, client, "on-a", "node-a")
	runningVMI(t, client, "on-b", "node-b")

	const why = "certificate is valid for node-b, not node-a"
	for _, action := range []string{"pause", "unpause", "softreboot"} {
		_, err := vmiAction(t, client, "on-a", action, nil)
		wantStatus(t, action+" of a VMI on node-a", err, http.StatusServiceUnavailable, why)
	}
	for _, sub := range []string{"console", "vnc"} {
		_, resp, err := dialStream(t, s, "on-a", sub)
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s of a VMI on node-a: %v %v, want 503", sub, err, resp)
		}
		var st metav1.Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !strings.Contains(st.Message, why) {
			t.Errorf("%s of a VMI on node-a: %q %v, want %q", sub, st.Message, err, why)
		}
	}
	if n := requests.Load(); n != 0 {
		t.Fatalf("the handler of node-b got %d requests for node-a's VMI", n)
	}

	// For its own node it is reached: its own answer (it does not hold the
	// VMI in its informer) comes back.
	_, err := vmiAction(t, client, "on-b", "pause", nil)
	wantStatus(t, "pause of a VMI on node-b", err, http.StatusNotFound, `"on-b" not found`)
	if requests.Load() == 0 {
		t.Error("the handler of node-b was not reached for its own VMI")
	}
}
