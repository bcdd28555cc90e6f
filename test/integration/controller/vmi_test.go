package controller

import (
	"slices"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestVMILauncherPod: a VMI gets exactly one launcher pod, which the
// scheduler binds; at the hand-off the VMI is Scheduled with
// status.nodeName, then virt-handler makes it Running; deleting the VMI
// deletes the pod, and then the VMI is gone.
func TestVMILauncherPod(t *testing.T) {
	ctx := t.Context()
	explainFailure(t)
	// A benchmark scales virt-controller to zero; nothing would act on
	// this test's objects meanwhile.
	if err := waitQuiet(ctx, quietTimeout); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	pods := watchLaunchers(t, ns)

	start := time.Now()
	vmi := createVMI(t, ns, "one-pod")
	scheduled, err := waitScheduled(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("create -> handed to node %s: %s (phase %s)", scheduled.Status.NodeName, since(start), scheduled.Status.Phase)
	running, err := cluster.WaitVMIRunning(ctx, ns, vmi.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("create -> Running: %s", since(start))
	if running.Status.NodeName != scheduled.Status.NodeName {
		t.Errorf("status.nodeName changed from %s to %s after the hand-off", scheduled.Status.NodeName, running.Status.NodeName)
	}
	checkLaunched(t, pods, running)
	want := []virtv1.VirtualMachineInstancePhase{virtv1.Pending, virtv1.Scheduling, virtv1.Scheduled, virtv1.Running}
	if phases := framework.Phases(running); !slices.Equal(phases, want) {
		t.Errorf("VMI went through %v, want %v", phases, want)
	}
	if _, err := cluster.Kube.CoreV1().Nodes().Get(ctx, running.Status.NodeName, metav1.GetOptions{}); err != nil {
		t.Errorf("status.nodeName %q is not a node: %v", running.Status.NodeName, err)
	}
	pod, err := pods.only(running)
	if err != nil {
		t.Fatal(err)
	}

	start = time.Now()
	deleteVMIs(t, pods, running)
	t.Logf("delete -> launcher pod and VMI gone: %s", since(start))
	if _, err := cluster.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("launcher pod %s after its VMI was deleted: %v, want NotFound", pod.Name, err)
	}
	if _, err := pods.only(running); err != nil {
		t.Error(err)
	}
}
