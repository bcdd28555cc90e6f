package replicaset

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// claim returns the instances rs owns after reconciling ownership with its
// selector: an instance it controls that no longer matches is released, a
// matching one without a controller is adopted. Instances controlled by
// anything else are never touched. An instance that could not be adopted or
// released is left out (or kept) and the error returned, so the sync is
// retried.
func (c *Controller) claim(ctx context.Context, rs *virtv1.VirtualMachineInstanceReplicaSet, selector labels.Selector,
	vmis []*virtv1.VirtualMachineInstance) ([]*virtv1.VirtualMachineInstance, error) {
	var owned []*virtv1.VirtualMachineInstance
	var errs []error
	// Adopting asks the API once whether rs is still alive; a cached rs
	// may be deleted already, and adopting into it would get the instance
	// garbage collected.
	var canAdopt *error
	for _, vmi := range vmis {
		matches := selector.Matches(labels.Set(vmi.Labels))
		ref := metav1.GetControllerOf(vmi)
		switch {
		case ref != nil && ref.UID == rs.UID:
			if matches || rs.DeletionTimestamp != nil || vmi.DeletionTimestamp != nil {
				owned = append(owned, vmi)
				continue
			}
			if err := c.release(ctx, rs, vmi); err != nil {
				owned = append(owned, vmi) // still ours until the release lands
				errs = append(errs, err)
			}
		case ref == nil && matches && vmi.DeletionTimestamp == nil && rs.DeletionTimestamp == nil:
			if canAdopt == nil {
				err := c.recheck(ctx, rs)
				canAdopt = &err
			}
			if *canAdopt != nil {
				errs = append(errs, *canAdopt)
				continue
			}
			adopted, err := c.adopt(ctx, rs, vmi)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if adopted != nil {
				owned = append(owned, adopted)
			}
		}
	}
	return owned, errors.Join(errs...)
}

// recheck asks the API, not the cache, whether rs still exists and is not
// being deleted.
func (c *Controller) recheck(ctx context.Context, rs *virtv1.VirtualMachineInstanceReplicaSet) error {
	fresh, err := c.virt.VirtualizationV1().VirtualMachineInstanceReplicaSets(rs.Namespace).Get(ctx, rs.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("recheck replica set %s/%s before adopting: %w", rs.Namespace, rs.Name, err)
	}
	if fresh.UID != rs.UID {
		return fmt.Errorf("replica set %s/%s was replaced (UID %s, not %s); not adopting", rs.Namespace, rs.Name, fresh.UID, rs.UID)
	}
	if fresh.DeletionTimestamp != nil {
		return fmt.Errorf("replica set %s/%s is being deleted; not adopting", rs.Namespace, rs.Name)
	}
	return nil
}

// ownerPatch is a strategic merge patch of a VMI's owner references. The
// VMI's UID in it is a precondition: a patch of a VMI replaced by another
// of its name fails, since a UID cannot change.
type ownerPatch struct {
	Metadata ownerPatchMeta `json:"metadata"`
}

type ownerPatchMeta struct {
	OwnerReferences []any     `json:"ownerReferences"`
	UID             types.UID `json:"uid"`
}

// adopt makes rs the controller of the orphan vmi and returns the VMI as
// patched; nil without error if the VMI is gone or replaced.
func (c *Controller) adopt(ctx context.Context, rs *virtv1.VirtualMachineInstanceReplicaSet, vmi *virtv1.VirtualMachineInstance) (*virtv1.VirtualMachineInstance, error) {
	patch, err := json.Marshal(ownerPatch{Metadata: ownerPatchMeta{
		OwnerReferences: []any{metav1.NewControllerRef(rs, kind)},
		UID:             vmi.UID,
	}})
	if err != nil {
		return nil, err
	}
	adopted, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or replaced by another VMI of its name (whose UID the
		// patch may not change): nothing to adopt.
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("adopt VMI %s/%s into replica set %s: %w", vmi.Namespace, vmi.Name, rs.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Adopted instance", "vmi", klog.KObj(vmi))
	return adopted, nil
}

// release drops rs's controller reference from vmi, whose labels no longer
// match: the instance keeps running, on its own.
func (c *Controller) release(ctx context.Context, rs *virtv1.VirtualMachineInstanceReplicaSet, vmi *virtv1.VirtualMachineInstance) error {
	patch, err := json.Marshal(ownerPatch{Metadata: ownerPatchMeta{
		OwnerReferences: []any{map[string]any{"$patch": "delete", "uid": rs.UID}},
		UID:             vmi.UID,
	}})
	if err != nil {
		return err
	}
	_, err = c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) || apierrors.IsInvalid(err) {
		// Gone, or replaced by another VMI of its name: nothing of ours
		// left to release.
		return nil
	}
	if err != nil {
		return fmt.Errorf("release VMI %s/%s from replica set %s: %w", vmi.Namespace, vmi.Name, rs.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Released instance", "vmi", klog.KObj(vmi))
	return nil
}
