package nodehealth

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/finalizer"
	"kubevirt.dev/virt/internal/vmipod"
)

// health is what the controller knows of a node.
type health struct {
	// unresponsive: the handler's Lease is older than the timeout,
	// missing, or the Node is gone.
	unresponsive bool
	// down: no pod of the node runs any more, whatever the pods say: the
	// Node is deleted or out of service.
	down bool
	// why says so in words, for the condition, the event and the reason.
	why string
	// remaining is how long a responsive node has before it is not.
	remaining time.Duration
}

// sync decides about the VMIs of nodeName, and looks again when a responsive
// node would turn unresponsive.
func (c *Controller) sync(ctx context.Context, nodeName string) error {
	objs, err := c.vmiIndexer.ByIndex(VMINodeIndex, nodeName)
	if err != nil {
		return fmt.Errorf("list VMIs of node %s: %w", nodeName, err)
	}
	if len(objs) == 0 {
		return nil
	}
	h, err := c.health(ctx, nodeName)
	if err != nil {
		return err
	}
	if !h.unresponsive {
		// Renewals requeue the node through their Lease events; this
		// covers the renewal that never comes.
		c.queue.AddAfter(nodeName, h.remaining+time.Second)
	}
	var errs []error
	for _, obj := range objs {
		if err := c.syncVMI(ctx, obj.(*virtv1.VirtualMachineInstance), nodeName, h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// health judges node from its Node and its handler's Lease. A Node missing
// from the cache is looked up in the API before it counts as deleted:
// that verdict fails VMIs.
func (c *Controller) health(ctx context.Context, name string) (health, error) {
	node, err := c.nodeLister.Get(name)
	if apierrors.IsNotFound(err) {
		node, err = c.kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
	}
	switch {
	case apierrors.IsNotFound(err):
		return health{unresponsive: true, down: true, why: fmt.Sprintf("node %s is gone", name)}, nil
	case err != nil:
		return health{}, fmt.Errorf("get node %s: %w", name, err)
	}

	var h health
	lease, err := c.leaseLister.Get(virtv1.HandlerLeaseName(name))
	switch {
	case apierrors.IsNotFound(err):
		h = health{unresponsive: true, why: fmt.Sprintf("node %s is unresponsive: its virt-handler has no Lease", name)}
	case err != nil:
		return health{}, fmt.Errorf("get the virt-handler Lease of node %s: %w", name, err)
	case lease.Spec.RenewTime == nil:
		h = health{unresponsive: true, why: fmt.Sprintf("node %s is unresponsive: its virt-handler never renewed its Lease", name)}
	default:
		renewed := lease.Spec.RenewTime.Time
		h.remaining = c.timeout - c.clock.Since(renewed)
		h.unresponsive = h.remaining <= 0
		h.why = fmt.Sprintf("node %s is unresponsive: its virt-handler last renewed its Lease at %s, more than %s ago",
			name, renewed.UTC().Format(time.RFC3339), c.timeout)
	}
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeOutOfService {
			h.down = true
			h.why += fmt.Sprintf("; it is out of service (taint %s)", corev1.TaintNodeOutOfService)
		}
	}
	return h, nil
}

// syncVMI applies the node's verdict to one of its VMIs.
func (c *Controller) syncVMI(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nodeName string, h health) error {
	if !h.unresponsive {
		return c.clearCondition(ctx, vmi, nodeName)
	}
	if !needsNode(vmi) {
		return nil
	}
	if vmi.Status.Phase.IsFinal() {
		// The guest ended; only the finalizer waits for the handler.
		return c.release(ctx, vmi, h.why)
	}
	runs, err := c.launcherMayRun(ctx, vmi, nodeName, h)
	if err != nil {
		return err
	}
	if !runs {
		return c.release(ctx, vmi, h.why)
	}
	return c.setCondition(ctx, vmi, h.why)
}

// needsNode reports whether vmi still waits for its node's virt-handler:
// to run it, or to remove the guest-shutdown finalizer.
func needsNode(vmi *virtv1.VirtualMachineInstance) bool {
	if !vmi.Status.Phase.IsFinal() {
		return true
	}
	return vmi.DeletionTimestamp != nil && finalizer.Has(vmi, virtv1.GuestShutdownFinalizer)
}

// launcherMayRun reports whether a launcher pod of vmi on nodeName may
// still run its guest: one that has not ended, on a node that is not down.
// A pod being deleted counts: without its kubelet's word it runs on. The
// cache answers yes; a no is asked of the API, since it fails the VMI.
func (c *Controller) launcherMayRun(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nodeName string, h health) (bool, error) {
	if h.down {
		return false, nil
	}
	objs, err := c.podIndexer.ByIndex(vmipod.VMIUIDIndex, string(vmi.UID))
	if err != nil {
		return false, fmt.Errorf("list launcher pods of %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok && runsOn(pod, vmi, nodeName) {
			return true, nil
		}
	}
	pods, err := c.kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{virtv1.CreatedByLabel: string(vmi.UID)}.String(),
	})
	if err != nil {
		return false, fmt.Errorf("confirm the launcher pods of %s/%s ended: %w", vmi.Namespace, vmi.Name, err)
	}
	for i := range pods.Items {
		if runsOn(&pods.Items[i], vmi, nodeName) {
			return true, nil
		}
	}
	return false, nil
}

