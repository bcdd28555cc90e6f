package lifecycle_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/virtctl/lifecycle"
)

// request is what the fake server received.
type request struct {
	method, path, contentType string
	body                      map[string]any // nil: empty body
}

// server answers every request with status and records it.
func server(t *testing.T, status *metav1.Status) (virtclient.Interface, *request) {
	got := &request{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.method, got.path, got.contentType = r.Method, r.URL.Path, r.Header.Get("Content-Type")
		b, _ := io.ReadAll(r.Body)
		if len(b) > 0 {
			if err := json.Unmarshal(b, &got.body); err != nil {
				t.Errorf("body %q: %v", b, err)
			}
		}
		status.APIVersion, status.Kind = "v1", "Status"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(int(status.Code))
		_ = json.NewEncoder(w).Encode(status)
	}))
	t.Cleanup(srv.Close)
	c, err := virtclient.NewForConfig(&rest.Config{Host: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	return c, got
}

func success() *metav1.Status {
	return &metav1.Status{Status: metav1.StatusSuccess, Code: http.StatusOK}
}

func TestCalls(t *testing.T) {
	const base = "/apis/virtualization.kubevirt.io/v1/namespaces/ns1/"
	typed := func(kind string, fields map[string]any) map[string]any {
		m := map[string]any{"apiVersion": "virtualization.kubevirt.io/v1", "kind": kind}
		for k, v := range fields {
			m[k] = v
		}
		return m
	}
	for _, tc := range []struct {
		name string
		call lifecycle.Call
		path string
		body map[string]any
	}{
		{name: "start", call: lifecycle.Start("ns1", "vm1", nil),
			path: base + "virtualmachines/vm1/start", body: typed("StartOptions", nil)},
		{name: "stop", call: lifecycle.Stop("ns1", "vm1", nil),
			path: base + "virtualmachines/vm1/stop", body: typed("StopOptions", nil)},
		{name: "stop at once", call: lifecycle.Stop("ns1", "vm1", &virtv1.StopOptions{GracePeriod: ptr.To[int64](0)}),
			path: base + "virtualmachines/vm1/stop", body: typed("StopOptions", map[string]any{"gracePeriod": 0.0})},
		{name: "restart in 30s", call: lifecycle.Restart("ns1", "vm1", &virtv1.RestartOptions{GracePeriodSeconds: ptr.To[int64](30)}),
			path: base + "virtualmachines/vm1/restart", body: typed("RestartOptions", map[string]any{"gracePeriodSeconds": 30.0})},
		{name: "pause", call: lifecycle.Pause("ns1", "vmi1", nil),
			path: base + "virtualmachineinstances/vmi1/pause", body: typed("PauseOptions", nil)},
		{name: "unpause dry run", call: lifecycle.Unpause("ns1", "vmi1", &virtv1.UnpauseOptions{DryRun: []string{"All"}}),
			path: base + "virtualmachineinstances/vmi1/unpause", body: typed("UnpauseOptions", map[string]any{"dryRun": []any{"All"}})},
		{name: "soft reboot", call: lifecycle.SoftReboot("ns1", "vmi1"),
			path: base + "virtualmachineinstances/vmi1/softreboot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, got := server(t, success())
			if err := tc.call.Do(t.Context(), c); err != nil {
				t.Fatalf("Do: %v", err)
			}
			if got.method != http.MethodPut || got.path != tc.path {
				t.Errorf("%s %s, want PUT %s", got.method, got.path, tc.path)
			}
			if diff := cmp.Diff(tc.body, got.body); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if tc.body != nil && got.contentType != "application/json" {
				t.Errorf("Content-Type %q, want application/json", got.contentType)
			}
		})
	}
}

func TestDoReturnsTheServersStatus(t *testing.T) {
	conflict := apierrors.NewConflict(schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachineinstances"}, "vm-x",
		nil).ErrStatus
	conflict.Message = "VMI vm-x is not running (phase Scheduling)"
	c, _ := server(t, &conflict)
	err := lifecycle.Pause("ns1", "vm-x", nil).Do(t.Context(), c)
	if !apierrors.IsConflict(err) {
		t.Fatalf("Do: %v, want the server's Conflict", err)
	}
	if want := "pause ns1/vm-x: VMI vm-x is not running (phase Scheduling)"; err.Error() != want {
		t.Errorf("Do: %q, want %q", err, want)
	}
}
