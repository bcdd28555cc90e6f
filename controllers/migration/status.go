package migration

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/internal/finalizer"
)

// handOver writes the VMI's migrationState for m (step 2 of the sequence in
// docs/migration.md): the target node's handler finds its work by
// status.migrationState.targetNode; the target pod joins activePods.
func (c *Controller) handOver(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance, target *corev1.Pod) (*virtv1.VirtualMachineInstanceMigrationState, error) {
	if ms := vmi.Status.MigrationState; names(ms, m.UID) {
		return ms, nil // written by an earlier try
	}
	source := c.sourcePod(vmi, m.UID)
	if source == nil {
		return nil, fmt.Errorf("VMI %s/%s has no active launcher pod on node %s", vmi.Namespace, vmi.Name, vmi.Status.NodeName)
	}
	next := vmi.DeepCopy()
	next.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{
		MigrationUID:           m.UID,
		SourceNode:             vmi.Status.NodeName,
		SourcePod:              source.Name,
		TargetNode:             target.Spec.NodeName,
		TargetPod:              target.Name,
		MigrationConfiguration: c.cfg.MigrationConfiguration(),
	}
	if next.Status.ActivePods == nil {
		next.Status.ActivePods = map[types.UID]string{}
	}
	next.Status.ActivePods[target.UID] = target.Spec.NodeName
	if err := c.updateVMIStatus(ctx, vmi, next); err != nil {
		return nil, err
	}
	return next.Status.MigrationState, nil
}

// succeed records the guest's move; finish removes the source pod.
func (c *Controller) succeed(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) error {
	ms := vmi.Status.MigrationState
	if err := c.setPhase(ctx, m, virtv1.MigrationSucceeded, ms); err != nil {
		return err
	}
	msg := fmt.Sprintf("The guest moved from pod %s on node %s to pod %s on node %s", ms.SourcePod, ms.SourceNode, ms.TargetPod, ms.TargetNode)
	if ms.DowntimeMilliseconds > 0 {
		msg += fmt.Sprintf(", paused %d ms", ms.DowntimeMilliseconds)
	}
	c.event(m, vmi, corev1.EventTypeNormal, ReasonMigrated, msg)
	return nil
}

// fail records why m failed; finish removes the target pod. The guest
// keeps running where it is.
func (c *Controller) fail(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance, reason, msg string) error {
	next := m.DeepCopy()
	next.Status.SetPhase(virtv1.MigrationFailed, c.now())
	next.Status.SetCondition(virtv1.VirtualMachineInstanceMigrationCondition{
		Type: virtv1.VirtualMachineInstanceMigrationFailedCondition, Status: corev1.ConditionTrue, Reason: reason, Message: msg}, c.now())
	if vmi != nil && names(vmi.Status.MigrationState, m.UID) {
		next.Status.MigrationState = vmi.Status.MigrationState.DeepCopy()
	}
	if err := c.writeStatus(ctx, m, next); err != nil {
		return err
	}
	c.event(m, vmi, corev1.EventTypeWarning, ReasonMigrationFailed, fmt.Sprintf("%s: %s", reason, msg))
	return nil
}

// finish cleans up after an ended migration, idempotently: the losing pod
// goes, activePods forgets it, an unfinished hand-over is withdrawn
// (abortRequested, so the source never starts), and a deleted migration
// loses its finalizer.
func (c *Controller) finish(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration) error {
	vmi, err := c.vmiLister.VirtualMachineInstances(m.Namespace).Get(m.Spec.VMIName)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get VMI %s/%s: %w", m.Namespace, m.Spec.VMIName, err)
	}
	if vmi != nil && vmi.DeletionTimestamp == nil {
		if err := c.cleanUp(ctx, m, vmi); err != nil {
			return err
		}
	}
	if m.DeletionTimestamp != nil && finalizer.Has(m, virtv1.MigrationFinalizer) {
		patch, err := finalizer.RemovePatch(m, virtv1.MigrationFinalizer)
		if err != nil {
			return err
		}
		_, err = c.virt.VirtualizationV1().VirtualMachineInstanceMigrations(m.Namespace).Patch(ctx, m.Name, types.MergePatchType, patch, metav1.PatchOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("remove the finalizer of migration %s/%s: %w", m.Namespace, m.Name, err)
		}
	}
	return nil
}