// runsOn reports whether pod is a launcher pod of vmi on nodeName that has
// not ended.
func runsOn(pod *corev1.Pod, vmi *virtv1.VirtualMachineInstance, nodeName string) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.UID == vmi.UID && pod.Spec.NodeName == nodeName && !vmipod.Exited(pod)
}

// setCondition marks vmi NodeUnresponsive and says so in one event, when
// it is not marked yet. The guest is left alone.
func (c *Controller) setCondition(ctx context.Context, vmi *virtv1.VirtualMachineInstance, why string) error {
	if cond := vmi.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive); cond != nil && cond.Status == corev1.ConditionTrue {
		return nil
	}
	msg := why + "; its launcher pod may still run the guest, which is left running"
	next := vmi.DeepCopy()
	next.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{
		Type: virtv1.VirtualMachineInstanceNodeUnresponsive, Status: corev1.ConditionTrue,
		Reason: virtv1.ReasonHeartbeatStale, Message: msg,
	}, metav1.NewTime(c.clock.Now()))
	if err := c.updateStatus(ctx, next); err != nil {
		return fmt.Errorf("mark VMI %s/%s NodeUnresponsive: %w", vmi.Namespace, vmi.Name, err)
	}
	klog.FromContext(ctx).Info("VMI on an unresponsive node left running", "vmi", klog.KObj(vmi), "reason", why)
	c.recorder.Event(vmi, corev1.EventTypeWarning, virtv1.ReasonNodeUnresponsive, msg)
	return nil
}

// clearCondition removes the NodeUnresponsive condition of vmi, if it has
// one: its node's handler beats again.
func (c *Controller) clearCondition(ctx context.Context, vmi *virtv1.VirtualMachineInstance, nodeName string) error {
	if vmi.Status.Condition(virtv1.VirtualMachineInstanceNodeUnresponsive) == nil {
		return nil
	}
	next := vmi.DeepCopy()
	next.Status.RemoveCondition(virtv1.VirtualMachineInstanceNodeUnresponsive)
	if err := c.updateStatus(ctx, next); err != nil {
		return fmt.Errorf("clear NodeUnresponsive of VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	msg := fmt.Sprintf("the virt-handler of node %s renews its Lease again", nodeName)
	klog.FromContext(ctx).Info("Node responsive again", "vmi", klog.KObj(vmi))
	c.recorder.Event(vmi, corev1.EventTypeNormal, virtv1.ReasonNodeResponsive, msg)
	return nil
}

// updateStatus writes next's status, guarded by its resourceVersion; a VMI
// that is gone needs nothing any more.
func (c *Controller) updateStatus(ctx context.Context, next *virtv1.VirtualMachineInstance) error {
	_, err := c.virt.VirtualizationV1().VirtualMachineInstances(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// release fails vmi and, if it is being deleted, lets it go: no launcher
// runs it any more, and the node that would say so is not there.
func (c *Controller) release(ctx context.Context, vmi *virtv1.VirtualMachineInstance, why string) error {
	logger := klog.FromContext(ctx).WithValues("vmi", klog.KObj(vmi))
	if !vmi.Status.Phase.IsFinal() {
		msg := why + "; no launcher pod of the VMI runs on it"
		next := vmi.DeepCopy()
		next.Status.Fail(virtv1.ReasonNodeUnresponsive, msg, metav1.NewTime(c.clock.Now()))
		// The reason is in Ready and the phase now.
		next.Status.RemoveCondition(virtv1.VirtualMachineInstanceNodeUnresponsive)
		updated, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("fail VMI %s/%s on unresponsive node: %w", vmi.Namespace, vmi.Name, err)
		}
		logger.Info("Failed VMI on an unresponsive node", "reason", msg)
		c.recorder.Event(vmi, corev1.EventTypeWarning, virtv1.ReasonNodeUnresponsive, msg)
		vmi = updated
	}
	if vmi.DeletionTimestamp == nil {
		return nil
	}
	patch, err := finalizer.RemovePatch(vmi, virtv1.GuestShutdownFinalizer)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove guest-shutdown finalizer of VMI %s/%s on unresponsive node: %w", vmi.Namespace, vmi.Name, err)
	}
	logger.Info("Removed the guest-shutdown finalizer of a VMI on an unresponsive node")
	return nil
}
