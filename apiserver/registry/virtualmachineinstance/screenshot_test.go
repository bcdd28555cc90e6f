package virtualmachineinstance

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/endpoints/request"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/guestaccess/guestaccesstest"
)

// screenshot GETs vnc/screenshot of name with query as the API server
// routes it (the path below vnc in the request info), and returns the
// error of Connect or the responder, or the response.
func (f *guestFixture) screenshot(name, query string) (*httptest.ResponseRecorder, error) {
	f.t.Helper()
	ctx := request.WithRequestInfo(f.ctx, &request.RequestInfo{
		Verb: "get", Resource: "virtualmachineinstances", Subresource: "vnc", Name: name,
		Parts: []string{"virtualmachineinstances", name, "vnc", "screenshot"},
	})
	res := &recorder{}
	h, err := f.guests.VNC.Connect(ctx, name, nil, res)
	if err != nil {
		return nil, err
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/vnc/screenshot?"+query, nil))
	return w, res.err
}

// TestScreenshot: vnc/screenshot is a GET of the handler's screenshot of
// the VMI with its UID, the PNG passed on; the handler's refusal is the
// API's answer; moveCursor is KubeVirt's boolean.
func TestScreenshot(t *testing.T) {
	f := newGuestFixture(t)
	vmi := f.vmi("vm", virtualization.Running, "node-1")
	f.vmi("scheduled", virtualization.Scheduled, "node-1")

	for _, query := range []string{"", "moveCursor=false", "moveCursor=true"} {
		w, err := f.screenshot("vm", query)
		if err != nil {
			t.Fatalf("screenshot?%s: %v", query, err)
		}
		if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "image/png" || !bytes.Equal(w.Body.Bytes(), guestaccesstest.ScreenshotPNG) {
			t.Errorf("screenshot?%s answered %d %q, %d bytes", query, w.Code, w.Header().Get("Content-Type"), w.Body.Len())
		}
	}
	reqs := f.handler.Requests()
	if len(reqs) != 3 {
		t.Fatalf("handler got %d requests, want 3", len(reqs))
	}
	if got := reqs[0]; got.Method != http.MethodGet || got.Path != "/v1/namespaces/test/virtualmachineinstances/vm/vnc/screenshot" || got.UID != string(vmi.UID) {
		t.Errorf("handler got %+v, want GET of the VMI's screenshot with uid %s", got, vmi.UID)
	}

	_, err := f.screenshot("vm", "moveCursor=maybe")
	wantAPIError(t, "moveCursor=maybe", err, http.StatusBadRequest, "moveCursor")
	_, err = f.screenshot("scheduled", "")
	wantAPIError(t, "not running", err, http.StatusConflict, "VMI scheduled is not running (phase Scheduled)")
	_, err = f.screenshot("missing", "")
	wantAPIError(t, "missing", err, http.StatusNotFound, "missing")
	if n := len(f.handler.Requests()); n != 3 {
		t.Errorf("refused screenshots reached the handler: %d requests", n)
	}

	f.handler.Answer("vnc/screenshot", guestaccesstest.Failure(http.StatusNotImplemented, metav1.StatusReasonBadRequest, "the launcher of VMI vm is too old for screenshot"))
	_, err = f.screenshot("vm", "")
	wantAPIError(t, "old launcher", err, http.StatusNotImplemented, "too old for screenshot")
}

// Another path below vnc is a 404, the stream the bare vnc.
func TestVNCSubpaths(t *testing.T) {
	f := newGuestFixture(t)
	f.vmi("vm", virtualization.Running, "node-1")
	ctx := request.WithRequestInfo(f.ctx, &request.RequestInfo{Parts: []string{"virtualmachineinstances", "vm", "vnc", "other"}})
	_, err := f.guests.VNC.Connect(ctx, "vm", nil, &recorder{})
	wantAPIError(t, "vnc/other", err, http.StatusNotFound, "other")
	if _, sub, _ := f.guests.VNC.NewConnectOptions(); !sub {
		t.Error("vnc takes no path below it")
	}
}
