package apiserver

import (
	"bytes"
	"crypto/tls"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/guestaccess/guestaccesstest"
	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// startWithHandler runs a server whose guest access reaches a fake
// handler of node-1 with certificates made for the test.
func startWithHandler(t *testing.T) (*testserver.Server, virtclient.Interface, *guestaccesstest.Handler) {
	t.Helper()
	pki := guestaccesstest.NewPKI(t)
	handler := guestaccesstest.NewHandler(t, pki.HandlerTLS(t, "node-1"))
	s := testserver.Start(t, t.TempDir(), testserver.WithGuestAccess(pki.ClientDir, guestaccess.StaticResolver{"node-1": handler.Addr()}))
	return s, newClient(t, s.ClientConfig), handler
}

// runningVMI creates the VMI name and hands it to node, Running, as
// virt-controller and virt-handler would.
func runningVMI(t *testing.T, client virtclient.Interface, name, node string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)
	vmi, err := vmis.Create(t.Context(), tinyVMI(name), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, phase := range []virtv1.VirtualMachineInstancePhase{virtv1.Scheduled, virtv1.Running} {
		vmi.Status.SetPhase(phase, "", metav1.Now())
		vmi.Status.NodeName = node
		if vmi, err = vmis.UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return vmi
}

// vmiAction sends a PUT to virtualmachineinstances/NAME/action, with body
// unless it is nil, and returns the answer's status.
func vmiAction(t *testing.T, client virtclient.Interface, name, action string, body runtime.Object) (*metav1.Status, error) {
	t.Helper()
	req := client.VirtualizationV1().RESTClient().Put().Namespace(ns).Resource("virtualmachineinstances").Name(name).SubResource(action)
	if body != nil {
		req = req.Body(body)
	}
	obj, err := req.Do(t.Context()).Get()
	if err != nil {
		return nil, err
	}
	st, ok := obj.(*metav1.Status)
	if !ok {
		t.Fatalf("%s answered a %T, want a Status", action, obj)
	}
	return st, nil
}

// dialStream opens the WebSocket of a VMI's stream through the server, as
// virtctl does through the aggregator.
func dialStream(t *testing.T, s *testserver.Server, name, sub string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{
		Subprotocols:    []string{guestaccesstest.Subprotocol},
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // the test server's certificate is self-signed
	}
	u := "wss" + strings.TrimPrefix(s.ClientConfig.Host, "https") +
		"/apis/virtualization.kubevirt.io/v1/namespaces/" + ns + "/virtualmachineinstances/" + name + "/" + sub
	ws, resp, err := d.DialContext(t.Context(), u, nil)
	if ws != nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

// TestConsoleThroughServer: the console and VNC of a running VMI are
// WebSocket streams (plain.kubevirt.io) proxied by the server to the
// handler of its node, bytes going both ways.
func TestConsoleThroughServer(t *testing.T) {
	s, client, handler := startWithHandler(t)
	vmi := runningVMI(t, client, "vm", "node-1")
	for _, sub := range []string{"console", "vnc"} {
		ws, _, err := dialStream(t, s, "vm", sub)
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if ws.Subprotocol() != guestaccesstest.Subprotocol {
			t.Errorf("%s: subprotocol %q", sub, ws.Subprotocol())
		}
		for _, msg := range []string{"echo $((6*7))\r", strings.Repeat("x", 64<<10)} {
			if err := ws.WriteMessage(websocket.BinaryMessage, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			kind, data, err := ws.ReadMessage()
			if err != nil || kind != websocket.BinaryMessage || string(data) != msg {
				t.Fatalf("%s: read %d, %d bytes, %v; want the %d bytes echoed", sub, kind, len(data), err, len(msg))
			}
		}
		ws.Close()
		reqs := handler.Requests()
		if got := reqs[len(reqs)-1]; got.Path != "/v1/namespaces/"+ns+"/virtualmachineinstances/vm/"+sub || got.UID != string(vmi.UID) {
			t.Errorf("%s: handler got %+v", sub, got)
		}
	}

	// Not running: 409 from the server; refused by the handler: its Status.
	if _, err := client.VirtualizationV1().VirtualMachineInstances(ns).Create(t.Context(), tinyVMI("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, resp, err := dialStream(t, s, "pending", "console")
	if err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Errorf("console of a pending VMI: %v %v, want 409", err, resp)
	}
	handler.Answer("vnc", guestaccesstest.Failure(http.StatusBadRequest, metav1.StatusReasonBadRequest, "VMI vm has no graphics device"))
	_, resp, err = dialStream(t, s, "vm", "vnc")
	if err == nil || resp == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("VNC refused by the handler: %v %v, want its 400", err, resp)
	}
}

// TestVMIActionsThroughServer: pause, unpause and softreboot reach the
// handler with the VMI's UID, its errors come back as they are, and a dry
// run does not reach it.
func TestVMIActionsThroughServer(t *testing.T) {
	_, client, handler := startWithHandler(t)
	vmi := runningVMI(t, client, "vm", "node-1")

	st, err := vmiAction(t, client, "vm", "pause", &virtv1.PauseOptions{})
	if err != nil || st.Status != metav1.StatusSuccess || st.Message != "VMI vm was paused" {
		t.Fatalf("pause: %+v, %v", st, err)
	}
	reqs := handler.Requests()
	if len(reqs) != 1 || reqs[0].Method != http.MethodPut || reqs[0].Path != "/v1/namespaces/"+ns+"/virtualmachineinstances/vm/pause" || reqs[0].UID != string(vmi.UID) {
		t.Errorf("handler got %+v, want one PUT of pause with uid %s", reqs, vmi.UID)
	}

	handler.Answer("pause", guestaccesstest.Failure(http.StatusConflict, metav1.StatusReasonConflict, "VMI vm is already paused"))
	_, err = vmiAction(t, client, "vm", "pause", &virtv1.PauseOptions{})
	wantStatus(t, "pause of a paused guest", err, http.StatusConflict, "VMI vm is already paused")
	if !apierrors.IsConflict(err) {
		t.Errorf("pause of a paused guest: reason %s, want Conflict", apierrors.ReasonForError(err))
	}

	// No body at all, as KubeVirt's clients send it.
	if st, err := vmiAction(t, client, "vm", "softreboot", nil); err != nil || st.Message != "VMI vm was asked to reboot" {
		t.Errorf("softreboot: %+v, %v", st, err)
	}
	if st, err := vmiAction(t, client, "vm", "unpause", nil); err != nil || st.Status != metav1.StatusSuccess {
		t.Errorf("unpause without a body: %+v, %v", st, err)
	}

	before := len(handler.Requests())
	st, err = vmiAction(t, client, "vm", "unpause", &virtv1.UnpauseOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil || !strings.Contains(st.Message, "dry run") {
		t.Errorf("dry-run unpause: %+v, %v", st, err)
	}
	if len(handler.Requests()) != before {
		t.Error("a dry run reached the handler")
	}

	_, err = vmiAction(t, client, "missing", "pause", &virtv1.PauseOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("pause of a missing VMI: %v, want 404", err)
	}

	// The generated client's methods (+genclient:method), protobuf bodies
	// and answers as the clientset prefers.
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)
	before = len(handler.Requests())
	if st, err := vmis.SoftReboot(t.Context(), "vm", &virtv1.SoftRebootOptions{DryRun: []string{metav1.DryRunAll}}, metav1.UpdateOptions{}); err != nil || !strings.Contains(st.Message, "dry run") {
		t.Errorf("SoftReboot dry run: %+v, %v", st, err)
	}
	if len(handler.Requests()) != before {
		t.Error("a dry run reached the handler")
	}
	if st, err := vmis.SoftReboot(t.Context(), "vm", &virtv1.SoftRebootOptions{}, metav1.UpdateOptions{}); err != nil || st.Message != "VMI vm was asked to reboot" {
		t.Errorf("SoftReboot: %+v, %v", st, err)
	}
	if _, err := vmis.Unpause(t.Context(), "vm", &virtv1.UnpauseOptions{}, metav1.UpdateOptions{}); err != nil {
		t.Errorf("Unpause: %v", err)
	}
	_, err = vmis.Pause(t.Context(), "vm", &virtv1.PauseOptions{}, metav1.UpdateOptions{})
	wantStatus(t, "Pause of a paused guest", err, http.StatusConflict, "VMI vm is already paused")
}

// TestScreenshotThroughServer: vnc/screenshot, KubeVirt's URL below the
// vnc subresource, is a GET of the handler's PNG with the VMI's UID; the
// handler's refusal comes back as it is.
func TestScreenshotThroughServer(t *testing.T) {
	_, client, handler := startWithHandler(t)
	vmi := runningVMI(t, client, "vm", "node-1")
	rc := client.VirtualizationV1().RESTClient()
	get := func(name, query string) ([]byte, error) {
		req := rc.Get().Namespace(ns).Resource("virtualmachineinstances").Name(name).SubResource("vnc", "screenshot")
		if query != "" {
			req = req.Param("moveCursor", query)
		}
		res := req.Do(t.Context())
		if _, err := res.Raw(); err != nil {
			return nil, res.Error()
		}
		return res.Raw()
	}
	data, err := get("vm", "true")
	if err != nil || !bytes.Equal(data, guestaccesstest.ScreenshotPNG) {
		t.Fatalf("screenshot: %d bytes, %v; want the handler's PNG", len(data), err)
	}
	reqs := handler.Requests()
	if got := reqs[len(reqs)-1]; got.Method != http.MethodGet || got.Path != "/v1/namespaces/"+ns+"/virtualmachineinstances/vm/vnc/screenshot" || got.UID != string(vmi.UID) {
		t.Errorf("handler got %+v", got)
	}
	_, err = get("vm", "often")
	wantStatus(t, "moveCursor=often", err, http.StatusBadRequest, "moveCursor")
	_, err = get("missing", "")
	wantStatus(t, "screenshot of a missing VMI", err, http.StatusNotFound, "")
	handler.Answer("vnc/screenshot", guestaccesstest.Failure(http.StatusConflict, metav1.StatusReasonConflict, "VMI vm: 7680x4320 is more than 8294400 pixels"))
	_, err = get("vm", "")
	wantStatus(t, "a screen beyond the cap", err, http.StatusConflict, "7680x4320")
	err = rc.Get().Namespace(ns).Resource("virtualmachineinstances").Name("vm").SubResource("vnc", "other").Do(t.Context()).Error()
	wantStatus(t, "vnc/other", err, http.StatusNotFound, "")
}

// TestGuestAccessVerbs: each subresource answers its method only.
func TestGuestAccessVerbs(t *testing.T) {
	_, client, handler := startWithHandler(t)
	runningVMI(t, client, "vm", "node-1")
	rc := client.VirtualizationV1().RESTClient()
	for _, tc := range []struct {
		method, sub string
		code        int32
	}{
		{http.MethodPost, "pause", http.StatusMethodNotAllowed},
		{http.MethodGet, "pause", http.StatusMethodNotAllowed},
		{http.MethodDelete, "unpause", http.StatusMethodNotAllowed},
		{http.MethodPost, "softreboot", http.StatusMethodNotAllowed},
		{http.MethodPut, "console", http.StatusMethodNotAllowed},
		{http.MethodPost, "vnc", http.StatusMethodNotAllowed},
		// A GET of a stream without the upgrade.
		{http.MethodGet, "console", http.StatusBadRequest},
	} {
		err := rc.Verb(tc.method).Namespace(ns).Resource("virtualmachineinstances").Name("vm").SubResource(tc.sub).Do(t.Context()).Error()
		wantStatus(t, tc.method+" "+tc.sub, err, tc.code, "")
	}
	// Connect subresources have no dry run in k8s.io/apiserver; the option
	// bodies have.
	err := rc.Put().Namespace(ns).Resource("virtualmachineinstances").Name("vm").SubResource("softreboot").
		Param("dryRun", metav1.DryRunAll).Do(t.Context()).Error()
	wantStatus(t, "softreboot with ?dryRun", err, http.StatusBadRequest, "dryRun is not supported")
	if n := len(handler.Requests()); n != 0 {
		t.Errorf("refused requests reached the handler %d times", n)
	}
}

// TestGuestAccessInDiscovery: clients find the subresources with the verbs
// RBAC grants for them (kubectl get --raw /apis/virtualization.kubevirt.io/v1).
func TestGuestAccessInDiscovery(t *testing.T) {
	_, client := start(t)
	resources, err := client.Discovery().ServerResourcesForGroupVersion(virtv1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct{ kind, verb string }{
		"virtualmachineinstances/console":    {"VirtualMachineInstance", "get"},
		"virtualmachineinstances/vnc":        {"VirtualMachineInstance", "get"},
		"virtualmachineinstances/pause":      {"PauseOptions", "update"},
		"virtualmachineinstances/unpause":    {"UnpauseOptions", "update"},
		"virtualmachineinstances/softreboot": {"SoftRebootOptions", "update"},
	}
	for _, r := range resources.APIResources {
		w, ok := want[r.Name]
		if !ok {
			continue
		}
		delete(want, r.Name)
		if r.Kind != w.kind || len(r.Verbs) != 1 || r.Verbs[0] != w.verb || !r.Namespaced {
			t.Errorf("%s: kind %s, verbs %v, namespaced %v; want %s, [%s], true", r.Name, r.Kind, r.Verbs, r.Namespaced, w.kind, w.verb)
		}
	}
	for name := range want {
		t.Errorf("%s is not discovered", name)
	}
}

// TestGuestAccessOff: a server without handler certificates serves the API
// and answers guest access with a 503 that says why.
func TestGuestAccessOff(t *testing.T) {
	s, client := start(t)
	runningVMI(t, client, "vm", "node-1")
	_, err := vmiAction(t, client, "vm", "pause", &virtv1.PauseOptions{})
	wantStatus(t, "pause", err, http.StatusServiceUnavailable, "guest access is not configured on this virt-apiserver")
	_, resp, err := dialStream(t, s, "vm", "console")
	if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("console: %v %v, want 503", err, resp)
	}
}
