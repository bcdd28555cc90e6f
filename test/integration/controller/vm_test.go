package controller

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestVMRunStrategyAlways: a VM with runStrategy Always creates its VMI,
// and after that VMI is deleted creates a new one (another UID, the same
// name), with a launcher pod of its own; deleting the VM deletes its VMI.
func TestVMRunStrategyAlways(t *testing.T) {
	ctx := t.Context()
	explainFailure(t)
	// A benchmark scales virt-controller to zero; nothing would act on
	// this test's objects meanwhile.
	if err := waitQuiet(ctx, quietTimeout); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	pods := watchLaunchers(t, ns)
	vms := cluster.Virt.VirtualizationV1().VirtualMachines(ns)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)

	const name = "always"
	vm, err := vms.Create(ctx, &virtv1.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: virtv1.VirtualMachineSpec{
			RunStrategy: ptr.To(virtv1.RunStrategyAlways),
			Template:    &virtv1.VirtualMachineInstanceTemplateSpec{Spec: tinySpec(t, name)},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM: %v", err)
	}
	first, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if !metav1.IsControlledBy(first, vm) {
		t.Errorf("VMI %s is not controlled by its VM: owners %v", name, first.OwnerReferences)
	}
	checkLaunched(t, pods, first)

	start := time.Now()
	if err := vmis.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &first.UID}}); err != nil {
		t.Fatalf("delete the VM's VMI: %v", err)
	}
	second, err := cluster.WaitVMI(ctx, ns, name, DeleteTimeout+framework.BootTimeout, "recreated by its VM and Running",
		func(v *virtv1.VirtualMachineInstance) (bool, error) {
			if v.UID == first.UID {
				return false, fmt.Errorf("still the first VMI: phase %s, deleting %v", v.Status.Phase, v.DeletionTimestamp != nil)
			}
			if v.Status.Phase.IsFinal() {
				return false, fmt.Errorf("the new VMI ended %s (%s)", v.Status.Phase, v.Status.Reason)
			}
			return v.Status.Phase == virtv1.Running && framework.Condition(v, virtv1.VirtualMachineInstanceReady) == "True", nil
		})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("VMI deleted -> new VMI Running: %s", since(start))
	if !metav1.IsControlledBy(second, vm) {
		t.Errorf("the new VMI is not controlled by the VM: owners %v", second.OwnerReferences)
	}
	if err := pods.waitDeleted(ctx, first, DeleteTimeout); err != nil {
		t.Error(err)
	}
	checkLaunched(t, pods, second)
	err = framework.WaitFor(ctx, time.Minute, "VM "+name+" Running and ready", func(ctx2 context.Context) (bool, error) {
		got, err := vms.Get(ctx2, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := got.Status
		if s.PrintableStatus != virtv1.VirtualMachineStatusRunning || !s.Created || !s.Ready {
			return false, fmt.Errorf("printableStatus %s, created %v, ready %v", s.PrintableStatus, s.Created, s.Ready)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}

	if err := vms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete VM: %v", err)
	}
	if err := pods.waitDeleted(ctx, second, DeleteTimeout); err != nil {
		t.Error(err)
	}
	err = framework.WaitFor(ctx, DeleteTimeout, "VM "+name+" and its VMI gone", func(ctx2 context.Context) (bool, error) {
		if _, err := vms.Get(ctx2, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, fmt.Errorf("VM: %v", err)
		}
		if v, err := vmis.Get(ctx2, name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			if err == nil {
				err = fmt.Errorf("uid %s phase %s", v.UID, v.Status.Phase)
			}
			return false, fmt.Errorf("VMI: %v", err)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}
