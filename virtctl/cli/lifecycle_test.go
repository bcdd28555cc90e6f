package cli_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func TestLifecycleRequests(t *testing.T) {
	const vms, vmis = group + "/namespaces/ctx-ns/virtualmachines/", group + "/namespaces/ctx-ns/virtualmachineinstances/"
	options := func(kind string, fields string) string {
		return `{"kind":"` + kind + `","apiVersion":"virtualization.kubevirt.io/v1"` + fields + `}`
	}
	for _, tc := range []struct {
		args []string
		path string
		body string // JSON; "" is none
		out  string
	}{
		{args: []string{"start", "vm1"}, path: vms + "vm1/start", body: options("StartOptions", ""), out: "VM vm1 was scheduled to start\n"},
		{args: []string{"stop", "vm1"}, path: vms + "vm1/stop", body: options("StopOptions", ""), out: "VM vm1 was scheduled to stop\n"},
		{args: []string{"stop", "vm1", "--force"}, path: vms + "vm1/stop", body: options("StopOptions", `,"gracePeriod":0`)},
		{args: []string{"stop", "vm1", "--grace-period", "30"}, path: vms + "vm1/stop", body: options("StopOptions", `,"gracePeriod":30`)},
		{args: []string{"stop", "vm1", "--force", "--grace-period=0"}, path: vms + "vm1/stop", body: options("StopOptions", `,"gracePeriod":0`)},
		{args: []string{"restart", "vm1"}, path: vms + "vm1/restart", body: options("RestartOptions", ""), out: "VM vm1 was scheduled to restart\n"},
		{args: []string{"restart", "vm1", "--force"}, path: vms + "vm1/restart", body: options("RestartOptions", `,"gracePeriodSeconds":0`)},
		{args: []string{"restart", "vm1", "--grace-period=10"}, path: vms + "vm1/restart", body: options("RestartOptions", `,"gracePeriodSeconds":10`)},
		{args: []string{"pause", "vmi", "vmi1"}, path: vmis + "vmi1/pause", body: options("PauseOptions", ""), out: "VMI vmi1 was scheduled to pause\n"},
		{args: []string{"pause", "virtualmachineinstance", "vmi1"}, path: vmis + "vmi1/pause", body: options("PauseOptions", "")},
		{args: []string{"pause", "vm", "vm1"}, path: vmis + "vm1/pause", body: options("PauseOptions", ""), out: "VM vm1 was scheduled to pause\n"},
		{args: []string{"unpause", "vmi", "vmi1"}, path: vmis + "vmi1/unpause", body: options("UnpauseOptions", ""), out: "VMI vmi1 was scheduled to unpause\n"},
		{args: []string{"unpause", "vm", "vm1"}, path: vmis + "vm1/unpause", body: options("UnpauseOptions", "")},
		{args: []string{"soft-reboot", "vmi1"}, path: vmis + "vmi1/softreboot", body: options("SoftRebootOptions", ""), out: "VMI vmi1 was scheduled to soft reboot\n"},
		{args: []string{"-n", "other", "stop", "vm1"}, path: group + "/namespaces/other/virtualmachines/vm1/stop", body: options("StopOptions", "")},
		{args: []string{"stop", "vm1", "--namespace=other"}, path: group + "/namespaces/other/virtualmachines/vm1/stop", body: options("StopOptions", "")},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			a := newFakeAPI(t)
			res := a.run(nil, tc.args...)
			if res.err != nil {
				t.Fatalf("error: %v\n%s", res.err, res.errOut)
			}
			got := a.last()
			if got.Method != http.MethodPut || got.Path != tc.path {
				t.Errorf("%s %s, want PUT %s", got.Method, got.Path, tc.path)
			}
			if diff := cmp.Diff(jsonValue(t, tc.body), sent(t, got.Body)); diff != "" {
				t.Errorf("body (-want +got):\n%s", diff)
			}
			if tc.out != "" && res.out != tc.out {
				t.Errorf("output %q, want %q", res.out, tc.out)
			}
		})
	}
}

// codecs decode what the generated client sends (protobuf, by its
// preference).
var codecs = func() serializer.CodecFactory {
	scheme := runtime.NewScheme()
	if err := virtv1.AddToScheme(scheme); err != nil {
		panic(err)
	}
	return serializer.NewCodecFactory(scheme)
}()

