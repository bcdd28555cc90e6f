package virtualmachineinstance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/internal/finalizer"
	"kubevirt.dev/virt/internal/vmipod"
)

// sync brings the VMI of key one step closer to its wanted state.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("split key %q: %w", key, err)
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get VMI %s: %w", key, err)
	}
	if !c.expectations.Satisfied(key) {
		// The watch event of the pending create or delete requeues the key;
		// the delayed add covers an event that never comes.
		logger.V(4).Info("Waiting for launcher pod events")
		c.queue.AddAfter(key, c.expectations.Remaining(key))
		return nil
	}
	pods, err := c.launcherPods(vmi)
	if err != nil {
		return err
	}
	switch {
	case vmi.DeletionTimestamp != nil:
		return c.syncDeleting(ctx, key, vmi, pods)
	case vmi.Status.Phase.IsFinal():
		// The guest is down for good: free the node's resources. Pods that
		// ended keep their logs until the VMI is deleted.
		return c.deletePods(ctx, key, vmi, filter(alive(pods), func(p *corev1.Pod) bool { return !vmipod.Exited(p) }))
	case vmi.Status.NodeName != "":
		// Handed off: the node daemon owns the VMI until it ends; the
		// pods of its migrations are the migration controller's.
		return nil
	default:
		return c.syncScheduling(ctx, key, vmi, pods)
	}
}

// syncScheduling creates the VMI's pod and follows it until the hand-off.
func (c *Controller) syncScheduling(ctx context.Context, key string, vmi *virtv1.VirtualMachineInstance, pods []*corev1.Pod) error {
	if len(pods) == 0 {
		if len(vmi.Status.ActivePods) == 0 && (vmi.Status.Phase == virtv1.Pending || vmi.Status.Phase == virtv1.PhaseUnset) {
			return c.createPod(ctx, key, vmi)
		}
		// The VMI had a pod: it disappeared before the hand-off. The cache
		// may merely lag behind a pod created by a previous leader; ask.
		left, err := c.podsLeft(ctx, vmi)
		if err != nil || left {
			return err
		}
		const msg = "the launcher pod disappeared before the VMI was handed to a node"
		return c.updateStatus(ctx, vmi, failedStatus(&vmi.Status, virtv1.ReasonPodDeleted, msg, c.now()),
			corev1.EventTypeWarning, virtv1.ReasonPodDeleted, msg)
	}
	// Only one pod is ever created per VMI (its name is a function of the
	// VMI's UID); any other pod claiming the VMI is not ours to run. A
	// migration's target pod is the migration controller's (and none
	// exists before the hand-off).
	pods = filter(pods, func(p *corev1.Pod) bool { _, target := launcherpod.IsTarget(p); return !target })
	if len(pods) == 0 {
		return nil
	}
	if err := c.deletePods(ctx, key, vmi, alive(pods[1:])); err != nil {
		return err
	}
	pod := pods[0]
	status, write := nextStatus(&vmi.Status, pod, c.now())
	// The claims are read again before the hand-off: the node's launcher
	// sizes Filesystem disks from the bound claims' capacity.
	volumes, _, err := c.volumeStatus(ctx, vmi, status.Phase == virtv1.Scheduled)
	if err != nil {
		return err
	}
	if !volumeStatusEqual(volumes, vmi.Status.VolumeStatus) {
		status.VolumeStatus, write = volumes, true
	}
	if !write {
		return nil
	}
	eventType, reason, msg := corev1.EventTypeNormal, "", ""
	switch status.Phase {
	case virtv1.Failed:
		eventType, reason, msg = corev1.EventTypeWarning, status.Reason, status.Condition(virtv1.VirtualMachineInstanceReady).Message
	case virtv1.Scheduled:
		reason, msg = ReasonHandedOff, fmt.Sprintf("launcher pod %s runs on node %s; the node takes over", pod.Name, status.NodeName)
	}
	if err := c.updateStatus(ctx, vmi, status, eventType, reason, msg); err != nil {
		return err
	}
	c.volumeEvents(vmi, vmi.Status.VolumeStatus, status.VolumeStatus)
	return nil
}

