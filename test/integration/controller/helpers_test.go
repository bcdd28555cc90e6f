package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// DeleteTimeout bounds a VMI's way from deletion to gone: an ACPI shutdown
// within the VMI's 30 s grace period, the launcher pod's removal.
const DeleteTimeout = 2 * time.Minute

// tinySpec is the spec of the project's test guest
// (artifacts/examples/vmi-tiny.yaml), its serial console naming hostname.
func tinySpec(t *testing.T, hostname string) virtv1.VirtualMachineInstanceSpec {
	t.Helper()
	vmi, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := vmi.Spec
	if kb := spec.Domain.Firmware; kb != nil && kb.KernelBoot != nil {
		kb.KernelBoot.KernelArgs = strings.ReplaceAll(kb.KernelBoot.KernelArgs, "virt.hostname=vmi-tiny", "virt.hostname="+hostname)
	}
	return spec
}

// createVMI creates a test guest named name in ns.
func createVMI(t *testing.T, ns, name string) *virtv1.VirtualMachineInstance {
	t.Helper()
	vmi := &virtv1.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec:       tinySpec(t, name),
	}
	created, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(t.Context(), vmi, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VMI %s/%s: %v", ns, name, err)
	}
	return created
}

// waitScheduled waits for the hand-off: status.nodeName set.
func waitScheduled(ctx context.Context, ns, name string) (*virtv1.VirtualMachineInstance, error) {
	return cluster.WaitVMI(ctx, ns, name, framework.BootTimeout, "handed to a node (status.nodeName)",
		func(v *virtv1.VirtualMachineInstance) (bool, error) {
			if v.Status.Phase.IsFinal() {
				return false, fmt.Errorf("ended %s (%s) before the hand-off", v.Status.Phase, v.Status.Reason)
			}
			return v.Status.NodeName != "", nil
		})
}

// checkLaunched asserts what virt-controller and the scheduler did for a
// VMI that was handed to a node: one launcher pod ever, created without a
// node and bound by the scheduler to the node in status.nodeName, recorded
// in status.activePods; phase Scheduled on the way. (Scheduling may be
// skipped: a new leader that finds a Ready pod the old one created hands
// the VMI off in one write.)
func checkLaunched(t *testing.T, pods *launchers, vmi *virtv1.VirtualMachineInstance) {
	t.Helper()
	l, err := pods.only(vmi)
	if err != nil {
		t.Error(err)
		return
	}
	if l.CreatedOn != "" {
		t.Errorf("VMI %s: launcher pod %s was created on node %q: binding is the scheduler's", vmi.Name, l.Name, l.CreatedOn)
	}
	if vmi.Status.NodeName == "" || l.Node != vmi.Status.NodeName {
		t.Errorf("VMI %s: status.nodeName %q, its launcher pod %s is on %q", vmi.Name, vmi.Status.NodeName, l.Name, l.Node)
	}
	if node, ok := vmi.Status.ActivePods[l.UID]; !ok || node != l.Node || len(vmi.Status.ActivePods) != 1 {
		t.Errorf("VMI %s: status.activePods %v, want only %s on %s", vmi.Name, vmi.Status.ActivePods, l.UID, l.Node)
	}
	if phases := framework.Phases(vmi); !slices.Contains(phases, virtv1.Scheduled) {
		t.Errorf("VMI %s went through %v, never Scheduled", vmi.Name, phases)
	}
	if pod, err := cluster.Kube.CoreV1().Pods(vmi.Namespace).Get(t.Context(), l.Name, metav1.GetOptions{}); err == nil {
		if c := podCondition(pod, corev1.PodScheduled); c == nil || c.Status != corev1.ConditionTrue {
			t.Errorf("VMI %s: launcher pod %s has PodScheduled %v, want True", vmi.Name, pod.Name, c)
		}
	}
}

// deleteVMIs deletes VMIs at once and waits until each and its launcher
// pods are gone.
func deleteVMIs(t *testing.T, pods *launchers, vmis ...*virtv1.VirtualMachineInstance) {
	t.Helper()
	ctx := t.Context()
	for _, vmi := range vmis {
		err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name,
			metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &vmi.UID}})
		if err != nil {
			t.Fatalf("delete VMI %s/%s: %v", vmi.Namespace, vmi.Name, err)
		}
	}
	for _, vmi := range vmis {
		if err := pods.waitDeleted(ctx, vmi, DeleteTimeout); err != nil {
			t.Error(err)
		}
		if err := cluster.WaitVMIGone(ctx, vmi.Namespace, vmi.Name, DeleteTimeout); err != nil {
			t.Error(err)
		}
	}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// since formats the time since start for the logs.
func since(start time.Time) time.Duration {
	return time.Since(start).Round(10 * time.Millisecond)
}
