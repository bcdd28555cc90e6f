package nodes

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// handlerOnLabel marks the nodes whose virt-handler stays while one node's
// is kept off: the DaemonSet's nodeSelector asks for it during the outage.
const handlerOnLabel = "virtualization.kubevirt.io/e2e-handler-on"

// TestHandlerOutageOnNode: the virt-handler of one node kept off it for
// twice the heartbeat timeout while its kubelet and QEMU run on. That
// node's VMI is marked NodeUnresponsive but never leaves Running and keeps
// its QEMU process; the VMI of another node is not even marked; the
// handler that comes back adopts the guest and the condition goes.
func TestHandlerOutageOnNode(t *testing.T) {
	ctx := t.Context()
	nodes := cluster.Nodes()
	if len(nodes) < 2 {
		t.Fatalf("nodes %v: the test needs node 1 and another", nodes)
	}
	steady, silent := nodes[0], nodes[1]
	ns := cluster.Namespace(t)
	controllerOnControlPlane(t, lossTimeout)

	onSilent, _ := startPinnedVMI(ctx, t, ns, "vmi-silent", silent)
	onSteady, _ := startPinnedVMI(ctx, t, ns, "vmi-steady", steady)
	qemu, err := framework.QEMUProcesses(onSilent)
	if err != nil || len(qemu) != 1 {
		t.Fatalf("want one QEMU process of %s, found %v (%v)", onSilent.Name, qemu, err)
	}
	var watches []*framework.VMIWatch
	for _, vmi := range []*virtv1.VirtualMachineInstance{onSilent, onSteady} {
		w, err := cluster.WatchVMI(ctx, ns, vmi.Name, stillRunning(vmi))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop() })
		watches = append(watches, w)
	}

	old, err := handlerPodOn(ctx, silent)
	if err != nil {
		t.Fatal(err)
	}
	stopped := keepHandlerOff(t, silent, nodes)

	err = framework.WaitFor(ctx, lossTimeout+time.Minute, "NodeUnresponsive on "+onSilent.Name, func(ctx context.Context) (bool, error) {
		v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, onSilent.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return framework.Condition(v, virtv1.VirtualMachineInstanceNodeUnresponsive) == corev1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NodeUnresponsive %s after the handler of %s left", time.Since(stopped).Round(time.Second), silent)
	if err := framework.WaitFor(ctx, 3*lossTimeout, "twice the heartbeat timeout without a handler", func(context.Context) (bool, error) {
		return time.Since(stopped) >= 2*lossTimeout, nil
	}); err != nil {
		t.Fatal(err)
	}
	if pids, err := framework.QEMUProcesses(onSilent); err != nil || !slices.Equal(pids, qemu) {
		t.Errorf("after twice the timeout without a handler: QEMU processes %v (%v), want the same %v", pids, err, qemu)
	}
	if v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, onSteady.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if c := v.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive); c != nil {
		t.Errorf("the VMI on %s, whose handler ran throughout, is marked %s=%s: %s", steady, c.Type, c.Status, c.Message)
	}

	restoreHandlerOn(t, nodes)
	back, err := waitHandlerPodReady(ctx, silent, old.UID)
	if err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, time.Minute, "NodeUnresponsive gone from "+onSilent.Name, func(ctx context.Context) (bool, error) {
		v, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, onSilent.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return v.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive) == nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHandlerResynced(ctx, back, []*virtv1.VirtualMachineInstance{onSilent}, 2*time.Minute); err != nil {
		t.Error(err)
	}
	for i, w := range watches {
		if err := w.Stop(); err != nil {
			t.Errorf("VMI %d left Running during the outage: %v", i, err)
		}
	}
	if pids, err := framework.QEMUProcesses(onSilent); err != nil || !slices.Equal(pids, qemu) {
		t.Errorf("after the handler came back: QEMU processes %v (%v), want the same %v", pids, err, qemu)
	}
}

