package nodes

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// lossTimeout is virt-controller's --heartbeat-timeout in TestNodeLoss (5 m
// by default).
const lossTimeout = 30 * time.Second

// TestNodeLoss: a node with a VM's guest loses power (every process of it
// killed). Its VMI gets NodeUnresponsive and is not failed while the Node
// is there without the out-of-service taint, however long; once the
// administrator taints it out of service the VMI is Failed/NodeUnresponsive
// and the VM (runStrategy Always) runs again on another node; the node
// comes back without its stale pods. Two QEMUs of the VM never run at
// once (sampled every 100 ms from start to end).
func TestNodeLoss(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 3 {
		t.Fatalf("nodes %v: the test needs node 1 and two more", nodes)
	}
	lost := nodes[1]
	ns := cluster.Namespace(t)
	controllerOnControlPlane(t, lossTimeout)
	t.Cleanup(func() {
		if err := setOutOfService(context.Background(), lost, false); err != nil {
			t.Errorf("untaint %s: %v", lost, err)
		}
	})
	t.Cleanup(func() { restartNode(t, lost) })

	vm := alwaysVM(t, "vm-lost")
	qemus := sampleQEMUs(t, ns, vm.Name)
	first, _ := createVMOn(ctx, t, ns, vm, lost)
	end := watchEnd(ctx, t, ns, vm.Name, first.UID)

	t.Logf("killing every process of node %s", lost)
	killed := time.Now()
	if err := cluster.KillNode(ctx, lost); err != nil {
		t.Fatal(err)
	}
	err := framework.WaitFor(ctx, lossTimeout+time.Minute, "NodeUnresponsive on the VMI", func(ctx context.Context) (bool, error) {
		v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return v.UID == first.UID && framework.Condition(v, virtv1.VirtualMachineInstanceNodeUnresponsive) == corev1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NodeUnresponsive %s after the kill", time.Since(killed).Round(time.Second))
	// Not failed while the Node is there untainted: three heartbeat
	// timeouts after the kill (the watch records any end).
	if err := framework.WaitFor(ctx, 4*lossTimeout, "three heartbeat timeouts", func(context.Context) (bool, error) {
		return time.Since(killed) >= 3*lossTimeout, nil
	}); err != nil {
		t.Fatal(err)
	}
	if ended, _ := end.get(); ended != nil {
		t.Fatalf("the VMI of a node that may still run it ended: %s/%s", ended.Status.Phase, ended.Status.Reason)
	}

	t.Logf("tainting %s %s", lost, corev1.TaintNodeOutOfService)
	end.allow()
	if err := setOutOfService(ctx, lost, true); err != nil {
		t.Fatal(err)
	}
	second, err := cluster.WaitVMI(ctx, ns, vm.Name, 2*framework.BootTimeout, "a new Running instance on another node", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != first.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if second.Status.NodeName == lost {
		t.Errorf("the new instance runs on the lost node %s", lost)
	}
	t.Logf("new instance %s on %s, %s after the kill", second.UID, second.Status.NodeName, time.Since(killed).Round(time.Second))
	if ended, early := end.get(); ended == nil || early != nil {
		t.Errorf("the first instance's end: %v (before the taint: %v)", ended != nil, early != nil)
	} else if ended.Status.Phase != virtv1.Failed || ended.Status.Reason != virtv1.ReasonNodeUnresponsive {
		t.Errorf("the first instance ended %s/%s, want Failed/%s", ended.Status.Phase, ended.Status.Reason, virtv1.ReasonNodeUnresponsive)
	}
	waitEvent(ctx, t, ns, fields.Set{"involvedObject.kind": "VirtualMachine", "involvedObject.name": vm.Name}, "Restarting", virtv1.ReasonNodeUnresponsive)

	// The node comes back: no launcher pod of it is left, no second QEMU.
	if err := cluster.StartNode(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if err := waitNodeReady(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if err := setOutOfService(ctx, lost, false); err != nil {
		t.Fatal(err)
	}
	if err := waitHandlerReady(ctx, lost); err != nil {
		t.Fatal(err)
	}
	if left, err := launcherPodsOn(ctx, lost); err != nil || len(left) != 0 {
		t.Errorf("launcher pods left on %s after it came back: %v (%v)", lost, left, err)
	}
	// The guest keeps running where it went.
	if v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, vm.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if v.UID != second.UID || v.Status.Phase != virtv1.Running {
		t.Errorf("after %s came back the VM's instance is %s %s, want %s Running", lost, v.UID, v.Status.Phase, second.UID)
	}
	qemus.check(t)
}

// waitHandlerReady waits until node's virt-handler is Ready: it has looked
// for stray guests and synced.
func waitHandlerReady(ctx context.Context, node string) error {
	return framework.WaitFor(ctx, 2*time.Minute, "a ready virt-handler on "+node, func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{
			LabelSelector: virtv1.ComponentLabel + "=virt-handler",
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && podReady(&p) {
				return true, nil
			}
		}
		return false, nil
	})
}
