package apiserver

import (
	"crypto/x509"
	"net/http"
	"net/http/httptest"
	"testing"

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
	srv.TLS = handleraccess.TLSConfig(pki.CA.Pool(),
		pki.CA.Issue(t, guestaccess.ServerName, x509.ExtKeyUsageServerAuth, guestaccess.ServerName),
		handleraccess.DefaultClientName)
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