// createPod creates the VMI's launcher pod once every claim its volumes name
// exists: a VMI whose claim does not exist fails. A claim that exists but is
// not bound does not hold the pod back (a WaitForFirstConsumer claim binds
// only once its pod is scheduled); the VMI's volumeStatus says why it waits.
func (c *Controller) createPod(ctx context.Context, key string, vmi *virtv1.VirtualMachineInstance) error {
	volumes, missing, err := c.volumeStatus(ctx, vmi, true)
	if err != nil {
		return err
	}
	if missing != nil {
		msg := missing.message(vmi.Namespace)
		return c.updateStatus(ctx, vmi, failedStatus(&vmi.Status, virtv1.ReasonPVCNotFound, msg, c.now()),
			corev1.EventTypeWarning, virtv1.ReasonPVCNotFound, msg)
	}
	// The pod is rendered from the volumes' status: a Block claim is a
	// device of the launcher container, not a mount.
	vmi = vmi.DeepCopy()
	old := vmi.Status.VolumeStatus
	vmi.Status.VolumeStatus = volumes
	pod, err := launcherpod.New(vmi, c.podConfig)
	if err != nil {
		// Retrying cannot fix a VMI the pod cannot be rendered for; the
		// event tells the user why nothing happens.
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonFailedCreate, "Cannot render the launcher pod: %v", err)
		klog.FromContext(ctx).Error(err, "Cannot render the launcher pod")
		return nil
	}
	c.expectations.ExpectCreations(key, 1)
	created, err := c.kube.CoreV1().Pods(vmi.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		c.expectations.CreationObserved(key)
		if apierrors.IsAlreadyExists(err) {
			// Created before, not yet in the cache: its event requeues us.
			return fmt.Errorf("launcher pod %s exists but is not yet observed: %w", pod.Name, err)
		}
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating launcher pod: %v", err)
		return fmt.Errorf("create launcher pod of %s: %w", key, err)
	}
	c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created launcher pod %s", created.Name)
	klog.FromContext(ctx).V(2).Info("Created launcher pod", "pod", klog.KObj(created))
	status, _ := nextStatus(&vmi.Status, created, c.now())
	if err := c.updateStatus(ctx, vmi, status, "", "", ""); err != nil {
		return err
	}
	c.volumeEvents(vmi, old, volumes)
	return nil
}

// syncDeleting releases a VMI that is being deleted: its pod goes once the
// guest is down, the finalizer once the pod is gone.
func (c *Controller) syncDeleting(ctx context.Context, key string, vmi *virtv1.VirtualMachineInstance, pods []*corev1.Pod) error {
	handedOff := vmi.Status.NodeName != ""
	// Before the hand-off no guest was ever started; after it, the node
	// daemon says the guest is down by removing its finalizer or ending the
	// VMI, or the launcher says it by exiting.
	guestDown := !handedOff ||
		!finalizer.Has(vmi, virtv1.GuestShutdownFinalizer) ||
		vmi.Status.Phase.IsFinal() ||
		len(pods) == 0 ||
		slices.ContainsFunc(guestPods(vmi, pods), vmipod.Exited)
	if !guestDown {
		return nil
	}
	if err := c.deletePods(ctx, key, vmi, alive(pods)); err != nil {
		return err
	}
	var remove []string
	if !handedOff && finalizer.Has(vmi, virtv1.GuestShutdownFinalizer) {
		remove = append(remove, virtv1.GuestShutdownFinalizer)
	}
	if len(pods) == 0 && finalizer.Has(vmi, virtv1.LauncherPodFinalizer) {
		left, err := c.podsLeft(ctx, vmi)
		if err != nil {
			return err
		}
		if !left {
			remove = append(remove, virtv1.LauncherPodFinalizer)
		}
	}
	return c.removeFinalizers(ctx, vmi, remove...)
}

// guestPods are the pods that may hold the guest: not the source pod of a
// completed migration (its launcher exits ExitMigrated once the guest left),
// not the target pod of a migration that did not complete. Only their end
// says the guest is down.
func guestPods(vmi *virtv1.VirtualMachineInstance, pods []*corev1.Pod) []*corev1.Pod {
	ms := vmi.Status.MigrationState
	return filter(pods, func(p *corev1.Pod) bool {
		if ms != nil && ms.Completed && p.Name == ms.SourcePod {
			return false
		}
		if uid, target := launcherpod.IsTarget(p); target {
			return ms != nil && ms.Completed && ms.MigrationUID == uid
		}
		return true
	})
}

