package guestaccess_test

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/guestaccess/guestaccesstest"
)

func TestHandlersOff(t *testing.T) {
	pki := guestaccesstest.NewPKI(t)
	noKey := t.TempDir()
	for _, f := range []string{guestaccess.CAFile, guestaccess.CertFile} {
		data, err := os.ReadFile(filepath.Join(pki.ClientDir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(noKey, f), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name    string
		opts    func(*guestaccess.Options)
		kube    *rest.Config
		because string
	}{
		{name: "no certificate directory", opts: func(o *guestaccess.Options) { o.CertDir = "" }, because: "--handler-client-cert-dir is empty"},
		{name: "missing directory", opts: func(o *guestaccess.Options) { o.CertDir = filepath.Join(t.TempDir(), "none") }, because: "handler serving CA"},
		{name: "missing key", opts: func(o *guestaccess.Options) { o.CertDir = noKey }, because: "client certificate"},
		{name: "standalone without a resolver", opts: func(o *guestaccess.Options) { o.CertDir = pki.ClientDir }, because: "no kube-apiserver to find the virt-handler pods in"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := guestaccess.NewOptions()
			tc.opts(o)
			h, err := o.Handlers(tc.kube)
			if err != nil {
				t.Fatal(err)
			}
			on, why := h.Enabled()
			if on {
				t.Fatal("guest access is on")
			}
			_, _, err = h.Location("node-1", "default", "vm", "uid-1", "console")
			if !apierrors.IsServiceUnavailable(err) || err != why {
				t.Fatalf("Location = %v, want the 503 of Enabled (%v)", err, why)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, "guest access is not configured on this virt-apiserver: ") || !strings.Contains(msg, tc.because) {
				t.Errorf("message %q does not say %q", msg, tc.because)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	o := guestaccess.NewOptions()
	if errs := o.Validate(); len(errs) != 0 {
		t.Errorf("defaults: %v", errs)
	}
	o.Selector = "app in (("
	o.Namespace = ""
	o.PortName = ""
	if errs := o.Validate(); len(errs) != 3 {
		t.Errorf("bad selector, namespace and port: %v, want 3 errors", errs)
	}
	o.CertDir = ""
	if errs := o.Validate(); len(errs) != 0 {
		t.Errorf("guest access off: %v, want nothing to check", errs)
	}
}

// TestLocation: the handler's URL for a VMI and a transport that reaches a
// handler of the serving CA with virt-apiserver's client certificate, and
// refuses one whose certificate another CA signed, the client CA signed,
// or that is another node's.
func TestLocation(t *testing.T) {
	pki := guestaccesstest.NewPKI(t)
	good := guestaccesstest.NewHandler(t, pki.HandlerTLS(t, "node-1"))
	rogue := guestaccesstest.NewHandler(t, pki.HandlerTLSFrom(t, guestaccesstest.NewCA(t, "rogue-ca"), "node-2"))
	// node-b's key, answering where the VMI's node node-3 is dialled.
	otherNode := guestaccesstest.NewHandler(t, pki.HandlerTLS(t, "node-b"))
	clientCA := guestaccesstest.NewHandler(t, pki.HandlerTLSFrom(t, pki.CA, "node-4"))
	o := guestaccess.NewOptions()
	o.CertDir = pki.ClientDir
	o.Resolver = guestaccess.StaticResolver{"node-1": good.Addr(), "node-2": rogue.Addr(), "node-3": otherNode.Addr(), "node-4": clientCA.Addr(),
		"node-b": otherNode.Addr()}
	h, err := o.Handlers(nil)
	if err != nil {
		t.Fatal(err)
	}
	if on, why := h.Enabled(); !on {
		t.Fatal(why)
	}

	u, rt, err := h.Location("node-1", "ns-1", "vm-1", "uid-1", "pause")
	if err != nil {
		t.Fatal(err)
	}
	if want := "https://" + good.Addr() + "/v1/namespaces/ns-1/virtualmachineinstances/vm-1/pause?uid=uid-1"; u.String() != want {
		t.Errorf("URL %s, want %s", u, want)
	}
	resp := put(t, rt, u.String())
	if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/1.1" {
		t.Errorf("PUT through the transport: %s %s", resp.Proto, resp.Status)
	}
	if reqs := good.Requests(); len(reqs) != 1 || reqs[0].UID != "uid-1" || reqs[0].Path != "/v1/namespaces/ns-1/virtualmachineinstances/vm-1/pause" {
		t.Errorf("handler got %+v", reqs)
	}

	for node, want := range map[string]string{
		"node-2": "certificate signed by unknown authority",
		"node-3": "certificate is valid for node-b, not node-3",
		"node-4": "certificate signed by unknown authority",
	} {
		u, rt, err := h.Location(node, "ns-1", "vm-1", "uid-1", "pause")
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPut, u.String(), nil)
		if resp, err := rt.RoundTrip(req); err == nil || !strings.Contains(err.Error(), want) {
			if resp != nil {
				resp.Body.Close()
			}
			t.Errorf("%s: PUT = %v, want an error saying %q", node, err, want)
		}
	}
	if n := len(rogue.Requests()) + len(otherNode.Requests()) + len(clientCA.Requests()); n != 0 {
		t.Errorf("refused handlers got %d requests", n)
	}
	// The same handler is reached for its own node.
	u, rt, err = h.Location("node-b", "ns-1", "vm-1", "uid-1", "pause")
	if err != nil {
		t.Fatal(err)
	}
	if resp := put(t, rt, u.String()); resp.StatusCode != http.StatusOK || len(otherNode.Requests()) != 1 {
		t.Errorf("PUT to node-b's handler for node-b: %s, %d requests", resp.Status, len(otherNode.Requests()))
	}

	if _, _, err := h.Location("node-9", "ns-1", "vm-1", "uid-1", "pause"); !apierrors.IsServiceUnavailable(err) || !strings.Contains(err.Error(), "no ready virt-handler on node node-9") {
		t.Errorf("unknown node: %v", err)
	}
	if _, _, err := h.Location("", "ns-1", "vm-1", "uid-1", "pause"); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("no node: %v", err)
	}
}

func put(t *testing.T, rt http.RoundTripper, url string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPut, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
