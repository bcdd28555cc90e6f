package e2e

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestEvictionRestartsVM: what `kubectl drain` does to a VM with
// evictionStrategy None, on one node. Its launcher pod is evicted through
// the Eviction API; the launcher shuts the guest down by ACPI; the VMI
// fails with reason PodTerminated (not the guest's doing, not the user's on
// the VMI), so even runStrategy RerunOnFailure starts a new instance; the
// VMI's and the VM's events say why. (On one node the new instance runs
// on the same node; test/nodes drains a node of several.)
func TestEvictionRestartsVM(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	vm, err := cluster.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = "vm-evicted"
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyRerunOnFailure)
	// The serial log and QEMU are looked at on this host's node; a
	// cluster of several nodes (make up NODES=N) must not place it elsewhere.
	vm.Spec.Template.Spec.NodeSelector = map[string]string{corev1.LabelHostname: localNode()}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, err := cluster.WaitVMIRunning(ctx, ns, vm.Name)
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)
	if err := serial.WaitFor(ctx, "VIRT-GUEST-READY", 2*time.Minute); err != nil {
		t.Fatalf("%v\nserial console:\n%s", err, serial.Output())
	}

	// Every version of the VMI: the first instance's end is seen even
	// if the VM controller deletes it at once.
	var mu sync.Mutex
	var ended *virtv1.VirtualMachineInstance
	w, err := cluster.WatchVMI(ctx, ns, vm.Name, func(v *virtv1.VirtualMachineInstance) error {
		if v != nil && v.UID == first.UID && v.Status.Phase.IsFinal() {
			mu.Lock()
			if ended == nil {
				ended = v.DeepCopy()
			}
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Stop() })

	t.Logf("evicting launcher pod %s of VMI %s", pod.Name, first.UID)
	if err := cluster.Kube.CoreV1().Pods(ns).EvictV1(ctx, &policyv1.Eviction{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod.Name},
	}); err != nil {
		t.Fatalf("evict: %v", err)
	}
	if err := serial.WaitFor(ctx, "VIRT-GUEST-ACPI-SHUTDOWN", time.Minute); err != nil {
		t.Errorf("the guest got no ACPI shutdown: %v\nserial console:\n%s", err, serial.Output())
	}

	second, err := cluster.WaitVMI(ctx, ns, vm.Name, framework.BootTimeout, "a new Running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != first.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("new instance %s on node %s", second.UID, second.Status.NodeName)

	mu.Lock()
	end := ended
	mu.Unlock()
	switch {
	case end == nil:
		t.Errorf("the first instance was never seen ended")
	case end.Status.Phase != virtv1.Failed || end.Status.Reason != virtv1.ReasonPodTerminated:
		t.Errorf("the first instance ended %s/%s, want Failed/%s", end.Status.Phase, end.Status.Reason, virtv1.ReasonPodTerminated)
	default:
		ready := readyMessage(end)
		if !strings.Contains(ready, "was evicted") || !strings.Contains(ready, "the guest powered off") {
			t.Errorf("the first instance's Ready message %q does not say it was evicted and powered off", ready)
		}
	}

	// Events: the VMI says its pod was evicted, the VM why it restarted.
	// They are recorded asynchronously: wait for them.
	want := []struct {
		uid     types.UID
		reason  string
		message string
	}{
		{first.UID, "PodTerminating", "was evicted"},
		{first.UID, "Stopped", "was evicted"},
		{"", "Restarting", "PodTerminated"},
	}
	for _, e := range want {
		err := framework.WaitFor(ctx, 30*time.Second, fmt.Sprintf("event %s %q", e.reason, e.message), func(ctx context.Context) (bool, error) {
			sel := fields.Set{"reason": e.reason}
			if e.uid != "" {
				sel["involvedObject.uid"] = string(e.uid)
			} else {
				sel["involvedObject.kind"], sel["involvedObject.name"] = "VirtualMachine", vm.Name
			}
			events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel.String()})
			if err != nil {
				return false, err
			}
			for _, ev := range events.Items {
				if strings.Contains(ev.Message, e.message) {
					t.Logf("event %s on %s %s: %s", ev.Reason, ev.InvolvedObject.Kind, ev.InvolvedObject.Name, ev.Message)
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			t.Error(err)
		}
	}
	if pids, _ := framework.QEMUProcesses(first); len(pids) != 0 {
		t.Errorf("QEMU %v of the evicted instance still runs", pids)
	}
}

// localNode is the name of the cluster's first node, the one whose
// kubelet root the framework reads (hack/cluster/lib.sh's NODE_NAME).
func localNode() string {
	if n := os.Getenv("VIRT_NODE_NAME"); n != "" {
		return n
	}
	return "virt-node"
}

func readyMessage(v *virtv1.VirtualMachineInstance) string {
	for _, c := range v.Status.Conditions {
		if c.Type == virtv1.VirtualMachineInstanceReady && c.Status != corev1.ConditionTrue {
			return c.Message
		}
	}
	return ""
}
