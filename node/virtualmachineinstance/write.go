package virtualmachineinstance

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/finalizer"
)

// writeStatus writes next as vmi's status through /status unless it equals
// the status vmi has, and returns the VMI as written (vmi itself when
// nothing was written). The update carries vmi's resourceVersion: a status
// computed from a stale read fails with a conflict instead of overwriting
// what virt-controller wrote in between.
func (c *Controller) writeStatus(ctx context.Context, vmi *virtv1.VirtualMachineInstance, next *virtv1.VirtualMachineInstanceStatus) (*virtv1.VirtualMachineInstance, error) {
	if equality.Semantic.DeepEqual(&vmi.Status, next) {
		return vmi, nil
	}
	update := vmi.DeepCopy()
	update.Status = *next
	written, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, update, metav1.UpdateOptions{})
	if err != nil {
		return nil, fmt.Errorf("update status of VMI %s/%s to %s: %w", vmi.Namespace, vmi.Name, next.Phase, err)
	}
	klog.FromContext(ctx).V(2).Info("Wrote status", "phase", written.Status.Phase, "reason", written.Status.Reason,
		"resourceVersion", written.ResourceVersion)
	c.remember(vmi, written)
	return written, nil
}

// removeFinalizer releases vmi from the guest-shutdown finalizer with a
// merge patch of metadata.finalizers guarded by its resourceVersion.
func (c *Controller) removeFinalizer(ctx context.Context, vmi *virtv1.VirtualMachineInstance) error {
	patch, err := finalizer.RemovePatch(vmi, virtv1.GuestShutdownFinalizer)
	if err != nil || patch == nil {
		return err
	}
	written, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("remove finalizer %s from VMI %s/%s: %w", virtv1.GuestShutdownFinalizer, vmi.Namespace, vmi.Name, err)
	}
	klog.FromContext(ctx).V(2).Info("Removed finalizer", "finalizer", virtv1.GuestShutdownFinalizer)
	c.remember(vmi, written)
	return nil
}

// remember records that from replaced the VMI became written.
func (c *Controller) remember(from, written *virtv1.VirtualMachineInstance) {
	key := from.Namespace + "/" + from.Name
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.written[key]
	if !ok || w.vmi.ResourceVersion != from.ResourceVersion {
		w = writtenVMI{replaced: sets.New[string]()}
	}
	w.replaced.Insert(from.ResourceVersion)
	w.vmi = written
	c.written[key] = w
}

// fresher is the VMI this controller last wrote if the cache still shows a
// version that write replaced, else cached (the cache caught up).
func (c *Controller) fresher(key string, cached *virtv1.VirtualMachineInstance) *virtv1.VirtualMachineInstance {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.written[key]
	if !ok {
		return cached
	}
	if w.replaced.Has(cached.ResourceVersion) {
		return w.vmi
	}
	delete(c.written, key)
	return cached
}

func (c *Controller) forgetWritten(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.written, key)
}
