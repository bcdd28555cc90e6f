package migration

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/internal/finalizer"
)

// sync moves the migration of key one step on, and says when to look
// again if nothing else will requeue it (a timeout, a back-off).
func (c *Controller) sync(ctx context.Context, key string) (time.Duration, error) {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return 0, err
	}
	m, err := c.vmimLister.VirtualMachineInstanceMigrations(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("get migration %s: %w", key, err)
	}
	if m.Status.Phase.Final() {
		return 0, c.finish(ctx, m)
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(ns).Get(m.Spec.VMIName)
	if err != nil && !apierrors.IsNotFound(err) {
		return 0, fmt.Errorf("get VMI %s/%s: %w", ns, m.Spec.VMIName, err)
	}
	if vmi == nil || vmi.DeletionTimestamp != nil || vmi.Status.Phase.IsFinal() {
		return 0, c.fail(ctx, m, vmi, virtv1.MigrationReasonVMIGone, fmt.Sprintf("VMI %s/%s ended or is gone", ns, m.Spec.VMIName))
	}
	if m.DeletionTimestamp == nil && !finalizer.Has(m, virtv1.MigrationFinalizer) {
		return 0, c.addFinalizer(ctx, m)
	}
	if handedOver(m) && !names(vmi.Status.MigrationState, m.UID) {
		// The hand-over writes the VMI, then the migration's phase. The two
		// reach this cache through two watches, so the phase can come first:
		// a cached VMI without the state proves nothing. The API decides.
		if vmi, err = c.liveVMI(ctx, vmi); err != nil || vmi == nil {
			return 0, err
		}
	}
	if m.DeletionTimestamp != nil {
		if done, err := c.cancel(ctx, m, vmi); done || err != nil {
			return 0, err
		}
	}
	switch m.Status.Phase {
	case virtv1.MigrationPhaseUnset:
		return 0, c.setPhase(ctx, m, virtv1.MigrationPending, nil)
	case virtv1.MigrationPending:
		return c.syncPending(ctx, m, vmi)
	case virtv1.MigrationScheduling, virtv1.MigrationScheduled:
		return c.syncTarget(ctx, m, vmi)
	default:
		return 0, c.syncHandedOver(ctx, m, vmi)
	}
}

// handedOver says the VMI named m's target before m's phase was written.
func handedOver(m *virtv1.VirtualMachineInstanceMigration) bool {
	switch m.Status.Phase {
	case virtv1.MigrationPreparingTarget, virtv1.MigrationTargetReady, virtv1.MigrationRunning:
		return true
	}
	return false
}

// names says the migration state is the one of migration uid.
func names(ms *virtv1.VirtualMachineInstanceMigrationState, uid types.UID) bool {
	return ms != nil && ms.MigrationUID == uid
}