// stillRunning fails a watch of g once it is replaced or leaves Running.
func stillRunning(g *virtv1.VirtualMachineInstance) func(*virtv1.VirtualMachineInstance) error {
	return func(v *virtv1.VirtualMachineInstance) error {
		switch {
		case v == nil:
			return fmt.Errorf("gone, want %s Running", g.UID)
		case v.UID != g.UID:
			return fmt.Errorf("replaced by %s, want %s Running", v.UID, g.UID)
		case v.Status.Phase != virtv1.Running:
			return fmt.Errorf("left Running: now %s (reason %q)", v.Status.Phase, v.Status.Reason)
		}
		return nil
	}
}

// handlerPodOn is the virt-handler pod of node.
func handlerPodOn(ctx context.Context, node string) (*corev1.Pod, error) {
	pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{
		LabelSelector: virtv1.ComponentLabel + "=virt-handler",
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
	})
	if err != nil {
		return nil, err
	}
	if len(pods.Items) != 1 {
		return nil, fmt.Errorf("%d virt-handler pods on %s, want 1", len(pods.Items), node)
	}
	return &pods.Items[0], nil
}

// waitHandlerPodReady waits for a Ready virt-handler pod on node other than
// the one with UID not.
func waitHandlerPodReady(ctx context.Context, node string, not types.UID) (*corev1.Pod, error) {
	var ready *corev1.Pod
	err := framework.WaitFor(ctx, 2*time.Minute, "a new ready virt-handler on "+node, func(ctx context.Context) (bool, error) {
		p, err := handlerPodOn(ctx, node)
		if err != nil {
			return false, nil
		}
		if p.UID == not || p.DeletionTimestamp != nil || !podReady(p) {
			return false, nil
		}
		ready = p
		return true, nil
	})
	return ready, err
}

// keepHandlerOff takes virt-handler off node only, until restoreHandlerOn
// or the end of the test, and returns when its pod there is gone. The
// other nodes keep their handler pods: the DaemonSet updates OnDelete
// meanwhile, so changing its nodeSelector deletes only the pod of the node
// it no longer selects.
func keepHandlerOff(t *testing.T, node string, nodes []string) time.Time {
	t.Helper()
	ctx := t.Context()
	t.Cleanup(func() { restoreHandlerOn(t, nodes) })
	for _, n := range nodes {
		if n != node {
			if err := labelNode(ctx, n, handlerOnLabel, "true"); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := patchHandlerDaemonSet(ctx, map[string]any{
		"updateStrategy": map[string]any{"type": "OnDelete", "rollingUpdate": nil},
		"template":       map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{handlerOnLabel: "true"}}},
	}); err != nil {
		t.Fatal(err)
	}
	err := framework.WaitFor(ctx, 2*time.Minute, "no virt-handler pod on "+node, func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{
			LabelSelector: virtv1.ComponentLabel + "=virt-handler",
			FieldSelector: fields.OneTermEqualSelector("spec.nodeName", node).String(),
		})
		return err == nil && len(pods.Items) == 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// restoreHandlerOn puts the DaemonSet back as deployed (its template
// unchanged, so the other nodes' pods stay current) and unlabels the
// nodes; idempotent.
func restoreHandlerOn(t *testing.T, nodes []string) {
	t.Helper()
	ctx := context.Background()
	if err := patchHandlerDaemonSet(ctx, map[string]any{
		"updateStrategy": map[string]any{"type": "RollingUpdate", "rollingUpdate": map[string]any{"maxUnavailable": 1}},
		"template":       map[string]any{"spec": map[string]any{"nodeSelector": map[string]any{handlerOnLabel: nil}}},
	}); err != nil {
		t.Errorf("restore virt-handler: %v", err)
	}
	for _, n := range nodes {
		if err := labelNode(ctx, n, handlerOnLabel, ""); err != nil {
			t.Errorf("unlabel %s: %v", n, err)
		}
	}
}

func patchHandlerDaemonSet(ctx context.Context, spec map[string]any) error {
	patch, err := json.Marshal(map[string]any{"spec": spec})
	if err != nil {
		return err
	}
	_, err = cluster.Kube.AppsV1().DaemonSets("virt-system").Patch(ctx, "virt-handler", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// labelNode sets label key=value on node, or removes it when value is "".
func labelNode(ctx context.Context, node, key, value string) error {
	var v any = value
	if value == "" {
		v = nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{key: v}}})
	if err != nil {
		return err
	}
	_, err = cluster.Kube.CoreV1().Nodes().Patch(ctx, node, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}
