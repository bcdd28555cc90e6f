package apiserver

import (
	"net/http"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// put sends body to virtualmachines/NAME/action the way KubeVirt's clients
// do and returns the answer's status.
func put(t *testing.T, client virtclient.Interface, name, action string, body runtime.Object) (*metav1.Status, error) {
	t.Helper()
	result := client.VirtualizationV1().RESTClient().Put().Namespace(ns).Resource("virtualmachines").Name(name).
		SubResource(action).Body(body).Do(t.Context())
	if err := result.Error(); err != nil {
		return nil, err
	}
	obj, err := result.Get()
	if err != nil {
		return nil, err
	}
	st, ok := obj.(*metav1.Status)
	if !ok {
		t.Fatalf("%s answered a %T, want a Status", action, obj)
	}
	return st, nil
}

func wantStatus(t *testing.T, what string, err error, code int32, message string) {
	t.Helper()
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Errorf("%s: err = %v, want %d", what, err, code)
		return
	}
	if st.Status().Code != code || !strings.Contains(st.Status().Message, message) {
		t.Errorf("%s: %d %q, want %d with %q", what, st.Status().Code, st.Status().Message, code, message)
	}
}

// TestVMStartStopRestart drives a VM's actions through the server as virtctl
// would: the run strategy moves, requests appear for the controller, and
// actions that make no sense are 409 with a message that says why.
func TestVMStartStopRestart(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vms := client.VirtualizationV1().VirtualMachines(ns)
	vm := vmFor("vm")
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	vm, err := vms.Create(ctx, vm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	// A dry run changes nothing.
	if _, err := put(t, client, "vm", "start", &virtv1.StartOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if got, _ := vms.Get(ctx, "vm", metav1.GetOptions{}); *got.Spec.RunStrategy != virtv1.RunStrategyHalted {
		t.Errorf("dry-run start changed the run strategy to %s", *got.Spec.RunStrategy)
	}

	st, err := put(t, client, "vm", "start", &virtv1.StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Status != metav1.StatusSuccess || st.Message != "VM vm is starting" {
		t.Errorf("start answered %+v", st)
	}
	got, err := vms.Get(ctx, "vm", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if *got.Spec.RunStrategy != virtv1.RunStrategyAlways || got.Generation != vm.Generation+1 {
		t.Errorf("after start: runStrategy %s, generation %d; want Always, %d", *got.Spec.RunStrategy, got.Generation, vm.Generation+1)
	}

	// The controller's instance, made by hand.
	vmi := tinyVMI("vm")
	vmi.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(got, virtv1.SchemeGroupVersion.WithKind("VirtualMachine"))}
	if vmi, err = client.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = put(t, client, "vm", "start", &virtv1.StartOptions{})
	wantStatus(t, "start of a running VM", err, http.StatusConflict, "VM vm is already running (VMI phase Pending)")

	// Manual: restart and stop are requests for the controller.
	got.Spec.RunStrategy = ptr.To(virtv1.RunStrategyManual)
	if _, err := vms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := put(t, client, "vm", "restart", &virtv1.RestartOptions{GracePeriodSeconds: ptr.To(int64(0))}); err != nil {
		t.Fatal(err)
	}
	got, _ = vms.Get(ctx, "vm", metav1.GetOptions{})
	if reqs := got.Status.StateChangeRequests; len(reqs) != 2 || reqs[0].Action != virtv1.StopRequest || *reqs[0].UID != vmi.UID || reqs[1].Action != virtv1.StartRequest {
		t.Errorf("after restart: stateChangeRequests %+v, want [Stop %s, Start]", reqs, vmi.UID)
	}
	stopped, _ := client.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, "vm", metav1.GetOptions{})
	if *stopped.Spec.TerminationGracePeriodSeconds != 0 {
		t.Errorf("after restart with gracePeriodSeconds 0: the instance's grace period is %d", *stopped.Spec.TerminationGracePeriodSeconds)
	}
	_, err = put(t, client, "vm", "restart", &virtv1.RestartOptions{})
	wantStatus(t, "second restart", err, http.StatusConflict, "VM vm has a start or stop underway (stateChangeRequests [Stop, Start])")

	// Halted, its instance being deleted: nothing to restart, the stop is
	// underway.
	if got, err = vms.Get(ctx, "vm", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	}
	got.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	if _, err := vms.Update(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := client.VirtualizationV1().VirtualMachineInstances(ns).Delete(ctx, "vm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = put(t, client, "vm", "restart", &virtv1.RestartOptions{})
	wantStatus(t, "restart of a halted VM", err, http.StatusConflict, "VM vm is stopped (runStrategy Halted): start it instead")
	_, err = put(t, client, "vm", "stop", &virtv1.StopOptions{})
	wantStatus(t, "stop of a halted VM that is stopping", err, http.StatusConflict, "VM vm is already stopping")
}

// TestVMActionErrors: the HTTP answers of the actions, whatever the VM.
func TestVMActionErrors(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	if _, err := client.VirtualizationV1().VirtualMachines(ns).Create(ctx, vmFor("vm"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rc := client.VirtualizationV1().RESTClient()

	for action, body := range map[string]runtime.Object{
		"start": &virtv1.StartOptions{}, "stop": &virtv1.StopOptions{}, "restart": &virtv1.RestartOptions{},
	} {
		_, err := put(t, client, "missing", action, body)
		if !apierrors.IsNotFound(err) {
			t.Errorf("%s of a missing VM: err = %v, want 404", action, err)
		}
		err = rc.Get().Namespace(ns).Resource("virtualmachines").Name("vm").SubResource(action).Do(ctx).Error()
		wantStatus(t, "GET "+action, err, http.StatusMethodNotAllowed, "")
	}

	_, err := put(t, client, "vm", "start", &virtv1.StartOptions{})
	wantStatus(t, "start of an Always VM", err, http.StatusConflict, "VM vm has runStrategy Always")
	_, err = put(t, client, "vm", "stop", &virtv1.StopOptions{GracePeriod: ptr.To(int64(-1))})
	wantStatus(t, "negative grace period", err, http.StatusUnprocessableEntity, "gracePeriod")

	// KubeVirt's clients send JSON without apiVersion and kind.
	err = rc.Put().Namespace(ns).Resource("virtualmachines").Name("vm").SubResource("stop").
		SetHeader("Content-Type", "application/json").Body([]byte(`{"gracePeriod":0}`)).Do(ctx).Error()
	if err != nil {
		t.Errorf("stop with a bare JSON body: %v", err)
	}
	err = rc.Put().Namespace(ns).Resource("virtualmachines").Name("vm").SubResource("stop").
		SetHeader("Content-Type", "application/json").Body([]byte(`{"gracePeriod":"soon"}`)).Do(ctx).Error()
	wantStatus(t, "stop with a malformed body", err, http.StatusBadRequest, "")
	// KubeVirt's start --paused: refused, not started unpaused.
	err = rc.Put().Namespace(ns).Resource("virtualmachines").Name("vm").SubResource("start").
		SetHeader("Content-Type", "application/json").Body([]byte(`{"paused":true}`)).Do(ctx).Error()
	wantStatus(t, "start paused", err, http.StatusBadRequest, `unknown field "paused"`)
}

// TestVMActionsInDiscovery: clients find the actions, with the verb RBAC
// grants for them.
func TestVMActionsInDiscovery(t *testing.T) {
	_, client := start(t)
	resources, err := client.Discovery().ServerResourcesForGroupVersion(virtv1.SchemeGroupVersion.String())
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"virtualmachines/start": "StartOptions", "virtualmachines/stop": "StopOptions", "virtualmachines/restart": "RestartOptions"}
	for _, r := range resources.APIResources {
		kind, ok := want[r.Name]
		if !ok {
			continue
		}
		delete(want, r.Name)
		if r.Kind != kind || len(r.Verbs) != 1 || r.Verbs[0] != "update" || !r.Namespaced {
			t.Errorf("%s: kind %s, verbs %v, namespaced %v; want %s, [update], true", r.Name, r.Kind, r.Verbs, r.Namespaced, kind)
		}
	}
	for name := range want {
		t.Errorf("%s is not discovered", name)
	}
}