// liveVMI reads vmi from the API rather than the cache; nil if it is gone
// (its informer's delete event requeues the migration).
func (c *Controller) liveVMI(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (*virtv1.VirtualMachineInstance, error) {
	live, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Get(ctx, vmi.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get VMI %s/%s: %w", vmi.Namespace, vmi.Name, err)
	}
	return live, nil
}

// syncPending starts the migration once the limits let it: the target pod.
func (c *Controller) syncPending(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) (time.Duration, error) {
	switch {
	case vmi.Status.NodeName == "" || vmi.Status.Phase != virtv1.Running:
		return 0, c.fail(ctx, m, vmi, reasonNotMigratable, fmt.Sprintf("VMI %s/%s is not running on a node", vmi.Namespace, vmi.Name))
	}
	if why := c.notMigratable(vmi); why != "" {
		return 0, c.fail(ctx, m, vmi, reasonNotMigratable, why)
	}
	if other := c.otherActive(m); other != "" {
		return 0, c.fail(ctx, m, vmi, reasonAnotherMigration, fmt.Sprintf("migration %s of VMI %s is not finished", other, vmi.Name))
	}
	if isEvacuation(m) {
		if wait := evacuationBackoff(c.evacuationFailures(m), c.cfg.EvacuationBackoff, c.clock.Now()); wait > 0 {
			c.event(m, vmi, corev1.EventTypeNormal, ReasonBackoff, fmt.Sprintf("Waiting %s after failed evacuation migrations of this VMI", wait.Round(time.Second)))
			return wait, nil
		}
	}
	ok, release := c.admit(m)
	if !ok {
		// A slot frees when another migration ends; its event requeues
		// every pending one.
		klog.FromContext(ctx).V(4).Info("Waiting for the limits on parallel migrations")
		return 0, nil
	}
	wait, err := c.startTarget(ctx, m, vmi)
	if err != nil {
		release()
	}
	return wait, err
}

// startTarget creates the target pod of the admitted m and moves it to
// Scheduling.
func (c *Controller) startTarget(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) (time.Duration, error) {
	avoid, refused := avoidSource(c.cfg.SameNode, vmi.Status.NodeName, c.otherSchedulableNode(vmi.Status.NodeName))
	if refused {
		return 0, c.fail(ctx, m, vmi, virtv1.MigrationReasonSameNodeRefused,
			fmt.Sprintf("no schedulable node other than %s can take the target pod, and --migration-same-node is Never", vmi.Status.NodeName))
	}
	pod, err := launcherpod.NewTarget(vmi, c.cfg.Pod, launcherpod.Target{MigrationUID: m.UID, AvoidNode: avoid})
	if err != nil {
		return 0, c.fail(ctx, m, vmi, virtv1.MigrationReasonTargetNotReady, fmt.Sprintf("cannot render the target pod: %v", err))
	}
	created, err := c.kube.CoreV1().Pods(vmi.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	switch {
	case apierrors.IsAlreadyExists(err):
		// Created by an earlier try whose phase write failed.
	case err != nil:
		c.event(m, vmi, corev1.EventTypeWarning, ReasonFailedTargetPod, fmt.Sprintf("Error creating target pod: %v", err))
		return 0, fmt.Errorf("create target pod of %s/%s: %w", m.Namespace, m.Name, err)
	default:
		c.event(m, vmi, corev1.EventTypeNormal, ReasonTargetPodCreated, fmt.Sprintf("Created target pod %s", created.Name))
	}
	return 0, c.setPhase(ctx, m, virtv1.MigrationScheduling, nil)
}

// syncTarget follows the target pod to its launcher's readiness, then hands
// the target to its node through the VMI.
func (c *Controller) syncTarget(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) (time.Duration, error) {
	pod, err := c.targetPod(ctx, m, vmi)
	if err != nil {
		return 0, err
	}
	if pod == nil {
		return 0, c.fail(ctx, m, vmi, virtv1.MigrationReasonTargetNotReady, "the target pod disappeared")
	}
	st := examineTarget(pod, c.cfg, c.clock.Now())
	switch {
	case st.reason != "":
		return 0, c.fail(ctx, m, vmi, st.reason, st.message)
	case st.progress == targetReady:
		ms, err := c.handOver(ctx, m, vmi, pod)
		if err != nil {
			return 0, err
		}
		c.event(m, vmi, corev1.EventTypeNormal, ReasonPreparingTarget,
			fmt.Sprintf("Target pod %s runs on node %s; its node prepares the target", pod.Name, pod.Spec.NodeName))
		return 0, c.setPhase(ctx, m, virtv1.MigrationPreparingTarget, ms)
	case st.progress == targetScheduled && m.Status.Phase == virtv1.MigrationScheduling:
		return st.recheckAfter, c.setPhase(ctx, m, virtv1.MigrationScheduled, nil)
	}
	return st.recheckAfter, nil
}

// syncHandedOver follows the nodes' progress in the VMI's migrationState.
func (c *Controller) syncHandedOver(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) error {
	ms := vmi.Status.MigrationState
	if !names(ms, m.UID) {
		return c.fail(ctx, m, vmi, reasonStateLost, "the VMI's migrationState no longer names this migration")
	}
	switch {
	case ms.Completed:
		return c.succeed(ctx, m, vmi)
	case ms.Failed:
		msg := "the source node reported the migration failed"
		if ms.FailureReason != "" {
			msg += ": " + ms.FailureReason
		}
		reason := virtv1.MigrationReasonJobFailed
		if ms.AbortStatus == virtv1.MigrationAbortSucceeded {
			reason = virtv1.MigrationReasonAborted
		}
		return c.fail(ctx, m, vmi, reason, msg)
	}
	if m.Status.Phase != virtv1.MigrationRunning {
		// Until the job runs nothing reports a dead target launcher but
		// its pod: the source handler has not started.
		pod, err := c.targetPod(ctx, m, vmi)
		if err != nil {
			return err
		}
		if pod == nil {
			return c.fail(ctx, m, vmi, virtv1.MigrationReasonTargetNotReady, "the target pod disappeared")
		}
		if st := examineTarget(pod, c.cfg, c.clock.Now()); st.reason != "" {
			return c.fail(ctx, m, vmi, st.reason, st.message)
		}
	}
	phase := m.Status.Phase
	switch {
	case ms.StartTimestamp != nil:
		phase = virtv1.MigrationRunning
	case ms.TargetNodeAddress != "" && phase == virtv1.MigrationPreparingTarget:
		phase = virtv1.MigrationTargetReady
	}
	return c.setPhase(ctx, m, phase, ms)
}

// cancel handles a deleted, unfinished migration. Before the job runs the
// target pod goes and the migration fails Aborted; while it runs, the
// source handler is asked to abort (abortRequested) and its answer ends
// the migration through the usual path. done says nothing else is to do.
func (c *Controller) cancel(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) (bool, error) {
	ms := vmi.Status.MigrationState
	ours := names(ms, m.UID)
	if ours && (ms.Completed || ms.Failed) {
		return false, nil // the end is reported; the phase machine records it
	}
	if ours && !ms.AbortRequested {
		next := vmi.DeepCopy()
		next.Status.MigrationState.AbortRequested = true
		if err := c.updateVMIStatus(ctx, vmi, next); err != nil {
			return false, err
		}
		c.event(m, vmi, corev1.EventTypeNormal, ReasonAbortRequested, "The migration was deleted: abort requested")
	}
	if ours && ms.StartTimestamp != nil {
		// The source handler answers with abortStatus and failed (or the
		// job completed first).
		return true, c.setCondition(ctx, m, virtv1.VirtualMachineInstanceMigrationAbortRequested, "", "the migration was deleted")
	}
	return true, c.fail(ctx, m, vmi, virtv1.MigrationReasonAborted, "the migration was deleted before it ran")
}

// otherActive names another unfinished migration of the same VMI that got
// further, or is older, than m ("" if none): one migration per VMI.
func (c *Controller) otherActive(m *virtv1.VirtualMachineInstanceMigration) string {
	objs, _ := c.vmimIndexer.ByIndex(vmiIndex, m.Namespace+"/"+m.Spec.VMIName)
	for _, obj := range objs {
		o := obj.(*virtv1.VirtualMachineInstanceMigration)
		if o.UID == m.UID || o.Status.Phase.Final() {
			continue
		}
		if o.Status.Phase != virtv1.MigrationPending && o.Status.Phase != virtv1.MigrationPhaseUnset {
			return o.Name
		}
	}
	return ""
}

// targetPod is the migration's target pod, from the cache or, right after
// its creation when the cache may lag, from the API; nil if it is gone.
func (c *Controller) targetPod(ctx context.Context, m *virtv1.VirtualMachineInstanceMigration, vmi *virtv1.VirtualMachineInstance) (*corev1.Pod, error) {
	name := launcherpod.TargetName(vmi, m.UID)
	pod, err := c.podLister.Pods(vmi.Namespace).Get(name)
	if apierrors.IsNotFound(err) {
		pod, err = c.kube.CoreV1().Pods(vmi.Namespace).Get(ctx, name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get target pod %s/%s: %w", vmi.Namespace, name, err)
	}
	if uid, ok := launcherpod.IsTarget(pod); !ok || uid != m.UID {
		return nil, nil
	}
	return pod, nil
}

// sourcePod is the pod the guest runs in: the VMI's active pod on its node
// that is not this migration's target.
func (c *Controller) sourcePod(vmi *virtv1.VirtualMachineInstance, migration types.UID) *corev1.Pod {
	pods, err := c.podLister.Pods(vmi.Namespace).List(labelsOf(vmi))
	if err != nil {
		return nil
	}
	for _, p := range pods {
		if _, active := vmi.Status.ActivePods[p.UID]; !active || p.Spec.NodeName != vmi.Status.NodeName {
			continue
		}
		if uid, _ := launcherpod.IsTarget(p); uid == migration && migration != "" {
			continue
		}
		if ref := metav1.GetControllerOf(p); ref != nil && ref.UID == vmi.UID {
			return p
		}
	}
	return nil
}
