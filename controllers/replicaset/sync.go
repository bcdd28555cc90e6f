package replicaset

import (
	"context"
	"errors"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Event reasons on the replica set.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonPaused           = "SuccessfulPaused"
	ReasonResumed          = "SuccessfulResumed"
)

// sync brings the replica set of key one burst closer to spec.replicas
// active instances and writes what it observed to its status.
func (c *Controller) sync(ctx context.Context, key string) error {
	logger := klog.FromContext(ctx)
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return fmt.Errorf("split key %q: %w", key, err)
	}
	rs, err := c.rsLister.VirtualMachineInstanceReplicaSets(ns).Get(name)
	if apierrors.IsNotFound(err) {
		c.expectations.Forget(key)
		return nil
	}
	if err != nil {
		return fmt.Errorf("get replica set %s: %w", key, err)
	}
	selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || selector.Empty() || rs.Spec.Template == nil {
		// The API refuses such a replica set; retrying cannot help.
		logger.Error(err, "Replica set without a usable selector or template; ignoring it")
		return nil
	}
	// Read before the cache: an instance observed after this point is
	// either in the list below or still expected.
	satisfied := c.expectations.Satisfied(key)

	all, err := c.vmiLister.VirtualMachineInstances(ns).List(labels.Everything())
	if err != nil {
		return fmt.Errorf("list VMIs of %s: %w", ns, err)
	}
	owned, claimErr := c.claim(ctx, rs, selector, all)
	active, ended := partition(owned)

	var scaleErr error
	failure := ReasonFailedCreate
	switch {
	case !satisfied:
		logger.V(4).Info("Waiting for instance events")
		c.queue.AddAfter(key, c.expectations.Remaining(key))
	case rs.Spec.Paused || rs.DeletionTimestamp != nil:
		// Paused: the user adds and removes instances by hand. Being
		// deleted: the garbage collector removes the instances.
	default:
		failure, scaleErr = c.manage(ctx, key, rs, active)
		if scaleErr == nil && len(ended) > 0 {
			failure = ReasonFailedDelete
			// An ended instance counts for nothing; deleting it (once its
			// replacement is asked for) keeps the namespace from filling
			// with dead guests.
			scaleErr = c.deleteInstances(ctx, key, rs, ended[:min(len(ended), c.burst)])
		}
	}
	statusErr := c.writeStatus(ctx, rs, selector, active, failure, scaleErr)
	return errors.Join(claimErr, scaleErr, statusErr)
}

// partition splits instances into the active ones (not ended, not being
// deleted), which count as replicas, and the ended ones not yet deleted.
func partition(vmis []*virtv1.VirtualMachineInstance) (active, ended []*virtv1.VirtualMachineInstance) {
	for _, vmi := range vmis {
		switch {
		case vmi.DeletionTimestamp != nil:
		case vmi.Status.Phase.IsFinal():
			ended = append(ended, vmi)
		default:
			active = append(active, vmi)
		}
	}
	return active, ended
}

// manage creates or deletes at most a burst of instances so that active
// comes closer to spec.replicas. A failure comes with the reason of the
// ReplicaFailure condition.
func (c *Controller) manage(ctx context.Context, key string, rs *virtv1.VirtualMachineInstanceReplicaSet,
	active []*virtv1.VirtualMachineInstance) (string, error) {
	diff := len(active) - int(desired(rs))
	switch {
	case diff < 0:
		return ReasonFailedCreate, c.createInstances(ctx, key, rs, min(-diff, c.burst))
	case diff > 0:
		surplus := deletionOrder(active)[:min(diff, c.burst)]
		return ReasonFailedDelete, c.deleteInstances(ctx, key, rs, surplus)
	}
	return "", nil
}

// createInstances creates n instances in batches of growing size (1, 2, 4,
// ...), stopping at the first batch with a failure: when every create fails
// alike (quota, an invalid template), the replica set makes one failing
// request per sync instead of n.
func (c *Controller) createInstances(ctx context.Context, key string, rs *virtv1.VirtualMachineInstanceReplicaSet, n int) error {
	// Expect them all first: a watch event may arrive before Create returns.
	c.expectations.ExpectCreations(key, n)
	vmi := NewInstance(rs)
	done := 0
	for batch := 1; done < n; batch = min(2*batch, n-done) {
		batch = min(batch, n-done)
		errs := make([]error, batch)
		var wg sync.WaitGroup
		for i := range batch {
			wg.Go(func() {
				created, err := c.virt.VirtualizationV1().VirtualMachineInstances(rs.Namespace).Create(ctx, vmi.DeepCopy(), metav1.CreateOptions{})
				if err != nil {
					// It will never be observed.
					c.expectations.CreationObserved(key)
					c.recorder.Eventf(rs, corev1.EventTypeWarning, ReasonFailedCreate, "Error creating instance: %v", err)
					errs[i] = fmt.Errorf("create instance of replica set %s: %w", key, err)
					return
				}
				c.recorder.Eventf(rs, corev1.EventTypeNormal, ReasonSuccessfulCreate, "Created instance %s", created.Name)
				klog.FromContext(ctx).V(2).Info("Created instance", "vmi", klog.KObj(created), "uid", created.UID)
			})
		}
		wg.Wait()
		done += batch
		if err := errors.Join(errs...); err != nil {
			for range n - done {
				c.expectations.CreationObserved(key) // never asked for
			}
			return err
		}
	}
	return nil
}

