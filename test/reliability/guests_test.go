package reliability

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// guestCPU is the CPU request of the suite's guests: the default 100m per
// vCPU would let the 2-core node's scheduler place only about 16 launcher
// pods beside the platform, and the controller fault runs 20.
var guestCPU = resource.MustParse("10m")

// deleteTimeout bounds a guest's way from delete to gone: an ACPI
// shutdown within its 30 s grace period, the launcher pod's removal.
const deleteTimeout = 3 * time.Minute

// tinyVMI is the project's test guest (artifacts/examples/vmi-tiny.yaml),
// named name in ns, its console naming it, with the suite's CPU request.
func tinyVMI(t *testing.T, ns, name string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vmi.Name, vmi.Namespace, vmi.Labels = name, ns, map[string]string{"app": name}
	if kb := vmi.Spec.Domain.Firmware; kb != nil && kb.KernelBoot != nil {
		kb.KernelBoot.KernelArgs = strings.ReplaceAll(kb.KernelBoot.KernelArgs, "virt.hostname=vmi-tiny", "virt.hostname="+name)
	}
	if vmi.Spec.Domain.Resources.Requests == nil {
		vmi.Spec.Domain.Resources.Requests = corev1.ResourceList{}
	}
	vmi.Spec.Domain.Resources.Requests[corev1.ResourceCPU] = guestCPU
	return vmi
}

// createGuests creates the test guests named prefix-0 ... prefix-(n-1).
func createGuests(t *testing.T, ns, prefix string, from, n int) []*virtv1.VirtualMachineInstance {
	t.Helper()
	var out []*virtv1.VirtualMachineInstance
	for i := from; i < from+n; i++ {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(t.Context(), tinyVMI(t, ns, fmt.Sprintf("%s-%d", prefix, i)), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, vmi)
	}
	return out
}

// waitRunning waits until every VMI is Running and Ready, each within
// timeout of the call (they start together), and returns them as they
// are then; it counts those that are not.
func waitRunning(ctx context.Context, t *testing.T, vmis []*virtv1.VirtualMachineInstance, timeout time.Duration) ([]*virtv1.VirtualMachineInstance, int) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var out []*virtv1.VirtualMachineInstance
	failed := 0
	for _, v := range vmis {
		var final error
		got, err := cluster.WaitVMI(ctx, v.Namespace, v.Name, time.Until(deadline), "Running", func(x *virtv1.VirtualMachineInstance) (bool, error) {
			if x.UID != v.UID {
				final = fmt.Errorf("VMI %s replaced by %s", v.Name, x.UID)
				return true, nil
			}
			if x.Status.Phase.IsFinal() {
				final = fmt.Errorf("VMI %s ended %s (%s) instead of running", v.Name, x.Status.Phase, x.Status.Reason)
				return true, nil
			}
			return x.Status.Phase == virtv1.Running && framework.Condition(x, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue, nil
		})
		if err == nil {
			err = final
		}
		if err != nil {
			t.Error(err)
			failed++
			continue
		}
		out = append(out, got)
	}
	return out, failed
}

// deleteGuests deletes the VMIs and waits until they are gone.
func deleteGuests(ctx context.Context, t *testing.T, vmis []*virtv1.VirtualMachineInstance) {
	t.Helper()
	for _, v := range vmis {
		err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(v.Namespace).Delete(ctx, v.Name, metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete VMI %s/%s: %v", v.Namespace, v.Name, err)
		}
	}
	for _, v := range vmis {
		if err := cluster.WaitVMIGone(ctx, v.Namespace, v.Name, deleteTimeout); err != nil {
			t.Error(err)
		}
	}
}

// qemuOf returns the QEMU processes of each VMI, by name.
func qemuOf(vmis []*virtv1.VirtualMachineInstance) (map[string][]int, error) {
	out := map[string][]int{}
	for _, v := range vmis {
		pids, err := framework.QEMUProcesses(v)
		if err != nil {
			return nil, err
		}
		out[v.Name] = pids
	}
	return out, nil
}
