package ownershiptest

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtfake "kubevirt.dev/virt/generated/clientset/versioned/fake"
	"kubevirt.dev/virt/internal/ownership"
)

type reports []string

func (r *reports) Errorf(format string, args ...any) { *r = append(*r, fmt.Sprintf(format, args...)) }

func TestGuard(t *testing.T) {
	vmi := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "v"},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Running, NodeName: "n"}}
	virt := virtfake.NewClientset(vmi)
	var got reports
	Guard(&got, virt, ownership.NodeHealth)
	vmis := virt.VirtualizationV1().VirtualMachineInstances("ns")

	next := vmi.DeepCopy()
	next.Status.Fail(virtv1.ReasonNodeUnresponsive, "gone", metav1.Now())
	if _, err := vmis.UpdateStatus(t.Context(), next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("a write inside the writer's fields was reported: %v", got)
	}

	next.Status.NodeName = "elsewhere"
	if _, err := vmis.UpdateStatus(t.Context(), next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("a write of nodeName by node health: reports %v, want one", got)
	}
	next.Status.NodeName = "a third node"
	if _, err := vmis.Update(t.Context(), next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("a write of the main resource was judged as a status write: %v", got)
	}
}

func TestGuardOn(t *testing.T) {
	vmi := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "v"},
		Status: virtv1.VirtualMachineInstanceStatus{Phase: virtv1.Scheduled, NodeName: "n"}}
	vm := &virtv1.VirtualMachine{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "v"}}
	virt := virtfake.NewClientset(vmi, vm)
	var got reports
	GuardOn(&got, virt, ownership.Handler, "n")

	next := vmi.DeepCopy()
	next.Status.SetPhase(virtv1.Running, "", metav1.Now())
	if _, err := virt.VirtualizationV1().VirtualMachineInstances("ns").UpdateStatus(t.Context(), next, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 0 {
		t.Errorf("the handler running its VMI was reported: %v", got)
	}
	nextVM := vm.DeepCopy()
	nextVM.Status.Ready = true
	if _, err := virt.VirtualizationV1().VirtualMachines("ns").UpdateStatus(t.Context(), nextVM, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 {
		t.Errorf("the handler writing a VM's status: reports %v, want one", got)
	}
}
