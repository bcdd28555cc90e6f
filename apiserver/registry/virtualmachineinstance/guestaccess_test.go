package virtualmachineinstance

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/guestaccess/guestaccesstest"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

// guestFixture is the VMI store, a fake handler of node-1 and the
// guest-access subresources wired to both, as in the server.
type guestFixture struct {
	t       *testing.T
	ctx     context.Context
	storage *REST
	status  *StatusREST
	pki     *guestaccesstest.PKI
	handler *guestaccesstest.Handler
	guests  GuestAccess
}

func newGuestFixture(t *testing.T) *guestFixture {
	t.Helper()
	storage, status := newStorage(t)
	pki := guestaccesstest.NewPKI(t)
	f := &guestFixture{t: t, ctx: ctxFor(t), storage: storage, status: status, pki: pki,
		handler: guestaccesstest.NewHandler(t, pki.HandlerTLS(t, "node-1"))}
	f.wire(guestaccess.StaticResolver{"node-1": f.handler.Addr()})
	return f
}

// wire serves the subresources through the handlers resolver finds.
func (f *guestFixture) wire(resolver guestaccess.Resolver) {
	f.t.Helper()
	o := guestaccess.NewOptions()
	o.CertDir = f.pki.ClientDir
	o.Resolver = resolver
	handlers, err := o.Handlers(nil)
	if err != nil {
		f.t.Fatal(err)
	}
	f.wireHandlers(handlers)
}

func (f *guestFixture) wireHandlers(h Handlers) {
	f.t.Helper()
	g, err := NewGuestAccess(registrytest.NewScheme(), f.storage, h)
	if err != nil {
		f.t.Fatal(err)
	}
	f.guests = g
}

// vmi creates the VMI name and moves it to phase on node.
func (f *guestFixture) vmi(name string, phase virtualization.VirtualMachineInstancePhase, node string) *virtualization.VirtualMachineInstance {
	f.t.Helper()
	obj, err := f.storage.Create(f.ctx, validVMI(name), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	var path []virtualization.VirtualMachineInstancePhase
	switch phase {
	case virtualization.Scheduled:
		path = []virtualization.VirtualMachineInstancePhase{virtualization.Scheduled}
	case virtualization.Running:
		path = []virtualization.VirtualMachineInstancePhase{virtualization.Scheduled, virtualization.Running}
	case virtualization.Succeeded:
		path = []virtualization.VirtualMachineInstancePhase{virtualization.Scheduled, virtualization.Running, virtualization.Succeeded}
	}
	for _, p := range path {
		obj, _, err = f.status.Update(f.ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			vmi := old.(*virtualization.VirtualMachineInstance).DeepCopy()
			vmi.Status.SetPhase(p, "", metav1.Now())
			vmi.Status.NodeName = node
			return vmi, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			f.t.Fatalf("VMI %s to %s: %v", name, p, err)
		}
	}
	return obj.(*virtualization.VirtualMachineInstance)
}

// recorder is a rest.Responder that keeps the answer.
type recorder struct {
	code int
	obj  runtime.Object
	err  error
}

func (r *recorder) Object(code int, obj runtime.Object) { r.code, r.obj = code, obj }
func (r *recorder) Error(err error)                     { r.err = err }

// connecter is what every guest-access subresource is.
type connecter interface {
	Connect(ctx context.Context, name string, opts runtime.Object, responder rest.Responder) (http.Handler, error)
}

func (f *guestFixture) subresources() map[string]connecter {
	return map[string]connecter{
		"console": f.guests.Console, "vnc": f.guests.VNC,
		"pause": f.guests.Pause, "unpause": f.guests.Unpause, "softreboot": f.guests.SoftReboot,
	}
}

// act sends an action's PUT with body and returns what the responder got.
func (f *guestFixture) act(sub, name, body string) (*metav1.Status, error) {
	f.t.Helper()
	res := &recorder{}
	h, err := f.subresources()[sub].Connect(f.ctx, name, nil, res)
	if err != nil {
		return nil, err
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodPut, "/"+sub, strings.NewReader(body)))
	if res.err != nil {
		return nil, res.err
	}
	if res.code != http.StatusOK {
		f.t.Fatalf("%s answered %d %v", sub, res.code, res.obj)
	}
	return res.obj.(*metav1.Status), nil
}