// deleteInstances deletes vmis at once. The deletion is what the replica set
// waits for, not the guest's end: the node shuts each guest down (ACPI, its
// grace period) while the replacement is already being created.
func (c *Controller) deleteInstances(ctx context.Context, key string, rs *virtv1.VirtualMachineInstanceReplicaSet, vmis []*virtv1.VirtualMachineInstance) error {
	uids := make([]string, len(vmis))
	for i, vmi := range vmis {
		uids[i] = string(vmi.UID)
	}
	c.expectations.ExpectDeletions(key, uids...)
	errs := make([]error, len(vmis))
	var wg sync.WaitGroup
	for i, vmi := range vmis {
		wg.Go(func() {
			err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Delete(ctx, vmi.Name, metav1.DeleteOptions{
				Preconditions: metav1.NewUIDPreconditions(string(vmi.UID)),
			})
			switch {
			case err == nil:
				c.recorder.Eventf(rs, corev1.EventTypeNormal, ReasonSuccessfulDelete, "Deleted instance %s (%s)", vmi.Name, vmi.Status.Phase)
				klog.FromContext(ctx).V(2).Info("Deleted instance", "vmi", klog.KObj(vmi), "uid", vmi.UID)
			case apierrors.IsNotFound(err) || apierrors.IsConflict(err):
				// Gone already, or replaced by another of its name.
				c.expectations.DeletionObserved(key, string(vmi.UID))
			default:
				c.expectations.DeletionObserved(key, string(vmi.UID))
				c.recorder.Eventf(rs, corev1.EventTypeWarning, ReasonFailedDelete, "Error deleting instance %s: %v", vmi.Name, err)
				errs[i] = fmt.Errorf("delete instance %s of replica set %s: %w", vmi.Name, key, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// writeStatus records the active and Ready instances, the selector, and the
// conditions, if any of it changed.
func (c *Controller) writeStatus(ctx context.Context, rs *virtv1.VirtualMachineInstanceReplicaSet, selector labels.Selector,
	active []*virtv1.VirtualMachineInstance, failure string, scaleErr error) error {
	now := metav1.NewTime(c.clock.Now())
	status := rs.Status.DeepCopy()
	status.Replicas = int32(len(active))
	status.ReadyReplicas = 0
	for _, vmi := range active {
		if ready(vmi) {
			status.ReadyReplicas++
		}
	}
	status.LabelSelector = selector.String()
	if rs.Spec.Paused {
		status.SetCondition(virtv1.VirtualMachineInstanceReplicaSetCondition{
			Type: virtv1.VirtualMachineInstanceReplicaSetReplicaPaused, Status: corev1.ConditionTrue,
			Reason: "Paused", Message: "The replica set is paused: instances are neither created nor deleted",
		}, now)
	} else {
		status.RemoveCondition(virtv1.VirtualMachineInstanceReplicaSetReplicaPaused)
	}
	if scaleErr != nil {
		status.SetCondition(virtv1.VirtualMachineInstanceReplicaSetCondition{
			Type: virtv1.VirtualMachineInstanceReplicaSetReplicaFailure, Status: corev1.ConditionTrue,
			Reason: failure, Message: scaleErr.Error(),
		}, now)
	} else {
		status.RemoveCondition(virtv1.VirtualMachineInstanceReplicaSetReplicaFailure)
	}
	if equality.Semantic.DeepEqual(rs.Status, *status) {
		return nil
	}
	next := rs.DeepCopy()
	next.Status = *status
	if _, err := c.virt.VirtualizationV1().VirtualMachineInstanceReplicaSets(rs.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		if apierrors.IsConflict(err) {
			// The cache is behind a write (often this controller's own);
			// the informer's update event brings the replica set back.
			klog.FromContext(ctx).V(4).Info("Status written on a stale replica set; waiting for the newer one")
			return nil
		}
		return fmt.Errorf("update status of replica set %s/%s: %w", rs.Namespace, rs.Name, err)
	}
	wasPaused := rs.Status.Condition(virtv1.VirtualMachineInstanceReplicaSetReplicaPaused) != nil
	switch {
	case rs.Spec.Paused && !wasPaused:
		c.recorder.Event(rs, corev1.EventTypeNormal, ReasonPaused, "Paused")
	case !rs.Spec.Paused && wasPaused:
		c.recorder.Event(rs, corev1.EventTypeNormal, ReasonResumed, "Resumed")
	}
	klog.FromContext(ctx).V(2).Info("Updated status", "replicas", status.Replicas, "readyReplicas", status.ReadyReplicas)
	return nil
}
