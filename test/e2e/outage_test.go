package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
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

// outageTimeout is virt-controller's --heartbeat-timeout during
// TestHandlerOutage (5 m by default).
const outageTimeout = 30 * time.Second

// TestHandlerOutage: virt-handler kept off its node for twice the
// unresponsive timeout while the kubelet and QEMU run on. The guest keeps
// running (same QEMU process), its VMI is never anything but Running, it
// carries NodeUnresponsive with one Warning event; when the handler is
// back the condition goes and the handler adopts the guest.
func TestHandlerOutage(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t) // deleted last, once the handler is back
	cluster.SetControllerArgs(t, nil, "--heartbeat-timeout="+outageTimeout.String())

	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")); err != nil {
		t.Fatal(err)
	}
	guest, err := cluster.WaitVMIRunning(ctx, ns, "vmi-tiny")
	if err != nil {
		t.Fatal(err)
	}
	qemu, err := framework.QEMUProcesses(guest)
	if err != nil || len(qemu) != 1 {
		t.Fatalf("want one QEMU process of %s, found %v (%v)", guest.Name, qemu, err)
	}
	sameQEMU := func(when string) {
		t.Helper()
		if pids, err := framework.QEMUProcesses(guest); err != nil || !slices.Equal(pids, qemu) {
			t.Errorf("%s: QEMU processes %v (%v), want the same %v", when, pids, err, qemu)
		}
	}
	watch, err := cluster.WatchVMI(ctx, ns, guest.Name, sameAndRunning(guest))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = watch.Stop() })

	old := handlerPod(t)
	stopped := stopHandler(t)

	// Unresponsive after the timeout (counted from the last renewal,
	// before the stop), with a margin for the controller's requeue.
	var marked *virtv1.VirtualMachineInstance
	err = framework.WaitFor(ctx, outageTimeout+30*time.Second, "NodeUnresponsive on "+guest.Name, func(ctx context.Context) (bool, error) {
		vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, guest.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		marked = vmi
		return framework.Condition(vmi, virtv1.VirtualMachineInstanceNodeUnresponsive) == corev1.ConditionTrue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	cond := marked.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive)
	t.Logf("after %s without a handler: %s %s: %s", time.Since(stopped).Round(time.Second), cond.Type, cond.Reason, cond.Message)
	if cond.Reason != virtv1.ReasonHeartbeatStale {
		t.Errorf("condition reason %q, want %q", cond.Reason, virtv1.ReasonHeartbeatStale)
	}

	// The rest of twice the timeout: still Running (the watch sees every
	// version), same QEMU.
	if err := framework.WaitFor(ctx, 3*outageTimeout, "twice the timeout without a handler", func(ctx context.Context) (bool, error) {
		return time.Since(stopped) >= 2*outageTimeout, nil
	}); err != nil {
		t.Fatal(err)
	}
	sameQEMU("after twice the timeout without a handler")
	vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, guest.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vmi.Status.Phase != virtv1.Running || framework.Condition(vmi, virtv1.VirtualMachineInstanceNodeUnresponsive) != corev1.ConditionTrue {
		t.Errorf("after twice the timeout: phase %s, NodeUnresponsive %s; want Running with the condition",
			vmi.Status.Phase, framework.Condition(vmi, virtv1.VirtualMachineInstanceNodeUnresponsive))
	}
	if n := eventCount(t, ns, guest.Name, virtv1.ReasonNodeUnresponsive); n != 1 {
		t.Errorf("%d %s events, want 1", n, virtv1.ReasonNodeUnresponsive)
	}

	// The handler comes back and adopts the guest.
	restoreHandler(t)
	handler, err := cluster.WaitPodReady(ctx, "virt-system", virtHandlerSelector, string(old.UID), 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, time.Minute, "NodeUnresponsive gone from "+guest.Name, func(ctx context.Context) (bool, error) {
		vmi, err = cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, guest.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return vmi.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive) == nil, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitHandlerResynced(ctx, handler, []*virtv1.VirtualMachineInstance{guest}, 2*time.Minute); err != nil {
		t.Error(err)
	}
	if err := watch.Stop(); err != nil {
		t.Errorf("the VMI left Running during the outage: %v", err)
	}
	sameQEMU("after the handler came back")
	err = framework.WaitFor(ctx, 30*time.Second, "one "+virtv1.ReasonNodeResponsive+" event", func(context.Context) (bool, error) {
		n := eventCount(t, ns, guest.Name, virtv1.ReasonNodeResponsive)
		if n > 1 {
			return false, fmt.Errorf("%d %s events, want 1", n, virtv1.ReasonNodeResponsive)
		}
		return n == 1, nil
	})
	if err != nil {
		t.Error(err)
	}
	if n := eventCount(t, ns, guest.Name, virtv1.ReasonNodeUnresponsive); n != 1 {
		t.Errorf("%d %s events after the outage, want 1", n, virtv1.ReasonNodeUnresponsive)
	}
}

// handlerOffLabel is a node label no node has: a virt-handler DaemonSet
// selecting it runs nowhere.
const handlerOffLabel = "virtualization.kubevirt.io/e2e-handler-off"

// stopHandler takes virt-handler off every node (the DaemonSet's
// nodeSelector selects none) until restoreHandler or the end of the test,
// and returns when its pod is gone.
func stopHandler(t *testing.T) time.Time {
	t.Helper()
	ctx := t.Context()
	t.Cleanup(func() { restoreHandler(t) })
	if err := patchHandlerSelector(ctx, map[string]any{handlerOffLabel: "true"}); err != nil {
		t.Fatal(err)
	}
	err := framework.WaitFor(ctx, 2*time.Minute, "no virt-handler pod", func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtHandlerSelector})
		return err == nil && len(pods.Items) == 0, err
	})
	if err != nil {
		t.Fatal(err)
	}
	return time.Now()
}

// restoreHandler puts virt-handler back on every node; idempotent.
func restoreHandler(t *testing.T) {
	t.Helper()
	if err := patchHandlerSelector(context.Background(), map[string]any{handlerOffLabel: nil}); err != nil {
		t.Errorf("restore virt-handler: %v", err)
	}
}

func patchHandlerSelector(ctx context.Context, selector map[string]any) error {
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{"nodeSelector": selector}}}})
	if err != nil {
		return err
	}
	_, err = cluster.Kube.AppsV1().DaemonSets("virt-system").Patch(ctx, "virt-handler", types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	return err
}

// eventCount sums the counts of the events of VMI ns/name with reason.
func eventCount(t *testing.T, ns, name, reason string) int {
	t.Helper()
	events, err := cluster.Kube.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: fields.Set{
		"involvedObject.name": name, "reason": reason,
	}.String()})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range events.Items {
		n += max(int(e.Count), 1)
	}
	return n
}