func (c *Controller) cleanUp(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) error {
	targetName := launcherpod.TargetName(vmi, m.UID)
	target, err := c.podLister.Pods(vmi.Namespace).Get(targetName)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	ms := vmi.Status.MigrationState
	ours := names(ms, m.UID)
	next := vmi.DeepCopy()
	if m.Status.Phase == virtv1.MigrationSucceeded {
		if ours && ms.SourcePod != "" && ms.SourcePod != targetName {
			if err := c.deletePod(ctx, m, vmi, ms.SourcePod, ReasonSourcePodDeleted); err != nil {
				return err
			}
		}
		if target != nil {
			for uid := range next.Status.ActivePods {
				if uid != target.UID {
					delete(next.Status.ActivePods, uid)
				}
			}
		}
	} else {
		if target != nil && target.DeletionTimestamp == nil {
			if err := c.deletePod(ctx, m, vmi, targetName, ReasonTargetPodDeleted); err != nil {
				return err
			}
		}
		if target != nil {
			delete(next.Status.ActivePods, target.UID)
		}
		if ours && !ms.Completed && !ms.Failed {
			next.Status.MigrationState.AbortRequested = true
		}
	}
	if equality.Semantic.DeepEqual(vmi.Status, next.Status) {
		return nil
	}
	return c.updateVMIStatus(ctx, vmi, next)
}

func (c *Controller) deletePod(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance, name, reason string) error {
	err := c.kube.CoreV1().Pods(vmi.Namespace).Delete(ctx, name, metav1.DeleteOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("delete pod %s/%s: %w", vmi.Namespace, name, err)
	}
	klog.FromContext(ctx).V(2).Info("Deleted launcher pod", "pod", klog.KRef(vmi.Namespace, name))
	c.event(m, vmi, corev1.EventTypeNormal, reason, fmt.Sprintf("Deleted launcher pod %s", name))
	return nil
}

// setPhase moves m to phase and copies the VMI's migrationState (nil:
// keep), writing only a change.
func (c *Controller) setPhase(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, phase virtv1.VirtualMachineInstanceMigrationPhase, ms *virtv1.VirtualMachineInstanceMigrationState) error {
	next := m.DeepCopy()
	next.Status.SetPhase(phase, c.now())
	if ms != nil {
		next.Status.MigrationState = ms.DeepCopy()
	}
	return c.writeStatus(ctx, m, next)
}

func (c *Controller) setCondition(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, t virtv1.VirtualMachineInstanceMigrationConditionType, reason, msg string) error {
	next := m.DeepCopy()
	next.Status.SetCondition(virtv1.VirtualMachineInstanceMigrationCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg}, c.now())
	return c.writeStatus(ctx, m, next)
}

func (c *Controller) writeStatus(ctx context.Context, old, next *virtv1.VirtualMachineInstanceMigration) error {
	if equality.Semantic.DeepEqual(old.Status, next.Status) {
		return nil
	}
	if _, err := c.virt.VirtualizationV1().VirtualMachineInstanceMigrations(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of migration %s/%s to %s: %w", next.Namespace, next.Name, next.Status.Phase, err)
	}
	klog.FromContext(ctx).V(2).Info("Updated migration status", "phase", next.Status.Phase)
	return nil
}

func (c *Controller) updateVMIStatus(ctx context.Context, old, next *virtv1.VirtualMachineInstance) error {
	if _, err := c.virt.VirtualizationV1().VirtualMachineInstances(next.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update status of VMI %s/%s: %w", old.Namespace, old.Name, err)
	}
	return nil
}

// addFinalizer adds the finalizer (deleting the migration then cancels it),
// guarded by the resourceVersion. (virt-apiserver sets the VMI-name label.)
func (c *Controller) addFinalizer(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": m.ResourceVersion,
		"finalizers":      append(append([]string(nil), m.Finalizers...), virtv1.MigrationFinalizer),
	}})
	if err != nil {
		return err
	}
	_, err = c.virt.VirtualizationV1().VirtualMachineInstanceMigrations(m.Namespace).Patch(ctx, m.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		return fmt.Errorf("add the finalizer of migration %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

// event records an event on the migration and on its VMI.
func (c *Controller) event(m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance, eventType, reason, msg string) {
	c.recorder.Event(m, eventType, reason, msg)
	if vmi != nil {
		c.recorder.Eventf(vmi, eventType, reason, "Migration %s: %s", m.Name, msg)
	}
}

func (c *Controller) now() metav1.Time { return metav1.NewTime(c.clock.Now()) }

func labelsOf(vmi *virtv1.VirtualMachineInstance) labels.Selector {
	return labels.SelectorFromSet(labels.Set{virtv1.CreatedByLabel: string(vmi.UID)})
}
