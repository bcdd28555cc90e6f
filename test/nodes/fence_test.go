package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// fenceHeartbeatTimeout is virt-controller's --heartbeat-timeout during
// TestTimedFencing, and fenceAfter the VM's fence-after: with them a dead
// node is fenced about a minute after its handler's last renewal (the Node
// is NotReady after kube-controller-manager's 50 s).
const (
	fenceHeartbeatTimeout = 30 * time.Second
	fenceAfter            = 30 * time.Second
)

// TestTimedFencing: the opt-in fencing policy on a real node's death. A VM
// (runStrategy Always) annotated virtualization.kubevirt.io/fence-node-after
// 30s runs on node 3; every process of node 3 is killed. virt-controller
// taints the Node node.kubernetes.io/out-of-service by itself once it has
// been NotReady with a silent handler for longer than 30 s, and says so in
// a NodeFenced event on the Node and on the VMI; the VMI fails
// NodeUnresponsive, and the VM runs again on another node. Then node 3 is
// started again and the taint removed: the cluster is left as it was.
func TestTimedFencing(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 3 {
		t.Fatalf("nodes %v, want 3", nodes)
	}
	victim := nodes[2]
	cluster.SetControllerArgs(t, nil, "--heartbeat-timeout="+fenceHeartbeatTimeout.String())
	ns := cluster.Namespace(t)

	// The VM prefers the victim (a preference, not a requirement: its
	// next instance must be able to run elsewhere). Its fence-after is on
	// the VM; the instance gets it from there.
	const name = "vm-fenced"
	vm, err := cluster.ExampleVM("vm-always.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = name
	vm.Annotations = map[string]string{virtv1.FenceNodeAfterAnnotation: fenceAfter.String()}
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": name}
	kb := vm.Spec.Template.Spec.Domain.Firmware.KernelBoot
	kb.KernelArgs = strings.ReplaceAll(kb.KernelArgs, "virt.hostname=vm-always", "virt.hostname="+name)
	vm.Spec.Template.Spec.Affinity = &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.PreferredSchedulingTerm{{Weight: 100, Preference: corev1.NodeSelectorTerm{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: hostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{victim}}},
		}}},
	}}
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first, _ := waitGuestOn(ctx, t, ns, name, victim)
	if got := first.Annotations[virtv1.FenceNodeAfterAnnotation]; got != fenceAfter.String() {
		t.Fatalf("the VMI's fence-after is %q, want the VM's %s", got, fenceAfter)
	}

	// Every version of the VMI from now on: the first instance must be
	// seen Failed/NodeUnresponsive, however briefly.
	var mu sync.Mutex
	var firstEnd *virtv1.VirtualMachineInstance
	watch, err := cluster.WatchVMI(ctx, ns, name, func(vmi *virtv1.VirtualMachineInstance) error {
		mu.Lock()
		defer mu.Unlock()
		if vmi != nil && vmi.UID == first.UID && vmi.Status.Phase.IsFinal() && firstEnd == nil {
			firstEnd = vmi.DeepCopy()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	defer watch.Stop()

	// The cleanups run last-in first-out: the node is started and the
	// taint removed before virt-controller gets its flags back.
	t.Cleanup(func() { unfence(t, victim) })
	killed := time.Now()
	if err := cluster.KillNode(ctx, victim); err != nil {
		t.Fatal(err)
	}

	// The taint comes from virt-controller, by itself: not before the
	// Node is NotReady and the handler silent for 30 s.
	var fencedAt time.Time
	err = framework.WaitFor(ctx, 5*time.Minute, "node "+victim+" fenced", func(ctx context.Context) (bool, error) {
		n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeOutOfService {
				if taint.Value != "nodeshutdown" || taint.Effect != corev1.TaintEffectNoExecute {
					return false, fmt.Errorf("taint %+v", taint)
				}
				fencedAt = time.Now()
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("node %s fenced %s after it was killed", victim, fencedAt.Sub(killed).Round(time.Second))
	if min := fenceHeartbeatTimeout + fenceAfter - 10*time.Second; fencedAt.Sub(killed) < min {
		// The last renewal came up to 10 s before the kill.
		t.Errorf("fenced %s after the kill, before the handler could have been silent for %s", fencedAt.Sub(killed), fenceAfter)
	}
	wantEvent(ctx, t, "default", "Node", victim, "NodeFenced", "node "+victim+" fenced")
	wantEvent(ctx, t, ns, "VirtualMachineInstance", name, "NodeFenced", "the "+virtv1.FenceNodeAfterAnnotation+" annotation of VMI "+ns+"/"+name)

	// The VM runs again, elsewhere.
	var second *virtv1.VirtualMachineInstance
	err = framework.WaitFor(ctx, 5*time.Minute, "VM "+name+" running again on another node", func(ctx context.Context) (bool, error) {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil // between the two instances
		}
		if vmi.UID == first.UID || vmi.Status.Phase != virtv1.Running {
			return false, nil
		}
		second = vmi
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if second.Status.NodeName == victim {
		t.Fatalf("the new instance runs on the fenced node %s", victim)
	}
	waitGuestOn(ctx, t, ns, name, second.Status.NodeName)
	t.Logf("VM %s runs again on %s, %s after the kill", name, second.Status.NodeName, time.Since(killed).Round(time.Second))

	if err := watch.Stop(); err != nil {
		t.Error(err)
	}
	mu.Lock()
	defer mu.Unlock()
	switch {
	case firstEnd == nil:
		t.Errorf("the first instance %s was never seen ended", first.UID)
	case firstEnd.Status.Phase != virtv1.Failed || firstEnd.Status.Reason != virtv1.ReasonNodeUnresponsive:
		t.Errorf("the first instance ended %s/%s, want Failed/%s", firstEnd.Status.Phase, firstEnd.Status.Reason, virtv1.ReasonNodeUnresponsive)
	}
}

// unfence starts node again, removes the out-of-service taint and waits
// until it is Ready with its handler beating: the cluster as the test found it.
func unfence(t *testing.T, node string) {
	t.Helper()
	ctx := context.Background()
	n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		t.Error(err)
		return
	}
	if i := slices.IndexFunc(n.Spec.Taints, func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService }); i >= 0 {
		if _, err := cluster.Kubectl(ctx, "taint", "node", node, corev1.TaintNodeOutOfService+"-"); err != nil {
			t.Errorf("remove the out-of-service taint of %s: %v", node, err)
		}
	}
	restartNode(t, node)
	err = framework.WaitFor(ctx, 2*time.Minute, "the virt-handler of "+node+" beating", func(ctx context.Context) (bool, error) {
		l, err := cluster.Kube.CoordinationV1().Leases("virt-system").Get(ctx, virtv1.HandlerLeaseName(node), metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return l.Spec.RenewTime != nil && time.Since(l.Spec.RenewTime.Time) < 20*time.Second, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// wantEvent waits for an event of reason about the object kind ns/name
// whose message contains text.
func wantEvent(ctx context.Context, t *testing.T, ns, kind, name, reason, text string) {
	t.Helper()
	sel := fields.Set{"involvedObject.kind": kind, "involvedObject.name": name, "reason": reason}.String()
	var seen []string
	err := framework.WaitFor(ctx, time.Minute, "a "+reason+" event on "+kind+" "+name, func(ctx context.Context) (bool, error) {
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: sel})
		if err != nil {
			return false, err
		}
		seen = seen[:0]
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, text) {
				return true, nil
			}
			seen = append(seen, e.Message)
		}
		return false, nil
	})
	if err != nil {
		t.Errorf("%v; seen %q", err, seen)
	}
}