func (c *Controller) removeFinalizers(ctx context.Context, vmi *virtv1.VirtualMachineInstance, names ...string) error {
	patch, err := finalizer.RemovePatch(vmi, names...)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove finalizers %s of VMI %s/%s: %w", strings.Join(names, ", "), vmi.Namespace, vmi.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Removed finalizers", "finalizers", names)
	return nil
}

// deletePods deletes pods, each only if it is still the pod that was seen.
func (c *Controller) deletePods(ctx context.Context, key string, vmi *virtv1.VirtualMachineInstance, pods []*corev1.Pod) error {
	var errs []error
	for _, pod := range pods {
		uid := string(pod.UID)
		c.expectations.ExpectDeletions(key, uid)
		err := c.kube.CoreV1().Pods(pod.Namespace).Delete(ctx, pod.Name, metav1.DeleteOptions{
			Preconditions: metav1.NewUIDPreconditions(uid),
		})
		switch {
		case err == nil:
			c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted launcher pod %s", pod.Name)
			klog.FromContext(ctx).V(2).Info("Deleted launcher pod", "pod", klog.KObj(pod))
		case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
			// Gone already, or replaced by a pod of the same name: either
			// way the pod we meant to delete is no more.
			c.expectations.DeletionObserved(key, uid)
		default:
			c.expectations.DeletionObserved(key, uid)
			c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting launcher pod %s: %v", pod.Name, err)
			errs = append(errs, fmt.Errorf("delete launcher pod %s/%s: %w", pod.Namespace, pod.Name, err))
		}
	}
	return errors.Join(errs...)
}

// updateStatus writes status to the VMI's /status and, if reason is set,
// records the event that explains the change.
func (c *Controller) updateStatus(ctx context.Context, vmi *virtv1.VirtualMachineInstance, status *virtv1.VirtualMachineInstanceStatus, eventType, reason, msg string) error {
	next := vmi.DeepCopy()
	next.Status = *status
	if _, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of VMI %s/%s to %s: %w", vmi.Namespace, vmi.Name, status.Phase, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "phase", status.Phase, "reason", status.Reason, "node", status.NodeName)
	if reason != "" {
		c.recorder.Event(vmi, eventType, reason, msg)
	}
	return nil
}

// launcherPods are the pods in the cache whose controller is vmi, oldest first.
func (c *Controller) launcherPods(vmi *virtv1.VirtualMachineInstance) ([]*corev1.Pod, error) {
	objs, err := c.podIndexer.ByIndex(vmipod.VMIUIDIndex, string(vmi.UID))
	if err != nil {
		return nil, fmt.Errorf("list launcher pods of %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	var pods []*corev1.Pod
	for _, obj := range objs {
		if pod, ok := obj.(*corev1.Pod); ok && controlledBy(pod, vmi.UID) {
			pods = append(pods, pod)
		}
	}
	slices.SortFunc(pods, func(a, b *corev1.Pod) int {
		if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return pods, nil
}

// podsLeft asks the API, not the cache, whether any pod of vmi still exists:
// asked before a decision that cannot be undone (failing the VMI, releasing
// its finalizer), it makes the decision independent of cache lag.
func (c *Controller) podsLeft(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (bool, error) {
	list, err := c.kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{virtv1.CreatedByLabel: string(vmi.UID)}.String(),
	})
	if err != nil {
		return false, fmt.Errorf("list launcher pods of %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	return slices.ContainsFunc(list.Items, func(p corev1.Pod) bool { return controlledBy(&p, vmi.UID) }), nil
}

func (c *Controller) now() metav1.Time {
	return metav1.NewTime(c.clock.Now())
}

func controlledBy(pod *corev1.Pod, uid types.UID) bool {
	ref := metav1.GetControllerOf(pod)
	return ref != nil && ref.UID == uid
}

// alive are the pods not yet being deleted: the ones a delete can still act
// on.
func alive(pods []*corev1.Pod) []*corev1.Pod {
	return filter(pods, func(p *corev1.Pod) bool { return p.DeletionTimestamp == nil })
}

// filter is the pods that keep accepts, in order.
func filter(pods []*corev1.Pod, keep func(*corev1.Pod) bool) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range pods {
		if keep(p) {
			out = append(out, p)
		}
	}
	return out
}
