package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// runningGuest is what a mode switch must leave alone (issue 24): the
// store is carried, so the VMI keeps its UID, its launcher pod and the
// QEMU process that runs the guest.
type runningGuest struct {
	ns, name string
	vmiUID   types.UID
	podUID   types.UID
	qemu     []int
}

// startRunningVM creates a VM of the example guest with runStrategy Always
// and waits until its guest runs.
func startRunningVM(t *testing.T, ctx context.Context, ns, name string) *runningGuest {
	t.Helper()
	vm, err := cluster.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = name
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": name}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VM %s: %v", name, err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	g := &runningGuest{ns: ns, name: name}
	g.vmiUID, g.podUID, g.qemu, err = observe(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("VM %s runs: VMI %s, launcher pod %s, QEMU %v", name, g.vmiUID, g.podUID, g.qemu)
	return g
}

func observe(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (types.UID, types.UID, []int, error) {
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		return "", "", nil, err
	}
	qemu, err := framework.QEMUProcesses(vmi)
	if err != nil {
		return "", "", nil, err
	}
	if len(qemu) != 1 {
		return "", "", nil, fmt.Errorf("VMI %s/%s has %d QEMU processes %v, want 1", vmi.Namespace, vmi.Name, len(qemu), qemu)
	}
	return vmi.UID, pod.UID, qemu, nil
}

// stillRunning fails unless the guest is the one g saw: the same VMI,
// Running and Ready, in the same launcher pod, by the same QEMU process.
func (g *runningGuest) stillRunning(t *testing.T, ctx context.Context, when string) {
	t.Helper()
	vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(g.ns).Get(ctx, g.name, metav1.GetOptions{})
	if err != nil {
		t.Errorf("%s: VMI %s/%s: %v", when, g.ns, g.name, err)
		return
	}
	if vmi.UID != g.vmiUID || vmi.Status.Phase != virtv1.Running ||
		framework.Condition(vmi, virtv1.VirtualMachineInstanceReady) != corev1.ConditionTrue {
		t.Errorf("%s: VMI %s/%s is UID %s %s (Ready %s), want UID %s Running and Ready",
			when, g.ns, g.name, vmi.UID, vmi.Status.Phase, framework.Condition(vmi, virtv1.VirtualMachineInstanceReady), g.vmiUID)
		return
	}
	vmiUID, podUID, qemu, err := observe(ctx, vmi)
	if err != nil {
		t.Errorf("%s: %v", when, err)
		return
	}
	if vmiUID != g.vmiUID || podUID != g.podUID || !slices.Equal(qemu, g.qemu) {
		t.Errorf("%s: VM %s runs in launcher pod %s, QEMU %v; before the switch pod %s, QEMU %v: the guest was restarted",
			when, g.name, podUID, qemu, g.podUID, g.qemu)
		return
	}
	t.Logf("%s: VM %s still runs in pod %s, QEMU %v", when, g.name, podUID, qemu)
}