// open connects to a stream subresource: the error of Connect, or of the
// handler it returns for a GET without an upgrade.
func (f *guestFixture) open(sub, name string) error {
	f.t.Helper()
	res := &recorder{}
	h, err := f.subresources()[sub].Connect(f.ctx, name, nil, res)
	if err != nil {
		return err
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/"+sub, nil))
	return res.err
}

// reach runs sub (a stream or an action) on name and returns its error.
func (f *guestFixture) reach(sub, name string) error {
	f.t.Helper()
	if sub == "console" || sub == "vnc" {
		return f.open(sub, name)
	}
	_, err := f.act(sub, name, "")
	return err
}

func wantAPIError(t *testing.T, what string, err error, code int32, msg string) {
	t.Helper()
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Code != code || !strings.Contains(st.Status().Message, msg) {
		t.Errorf("%s: err = %v, want %d with %q", what, err, code, msg)
	}
}

var subresources = []string{"console", "vnc", "pause", "unpause", "softreboot"}

// TestGuestAccessFindsARunningVMI: a missing VMI is a 404 and one that is
// not running a 409 with its phase, before any handler is called.
func TestGuestAccessFindsARunningVMI(t *testing.T) {
	f := newGuestFixture(t)
	f.vmi("pending", virtualization.Pending, "")
	f.vmi("scheduled", virtualization.Scheduled, "node-1")
	f.vmi("done", virtualization.Succeeded, "node-1")
	for _, sub := range subresources {
		t.Run(sub, func(t *testing.T) {
			err := f.reach(sub, "missing")
			if !apierrors.IsNotFound(err) {
				t.Errorf("missing VMI: err = %v, want 404", err)
			}
			wantAPIError(t, "pending", f.reach(sub, "pending"), http.StatusConflict, "VMI pending is not running (phase Pending)")
			wantAPIError(t, "scheduled", f.reach(sub, "scheduled"), http.StatusConflict, "VMI scheduled is not running (phase Scheduled)")
			wantAPIError(t, "succeeded", f.reach(sub, "done"), http.StatusConflict, "VMI done is not running (phase Succeeded)")
			if err := f.reach(sub, "scheduled"); !apierrors.IsConflict(err) {
				t.Errorf("not running: reason %v, want Conflict", apierrors.ReasonForError(err))
			}
		})
	}
	if reqs := f.handler.Requests(); len(reqs) != 0 {
		t.Errorf("the handler was called: %+v", reqs)
	}
}

// TestGuestAccessWithoutHandler: guest access that is off, or a node
// without a handler, is a 503 that says so.
func TestGuestAccessWithoutHandler(t *testing.T) {
	f := newGuestFixture(t)
	f.vmi("vm", virtualization.Running, "node-2")
	for _, sub := range subresources {
		wantAPIError(t, sub+" on a node without a handler", f.reach(sub, "vm"), http.StatusServiceUnavailable, "no ready virt-handler on node node-2")
	}
	f.wireHandlers(guestaccess.Off("--handler-client-cert-dir is empty"))
	for _, sub := range subresources {
		wantAPIError(t, sub+" with guest access off", f.reach(sub, "vm"), http.StatusServiceUnavailable, "guest access is not configured on this virt-apiserver")
	}
}

// TestActionsForwarded: an action is a PUT to the handler of the VMI's node
// with the VMI's UID, answered with a success Status.
func TestActionsForwarded(t *testing.T) {
	f := newGuestFixture(t)
	vmi := f.vmi("vm", virtualization.Running, "node-1")
	for _, tc := range []struct{ sub, body, msg string }{
		{"pause", `{"dryRun":[]}`, "VMI vm was paused"},
		{"unpause", "", "VMI vm was unpaused"},
		{"softreboot", "", "VMI vm was asked to reboot"},
		// KubeVirt's clients send none, or {}.
		{"softreboot", `{}`, "VMI vm was asked to reboot"},
		{"softreboot", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"SoftRebootOptions"}`, "VMI vm was asked to reboot"},
	} {
		before := len(f.handler.Requests())
		st, err := f.act(tc.sub, "vm", tc.body)
		if err != nil {
			t.Fatalf("%s: %v", tc.sub, err)
		}
		if st.Status != metav1.StatusSuccess || st.Code != http.StatusOK || st.Message != tc.msg {
			t.Errorf("%s answered %+v, want Success %q", tc.sub, st, tc.msg)
		}
		reqs := f.handler.Requests()
		if len(reqs) != before+1 {
			t.Fatalf("%s: handler got %d requests, want 1", tc.sub, len(reqs)-before)
		}
		got := reqs[before]
		if got.Method != http.MethodPut || got.Path != "/v1/namespaces/test/virtualmachineinstances/vm/"+tc.sub || got.UID != string(vmi.UID) {
			t.Errorf("%s: handler got %+v, want PUT of the VMI with uid %s", tc.sub, got, vmi.UID)
		}
	}
}

// TestActionsPassTheHandlersErrorOn: the handler's Status error is the
// API's answer, code, reason and message.
func TestActionsPassTheHandlersErrorOn(t *testing.T) {
	f := newGuestFixture(t)
	f.vmi("vm", virtualization.Running, "node-1")
	for _, st := range []metav1.Status{
		guestaccesstest.Failure(http.StatusConflict, metav1.StatusReasonConflict, "VMI vm is already paused"),
		guestaccesstest.Failure(http.StatusNotImplemented, metav1.StatusReasonBadRequest, "the launcher of VMI vm is too old for pause"),
		guestaccesstest.Failure(http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable, "the launcher of VMI vm is not answering"),
		guestaccesstest.Failure(http.StatusGatewayTimeout, metav1.StatusReasonTimeout, "the launcher of VMI vm did not answer in time"),
	} {
		f.handler.Answer("pause", st)
		_, err := f.act("pause", "vm", "")
		wantAPIError(t, st.Message, err, st.Code, st.Message)
		if got := apierrors.ReasonForError(err); got != st.Reason {
			t.Errorf("%s: reason %s, want %s", st.Message, got, st.Reason)
		}
	}
}

// TestActionDryRun: a dry run finds the VMI and its handler and answers
// success without calling the handler; a bad dryRun value is a 422.
func TestActionDryRun(t *testing.T) {
	f := newGuestFixture(t)
	f.vmi("vm", virtualization.Running, "node-1")
	f.vmi("scheduled", virtualization.Scheduled, "node-1")
	for _, sub := range []string{"pause", "unpause", "softreboot"} {
		st, err := f.act(sub, "vm", `{"dryRun":["All"]}`)
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if st.Status != metav1.StatusSuccess || !strings.Contains(st.Message, "dry run: virt-handler was not called") {
			t.Errorf("%s dry run answered %+v", sub, st)
		}
		_, err = f.act(sub, "scheduled", `{"dryRun":["All"]}`)
		wantAPIError(t, sub+" dry run of a VMI not running", err, http.StatusConflict, "is not running")
		_, err = f.act(sub, "vm", `{"dryRun":["Some"]}`)
		wantAPIError(t, sub+" with dryRun Some", err, http.StatusUnprocessableEntity, "dryRun")
	}
	if reqs := f.handler.Requests(); len(reqs) != 0 {
		t.Errorf("a dry run called the handler: %+v", reqs)
	}
}

// serve serves the fixture's streams as the API server does, at
// /console/NAME and /vnc/NAME, writing errors as Status.
func (f *guestFixture) serve() *httptest.Server {
	f.t.Helper()
	mux := http.NewServeMux()
	for sub, c := range map[string]connecter{"console": f.guests.Console, "vnc": f.guests.VNC} {
		mux.HandleFunc("/"+sub+"/{name}", func(w http.ResponseWriter, r *http.Request) {
			res := &statusWriter{w: w}
			h, err := c.Connect(f.ctx, r.PathValue("name"), nil, res)
			if err != nil {
				res.Error(err)
				return
			}
			h.ServeHTTP(w, r)
		})
	}
	srv := httptest.NewServer(mux)
	f.t.Cleanup(srv.Close)
	return srv
}

// statusWriter answers like the API server's responder.
type statusWriter struct{ w http.ResponseWriter }

func (s *statusWriter) Object(code int, obj runtime.Object) {
	s.w.WriteHeader(code)
	_ = json.NewEncoder(s.w).Encode(obj)
}

func (s *statusWriter) Error(err error) {
	st := apierrors.NewInternalError(err).Status()
	if se, ok := err.(apierrors.APIStatus); ok {
		st = se.Status()
	}
	s.w.Header().Set("Content-Type", "application/json")
	s.w.WriteHeader(int(st.Code))
	_ = json.NewEncoder(s.w).Encode(st)
}

// dial opens a stream of srv with the streams' subprotocol.
func dial(t *testing.T, srv *httptest.Server, sub, name string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: []string{guestaccesstest.Subprotocol}}
	ws, resp, err := d.DialContext(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http")+"/"+sub+"/"+name, nil)
	if ws != nil {
		t.Cleanup(func() { ws.Close() })
	}
	return ws, resp, err
}

// TestStreamsProxied: console and VNC are WebSocket upgrades proxied to
// the handler of the VMI's node, which terminates them; a GET without an
// upgrade is a 400 before the handler is dialled.
func TestStreamsProxied(t *testing.T) {
	f := newGuestFixture(t)
	vmi := f.vmi("vm", virtualization.Running, "node-1")
	srv := f.serve()
	for _, sub := range []string{"console", "vnc"} {
		ws, _, err := dial(t, srv, sub, "vm")
		if err != nil {
			t.Fatalf("%s: %v", sub, err)
		}
		if ws.Subprotocol() != guestaccesstest.Subprotocol {
			t.Errorf("%s: subprotocol %q", sub, ws.Subprotocol())
		}
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte("echo $((6*7))\r")); err != nil {
			t.Fatal(err)
		}
		kind, data, err := ws.ReadMessage()
		if err != nil || kind != websocket.BinaryMessage || string(data) != "echo $((6*7))\r" {
			t.Errorf("%s: read %d %q %v, want the bytes echoed", sub, kind, data, err)
		}
		reqs := f.handler.Requests()
		if got := reqs[len(reqs)-1]; got.Path != "/v1/namespaces/test/virtualmachineinstances/vm/"+sub || got.UID != string(vmi.UID) ||
			len(got.Subprotocols) != 1 || got.Subprotocols[0] != guestaccesstest.Subprotocol {
			t.Errorf("%s: handler got %+v", sub, got)
		}
		before := len(reqs)
		wantAPIError(t, sub+" without an upgrade", f.open(sub, "vm"), http.StatusBadRequest, "Upgrade request required")
		if len(f.handler.Requests()) != before {
			t.Errorf("%s without an upgrade dialled the handler", sub)
		}
	}

	// The handler's refusal of a stream reaches the client as it is.
	f.handler.Answer("console", guestaccesstest.Failure(http.StatusConflict, metav1.StatusReasonConflict, "VMI vm is not running (phase Succeeded)"))
	_, resp, err := dial(t, srv, "console", "vm")
	if err == nil || resp == nil || resp.StatusCode != http.StatusConflict {
		t.Fatalf("refused console: err %v, response %v", err, resp)
	}
	var st metav1.Status
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Message != "VMI vm is not running (phase Succeeded)" {
		t.Errorf("refused console: %+v %v", st, err)
	}
}

// TestUntrustedHandlerRefused: a handler whose certificate the handler
// serving CA did not sign, or that is another node's, is never talked to:
// the client gets a 503 that says why. The second is a node's key
// answering for another node: the VMI vm2 is on node-2, its address
// answers with node-1's certificate.
func TestUntrustedHandlerRefused(t *testing.T) {
	f := newGuestFixture(t)
	rogue := guestaccesstest.NewHandler(t, f.pki.HandlerTLSFrom(t, guestaccesstest.NewCA(t, "rogue-ca"), "node-1"))
	misnamed := guestaccesstest.NewHandler(t, f.pki.HandlerTLS(t, "node-1"))
	f.wire(guestaccess.StaticResolver{"node-1": rogue.Addr(), "node-2": misnamed.Addr()})
	f.vmi("vm", virtualization.Running, "node-1")
	f.vmi("vm2", virtualization.Running, "node-2")
	srv := f.serve()
	for name, why := range map[string]string{"vm": "certificate signed by unknown authority", "vm2": "certificate is valid for node-1, not node-2"} {
		for _, sub := range []string{"console", "vnc"} {
			_, resp, err := dial(t, srv, sub, name)
			if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
				t.Fatalf("%s of %s: err %v, response %v; want 503", sub, name, err, resp)
			}
			var st metav1.Status
			if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !strings.Contains(st.Message, "cannot reach the virt-handler of node") || !strings.Contains(st.Message, why) {
				t.Errorf("%s of %s: %q, want why (%s)", sub, name, st.Message, why)
			}
		}
		for _, sub := range []string{"pause", "unpause", "softreboot"} {
			_, err := f.act(sub, name, "")
			wantAPIError(t, sub+" of "+name, err, http.StatusServiceUnavailable, why)
		}
	}
	if n := len(rogue.Requests()) + len(misnamed.Requests()); n != 0 {
		t.Errorf("untrusted handlers got %d requests", n)
	}
}
