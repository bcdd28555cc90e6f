package nodes

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestDrain: `kubectl drain` of a node with a VM (evictionStrategy None,
// the stop-and-restart flavour) completes: the launcher pod is evicted
// (kubectl accepts it: a pod with a controller, emptyDirs deleted with
// --delete-emptydir-data), its launcher shuts the guest down by ACPI, the
// VMI fails with PodTerminated and the VM runs again on another node,
// which the cordon leaves to the scheduler; the events on the VMI and the
// VM say why. Two QEMUs of the VM never run at once.
func TestDrain(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 3 {
		t.Fatalf("nodes %v: the test needs node 1 and two more", nodes)
	}
	drained := nodes[len(nodes)-1]
	ns := cluster.Namespace(t)
	t.Cleanup(func() {
		if _, err := cluster.Kubectl(context.Background(), "uncordon", drained); err != nil {
			t.Errorf("uncordon %s: %v", drained, err)
		}
	})

	vm := alwaysVM(t, "vm-drained")
	vm.Spec.Template.Spec.EvictionStrategy = ptr.To(virtv1.EvictionStrategyNone)
	qemus := sampleQEMUs(t, ns, vm.Name)
	first, serial := createVMOn(ctx, t, ns, vm, drained)
	end := watchEnd(ctx, t, ns, vm.Name, first.UID)
	end.allow()

	start := time.Now()
	out, err := cluster.Kubectl(ctx, "drain", drained, "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3m")
	t.Logf("kubectl drain %s (%s):\n%s", drained, time.Since(start).Round(time.Second), out)
	if err != nil {
		t.Fatalf("kubectl drain: %v", err)
	}
	if err := serial.WaitFor(ctx, "VIRT-GUEST-ACPI-SHUTDOWN", time.Minute); err != nil {
		t.Errorf("the guest got no ACPI shutdown: %v", err)
	}
	second, err := cluster.WaitVMI(ctx, ns, vm.Name, framework.BootTimeout, "a new Running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != first.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if second.Status.NodeName == drained {
		t.Errorf("the new instance runs on the drained node %s", drained)
	}
	t.Logf("new instance %s on %s, %s after the drain started", second.UID, second.Status.NodeName, time.Since(start).Round(time.Second))
	if ended, _ := end.get(); ended == nil {
		t.Errorf("the first instance was never seen ended")
	} else if ended.Status.Phase != virtv1.Failed || ended.Status.Reason != virtv1.ReasonPodTerminated {
		t.Errorf("the first instance ended %s/%s, want Failed/%s", ended.Status.Phase, ended.Status.Reason, virtv1.ReasonPodTerminated)
	}
	waitEvent(ctx, t, ns, fields.Set{"involvedObject.uid": string(first.UID)}, "Stopped", "was evicted")
	waitEvent(ctx, t, ns, fields.Set{"involvedObject.kind": "VirtualMachine", "involvedObject.name": vm.Name}, "Restarting", virtv1.ReasonPodTerminated)
	if left, err := launcherPodsOn(ctx, drained); err != nil || len(left) != 0 {
		t.Errorf("launcher pods left on the drained node: %v (%v)", left, err)
	}
	qemus.check(t)
}
