package apiserver

import (
	"encoding/json"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestVMILifecycle creates, reads, updates, watches and deletes a VMI the way
// the platform's components and kubectl do.
func TestVMILifecycle(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)

	w, err := vmis.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	created, err := vmis.Create(ctx, tinyVMI("tiny"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Defaults are applied by the server and visible on create.
	s := created.Spec
	switch {
	case s.Domain.Machine == nil || s.Domain.Machine.Type != "q35":
		t.Errorf("machine type not defaulted: %+v", s.Domain.Machine)
	case s.Domain.CPU == nil || s.Domain.CPU.Cores != 1:
		t.Errorf("CPU not defaulted: %+v", s.Domain.CPU)
	case s.Domain.Memory == nil || s.Domain.Memory.Guest.String() != "128Mi":
		t.Errorf("guest memory not taken from requests: %+v", s.Domain.Memory)
	case s.TerminationGracePeriodSeconds == nil || *s.TerminationGracePeriodSeconds != 30:
		t.Errorf("grace period not defaulted: %v", s.TerminationGracePeriodSeconds)
	case s.Domain.Devices.AutoattachSerialConsole == nil || !*s.Domain.Devices.AutoattachSerialConsole:
		t.Errorf("serial console not defaulted")
	case len(s.Networks) != 1 || s.Networks[0].Pod == nil || len(s.Domain.Devices.Interfaces) != 1 || s.Domain.Devices.Interfaces[0].Masquerade == nil:
		t.Errorf("pod network with masquerade not defaulted: %+v %+v", s.Networks, s.Domain.Devices.Interfaces)
	}
	if created.Status.Phase != virtv1.Pending {
		t.Errorf("phase = %q, want Pending", created.Status.Phase)
	}
	if len(created.Finalizers) != 2 {
		t.Errorf("finalizers = %v, want the guest-shutdown and launcher-pod finalizers", created.Finalizers)
	}

	got, err := vmis.Get(ctx, "tiny", metav1.GetOptions{})
	if err != nil || got.UID != created.UID {
		t.Fatalf("get: %v %v", got, err)
	}
	list, err := vmis.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %d items, %v", len(list.Items), err)
	}

	got.Labels = map[string]string{"team": "blue"}
	updated, err := vmis.Update(ctx, got, metav1.UpdateOptions{})
	if err != nil || updated.Labels["team"] != "blue" {
		t.Fatalf("update labels: %v", err)
	}

	// 409 on a stale resourceVersion: the caller read before someone wrote.
	stale := got.DeepCopy()
	stale.Labels = map[string]string{"team": "red"}
	if _, err := vmis.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("update with stale resourceVersion: err = %v, want 409 Conflict", err)
	}

	// The spec of a VMI cannot change.
	changed := updated.DeepCopy()
	changed.Spec.Domain.CPU.Cores = 4
	if _, err := vmis.Update(ctx, changed, metav1.UpdateOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("spec change: err = %v, want 422", err)
	}

	// Delete marks the VMI; removing the finalizers lets it go.
	if err := vmis.Delete(ctx, "tiny", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	marked, err := vmis.Get(ctx, "tiny", metav1.GetOptions{})
	if err != nil || marked.DeletionTimestamp == nil {
		t.Fatalf("after delete: %v %v, want the VMI kept with a deletionTimestamp", marked, err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": nil, "resourceVersion": marked.ResourceVersion}})
	if _, err := vmis.Patch(ctx, "tiny", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vmis.Get(ctx, "tiny", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after finalizers removed: err = %v, want NotFound", err)
	}

	// Created, labelled, marked for deletion, gone.
	want := []watch.EventType{watch.Added, watch.Modified, watch.Modified, watch.Deleted}
	for i, wt := range want {
		select {
		case ev := <-w.ResultChan():
			if ev.Type != wt {
				t.Errorf("event %d = %s, want %s", i, ev.Type, wt)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("event %d (%s) did not arrive within 10s", i, wt)
		}
	}
}

// TestStatusOnlyThroughStatus: the main resource ignores status, /status
// ignores the spec, and impossible phase transitions are refused.
func TestStatusOnlyThroughStatus(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)
	vmi, err := vmis.Create(ctx, tinyVMI("st"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	vmi.Status.Phase = virtv1.Running
	vmi.Status.NodeName = "node-1"
	vmi.Labels = map[string]string{"a": "b"}
	vmi, err = vmis.Update(ctx, vmi, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Status.Phase != virtv1.Pending || vmi.Status.NodeName != "" {
		t.Errorf("status written through the main resource: %+v", vmi.Status)
	}

	unrecorded := vmi.DeepCopy()
	unrecorded.Status.Phase = virtv1.Scheduled
	unrecorded.Status.NodeName = "node-1"
	_, err = vmis.UpdateStatus(ctx, unrecorded, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "status.phaseTransitionTimestamps[1]") {
		t.Errorf("a phase change without its transition: err = %v, want 422 on status.phaseTransitionTimestamps[1]", err)
	}

	vmi.Status.SetPhase(virtv1.Scheduled, "", metav1.Now())
	vmi.Status.NodeName = "node-1"
	vmi.Spec.Domain.CPU.Cores = 8
	vmi, err = vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Status.Phase != virtv1.Scheduled || vmi.Status.NodeName != "node-1" || vmi.Spec.Domain.CPU.Cores != 1 {
		t.Errorf("after UpdateStatus: phase %s node %q cores %d, want Scheduled node-1 1", vmi.Status.Phase, vmi.Status.NodeName, vmi.Spec.Domain.CPU.Cores)
	}

	vmi.Status.SetPhase(virtv1.Succeeded, "", metav1.Now())
	if vmi, err = vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	vmi.Status.SetPhase(virtv1.Running, "", metav1.Now())
	_, err = vmis.UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !hasCause(err, "status.phase") {
		t.Errorf("Succeeded -> Running: err = %v, want 422 on status.phase", err)
	}
}

// TestVMLifecycle: VMs are mutable, and their spec changes bump generation.
func TestVMLifecycle(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vms := client.VirtualizationV1().VirtualMachines(ns)
	vm, err := vms.Create(ctx, vmFor("vm"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vm.Spec.Template.Spec.Domain.Machine.Type != "q35" {
		t.Errorf("template not defaulted")
	}
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	if vm, err = vms.Update(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if vm.Generation != 2 {
		t.Errorf("generation = %d after a spec change, want 2", vm.Generation)
	}
	vm.Status.PrintableStatus = virtv1.VirtualMachineStatusStopped
	vm.Status.ObservedGeneration = vm.Generation
	if vm, err = vms.UpdateStatus(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	list, err := vms.List(ctx, metav1.ListOptions{FieldSelector: "status.printableStatus=Stopped"})
	if err != nil || len(list.Items) != 1 {
		t.Errorf("list by printableStatus: %d items, %v", len(list.Items), err)
	}
	if err := vms.Delete(ctx, "vm", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := vms.Get(ctx, "vm", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after delete: %v, want NotFound", err)
	}
}

// TestDryRun: a dry-run create answers with the defaulted object and
// stores nothing.
func TestDryRun(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	vmis := client.VirtualizationV1().VirtualMachineInstances(ns)
	vmi, err := vmis.Create(ctx, tinyVMI("dry"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Spec.Domain.Machine.Type != "q35" || vmi.Status.Phase != virtv1.Pending {
		t.Errorf("dry-run answer not prepared like a create: %+v", vmi.Status)
	}
	if _, err := vmis.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run stored the VMI: %v", err)
	}
	bad := tinyVMI("dry")
	bad.Spec.Domain.CPU = &virtv1.CPU{Cores: 1000}
	if _, err := vmis.Create(ctx, bad, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); !apierrors.IsInvalid(err) {
		t.Errorf("dry-run of an invalid VMI: %v, want 422", err)
	}
}

func hasCause(err error, fieldPath string) bool {
	status, ok := err.(apierrors.APIStatus)
	if !ok || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == fieldPath {
			return true
		}
	}
	return false
}