// sent is the option body the client sent, as JSON with its kind.
func sent(t *testing.T, body string) any {
	t.Helper()
	if body == "" {
		return nil
	}
	obj, gvk, err := codecs.UniversalDeserializer().Decode([]byte(body), nil, nil)
	if err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	obj.GetObjectKind().SetGroupVersionKind(*gvk)
	b, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return jsonValue(t, string(b))
}

func jsonValue(t *testing.T, s string) any {
	t.Helper()
	if s == "" {
		return nil
	}
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func TestLifecycleFlagsAreKubectls(t *testing.T) {
	a := newFakeAPI(t)
	if res := a.run(nil, "--as", "bob", "stop", "vm1"); res.err != nil {
		t.Fatal(res.err)
	}
	if got := a.last().Impersonate; got != "bob" {
		t.Errorf("Impersonate-User %q, want bob (--as)", got)
	}
}

func TestLifecycleValidation(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stop", "vm1", "--force", "--grace-period=5"}, "--force stops at once (--grace-period=0): it does not go with --grace-period=5"},
		{[]string{"restart", "vm1", "--grace-period=-3"}, "--grace-period must be 0 or more seconds, not -3"},
		{[]string{"pause", "vm1"}, "say what to pause: virtctl pause vm NAME or virtctl pause vmi NAME"},
		{[]string{"stop"}, "accepts 1 arg(s), received 0"},
		{[]string{"start", "vm1", "--force"}, "unknown flag: --force"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			a := newFakeAPI(t)
			res := a.run(nil, tc.args...)
			if res.err == nil || res.err.Error() != tc.want {
				t.Errorf("error %v, want %q", res.err, tc.want)
			}
			if len(a.requests) != 0 {
				t.Errorf("requests %v, want none", a.requests)
			}
		})
	}
}

func TestLifecycleErrors(t *testing.T) {
	vmsGR := schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachines"}
	vmisGR := schema.GroupResource{Group: "virtualization.kubevirt.io", Resource: "virtualmachineinstances"}
	conflict := &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusConflict, Reason: metav1.StatusReasonConflict,
		Message: "VMI vm-x is not running (phase Scheduling)"}
	for _, tc := range []struct {
		name    string
		args    []string
		answer  *metav1.Status
		vmExits bool
		want    string
	}{
		{name: "no such VM", args: []string{"stop", "x"}, answer: &apierrors.NewNotFound(vmsGR, "x").ErrStatus,
			want: "virtualmachine x not found in namespace ctx-ns"},
		{name: "RBAC", args: []string{"-n", "ns", "stop", "x"},
			answer: &apierrors.NewForbidden(vmsGR, "x", errorString(`User "alice" cannot update resource "virtualmachines/stop" in API group "virtualization.kubevirt.io" in the namespace "ns"`)).ErrStatus,
			want:   `forbidden: you need update on virtualmachines/stop in namespace ns (you are "alice")`},
		{name: "conflict", args: []string{"pause", "vmi", "vm-x"}, answer: conflict, want: "VMI vm-x is not running (phase Scheduling)"},
		{name: "a stopped VM has no instance to pause", args: []string{"pause", "vm", "x"}, answer: &apierrors.NewNotFound(vmisGR, "x").ErrStatus, vmExits: true,
			want: "VM x has no running instance to pause in namespace ctx-ns (start it first)"},
		{name: "no such VM to pause", args: []string{"pause", "vm", "x"}, answer: &apierrors.NewNotFound(vmisGR, "x").ErrStatus,
			want: "virtualmachine x not found in namespace ctx-ns"},
		{name: "no such VMI to pause", args: []string{"pause", "vmi", "x"}, answer: &apierrors.NewNotFound(vmisGR, "x").ErrStatus,
			want: "virtualmachineinstance x not found in namespace ctx-ns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := newFakeAPI(t)
			a.answer = tc.answer
			if tc.vmExits {
				a.vms["ctx-ns/x"] = true
			}
			res := a.run(nil, tc.args...)
			if res.err == nil || res.err.Error() != tc.want {
				t.Errorf("error %v, want %q", res.err, tc.want)
			}
		})
	}
}

func TestLifecycleUnreachable(t *testing.T) {
	a := newFakeAPI(t)
	kubeconfig := a.kubeconfig()
	a.srv.Close()
	res := a.run(nil, "--kubeconfig", kubeconfig, "start", "vm1")
	if want := "cannot reach the API server at " + a.srv.URL + ": "; res.err == nil || !strings.HasPrefix(res.err.Error(), want) {
		t.Errorf("error %v, want %q...", res.err, want)
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
