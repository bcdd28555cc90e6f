package apiserver

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	typedv1 "kubevirt.dev/virt/generated/clientset/versioned/typed/virtualization/v1"
)

// TestFieldOwnership: the server holds virt-controller's and virt-handler's
// service accounts, authenticated as the aggregator vouches for them (their
// names, the service-account group, the handler's bound-token node in the
// extra info), to their rows of internal/ownership. The handler cannot do
// the controller's hand-off, nor write another node's VMI; each one's own
// writes go through.
func TestFieldOwnership(t *testing.T) {
	proxy := testserver.NewFrontProxy(t)
	server := testserver.Start(t, t.TempDir(), testserver.WithFrontProxy(proxy))
	ctx := t.Context()
	sa := []string{"system:serviceaccounts", "system:serviceaccounts:virt-system", "system:authenticated"}
	as := func(name string, extra map[string][]string) virtclient.Interface {
		return newClient(t, proxy.As(server, name, sa, extra))
	}
	admin := newClient(t, proxy.As(server, "admin", []string{"system:masters"}, nil)).VirtualizationV1()
	controller := as("system:serviceaccount:virt-system:virt-controller", nil).VirtualizationV1()
	handlerOf := func(node string) typedv1.VirtualizationV1Interface {
		return as("system:serviceaccount:virt-system:virt-handler", map[string][]string{noderestriction.NodeNameExtra: {node}}).VirtualizationV1()
	}
	nodeA, nodeB := handlerOf("node-a"), handlerOf("node-b")

	// write reads the VMI as c, changes it and writes its status as c.
	write := func(c typedv1.VirtualizationV1Interface, change func(*virtv1.VirtualMachineInstance)) error {
		vmi, err := admin.VirtualMachineInstances(ns).Get(ctx, "vmi", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		change(vmi)
		_, err = c.VirtualMachineInstances(ns).UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
		return err
	}
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused := func(what string, err error, field string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), field+":") {
			t.Errorf("%s: err = %v, want 403 naming %s", what, err, field)
		}
	}
	now := metav1.Now()

	if _, err := admin.VirtualMachineInstances(ns).Create(ctx, tinyVMI("vmi"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	allowed("the controller schedules the VMI", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetPhase(virtv1.Scheduling, "", now)
		v.Status.ActivePods = map[types.UID]string{"pod-uid": ""}
	}))

	// The controller's hand-off, tried by the handler.
	refused("the handler setting status.nodeName of a Scheduling VMI", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.NodeName = "node-a"
	}), "status.nodeName")
	refused("the handler setting phase Scheduled", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.NodeName = "node-a"
		v.Status.SetPhase(virtv1.Scheduled, "", now)
	}), "status.phase")
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"nodeName": "node-a"}})
	_, err := nodeA.VirtualMachineInstances(ns).Patch(ctx, "vmi", types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	refused("the handler patching status.nodeName", err, "status.nodeName")

	allowed("the controller hands the VMI to node A", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetPhase(virtv1.Scheduled, "", now)
		v.Status.NodeName = "node-a"
		v.Status.ActivePods = map[types.UID]string{"pod-uid": "node-a"}
	}))
	refused("the controller running the VMI", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetPhase(virtv1.Running, "", now)
	}), "status.phase")
	refused("the handler of node B running node A's VMI", write(nodeB, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetPhase(virtv1.Running, "", now)
	}), "status.phase")
	allowed("the handler of node A runs its VMI", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetPhase(virtv1.Running, "", now)
		v.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceReady, Status: corev1.ConditionTrue}, now)
		v.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", IPAddress: "198.18.0.10"}}
	}))
	refused("the handler writing the controller's activePods", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.ActivePods = nil
	}), "status.activePods")
	refused("the controller writing the guest's interfaces", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Interfaces = nil
	}), "status.interfaces")
	refused("the handler failing the VMI for node health's reason", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Fail(virtv1.ReasonNodeUnresponsive, "no", now)
	}), "status.reason")
	labels, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]string{"evil": "yes"}}})
	_, err = nodeA.VirtualMachineInstances(ns).Patch(ctx, "vmi", types.MergePatchType, labels, metav1.PatchOptions{})
	refused("the handler relabelling its VMI", err, "metadata.labels")

	// Node health (virt-controller's credentials) marks and fails it.
	allowed("node health marks the VMI NodeUnresponsive", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceNodeUnresponsive,
			Status: corev1.ConditionTrue, Reason: virtv1.ReasonHeartbeatStale}, now)
	}))
	allowed("node health fails the VMI", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Fail(virtv1.ReasonNodeUnresponsive, "the node is gone", now)
		v.Status.RemoveCondition(virtv1.VirtualMachineInstanceNodeUnresponsive)
	}))
	got, err := admin.VirtualMachineInstances(ns).Get(ctx, "vmi", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != virtv1.Failed || got.Status.NodeName != "node-a" || len(got.Status.Interfaces) != 1 || got.Labels["evil"] != "" {
		t.Errorf("the VMI after the writes: phase %s, node %s, interfaces %v, labels %v", got.Status.Phase, got.Status.NodeName, got.Status.Interfaces, got.Labels)
	}

	// A VM's status is the VM controller's; a handler has no part in it.
	vm, err := admin.VirtualMachines(ns).Create(ctx, vmFor("vm"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vm.Status.PrintableStatus = virtv1.VirtualMachineStatusStopped
	if _, err := nodeA.VirtualMachines(ns).UpdateStatus(ctx, vm, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the handler writing a VM's status: err = %v, want 403", err)
	}
	if _, err := controller.VirtualMachines(ns).UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Errorf("the VM controller writing a VM's status: %v", err)
	}
}
