package virtualmachineinstance

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/finalizer"
	"kubevirt.dev/virt/internal/vmipod"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/vmistatus"
)

// shutdownRecheck is added to a grace period before a VMI being deleted is
// looked at again, should no news of its domain have arrived by then.
const shutdownRecheck = 15 * time.Second

// observation is what the node knows of a VMI's guest.
type observation struct {
	pod      *corev1.Pod
	launcher *monitor.Launcher
	state    monitor.State
	// end is set when the guest has ended (or will never run).
	end *vmistatus.End
	// ended is the domain end comes from, nil when it was told otherwise
	// (the exit code, the pod's absence).
	ended *apiv1.Domain
}

// sync moves the VMI of key along on this node: as the migration target
// of a VMI of another node (migration.go), and as its node.
func (c *Controller) sync(ctx context.Context, key string) error {
	targetErr := c.syncTarget(ctx, key)
	return errors.Join(targetErr, c.syncNode(ctx, key))
}

// syncNode moves a VMI of this node (status.nodeName) along.
func (c *Controller) syncNode(ctx context.Context, key string) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		c.closeSource(key)
		forgetMigrationMetrics(namespace, name, c.cfg.NodeName)
		if c.targetVMI(key) != nil {
			// Migrating here: its target launcher's watch stays.
			return nil
		}
		c.forgetWritten(key)
		c.forgetGuestReport(key)
		c.monitor.ForgetVMI(key)
		return nil
	}
	if err != nil {
		return err
	}
	vmi = c.fresher(key, vmi)
	if vmi.Status.NodeName != c.cfg.NodeName {
		// Not (or no longer) this node's: the informer's field selector
		// lets only ours through; this guards against anything else.
		return nil
	}
	deleting := vmi.DeletionTimestamp != nil
	if deleting && !finalizer.Has(vmi, virtv1.GuestShutdownFinalizer) {
		return nil
	}
	if vmi.Status.Phase.IsFinal() {
		// The guest is gone: ended as recorded, or failed by virt-controller
		// (whose deletion of the pod stops whatever still runs). Nothing a
		// launcher says changes a final phase: stop listening.
		c.closeSource(key)
		c.monitor.ForgetVMI(key)
		return c.finish(ctx, vmi, nil)
	}

	obs, err := c.observe(ctx, vmi)
	if err != nil {
		return err
	}
	switch {
	case obs.end != nil && migratedAway(obs):
		// The guest left by a live migration: it runs on the target, whose
		// handler makes the VMI its own. Nothing ended.
		c.closeSource(key)
		klog.FromContext(ctx).V(2).Info("The launcher's guest migrated away; waiting for the target to take the VMI over")
		return nil
	case obs.end != nil && !deleting:
		end, err := c.blamePod(ctx, vmi, obs)
		if err != nil {
			return err
		}
		return c.finish(ctx, vmi, &end)
	case obs.end != nil:
		return c.finish(ctx, vmi, obs.end)
	case deleting:
		return c.shutdown(ctx, vmi, obs)
	default:
		return c.run(ctx, vmi, obs)
	}
}

// observe gathers the VMI's launcher pod and what its launcher reported.
func (c *Controller) observe(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (*observation, error) {
	pod := c.launcherPod(vmi)
	if pod == nil {
		return c.observeGonePod(ctx, vmi)
	}
	obs := &observation{pod: pod}
	if vmipod.Exited(pod) {
		obs.end, obs.ended = c.endOfPod(ctx, vmi, pod)
		return obs, nil
	}
	l, err := c.monitor.Watch(monitor.Target{
		PodUID:     pod.UID,
		VMIKey:     vmi.Namespace + "/" + vmi.Name,
		VMIUID:     vmi.UID,
		PrivateDir: c.cfg.PodFiles.PrivateDir(string(pod.UID)),
	})
	if err != nil {
		return nil, err
	}
	obs.launcher, obs.state = l, l.State()
	if obs.state.Ended() {
		end := vmistatus.EndOfDomain(obs.state.Domain)
		obs.end, obs.ended = &end, obs.state.Domain
	}
	return obs, nil
}

// observeGonePod decides about a VMI whose launcher pod is not in the
// cache. Failing a VMI cannot be undone, so the API is asked first.
func (c *Controller) observeGonePod(ctx context.Context, vmi *virtv1.VirtualMachineInstance) (*observation, error) {
	pods, err := c.kube.CoreV1().Pods(vmi.Namespace).List(ctx, metav1.ListOptions{
		LabelSelector: labels.Set{virtv1.CreatedByLabel: string(vmi.UID)}.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", c.cfg.NodeName).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("confirm the launcher pod is gone: %w", err)
	}
	for i := range pods.Items {
		if _, active := vmi.Status.ActivePods[pods.Items[i].UID]; active {
			return nil, fmt.Errorf("launcher pod %s exists but is not in the cache yet", pods.Items[i].Name)
		}
	}
	// The pod and its directory are gone; a watch may still know the end.
	obs := &observation{}
	end := vmistatus.LauncherGone("The launcher pod is gone")
	for uid := range vmi.Status.ActivePods {
		if l, ok := c.monitor.Get(uid); ok {
			if st := l.State(); st.Ended() {
				end, obs.ended = vmistatus.EndOfDomain(st.Domain), st.Domain
			}
		}
	}
	obs.end = &end
	return obs, nil
}

// endOfPod is how the guest of an ended launcher pod ended: as its watch
// saw it, as the launcher recorded it, or as its exit code says.
func (c *Controller) endOfPod(ctx context.Context, vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod) (*vmistatus.End, *apiv1.Domain) {
	if l, ok := c.monitor.Get(pod.UID); ok {
		if st := l.State(); st.Ended() {
			end := vmistatus.EndOfDomain(st.Domain)
			return &end, st.Domain
		}
	}
	final, err := monitor.ReadFinalState(c.cfg.PodFiles.PrivateDir(string(pod.UID)))
	if err != nil {
		klog.FromContext(ctx).Error(err, "Reading the launcher's final state failed; using its exit code", "pod", pod.Name)
	}
	if final != nil && monitor.Ended(final) {
		end := vmistatus.EndOfDomain(final)
		return &end, final
	}
	if t := vmipod.ComputeTerminated(pod); t != nil {
		end := vmistatus.EndOfExit(t, vmi.Status.Phase == virtv1.Running)
		return &end, nil
	}
	end := vmistatus.LauncherGone(fmt.Sprintf("The launcher pod %s ended (%s) %s", pod.Name, pod.Status.Phase, pod.Status.Message))
	return &end, nil
}

// blamePod is the end of a guest of a VMI that is not being deleted, with
// its launcher pod's termination taken into account: a pod evicted,
// deleted or terminated by its kubelet stopped a guest nobody on the VMI
// asked to stop (vmistatus.PodTerminated). A pod gone from the API was
// deleted. A launcher asked to shut down whose pod the cache shows
// untouched is looked up in the API: the kubelet may have acted on the
// pod's deletion before the informer delivered it.
func (c *Controller) blamePod(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation) (vmistatus.End, error) {
	end := *obs.end
	if obs.pod == nil {
		// Gone from the API: deleted. Blamed when the pod was seen being
		// terminated, or the launcher said it was told to shut down (its
		// SIGTERM); a pod that is simply missing (a store restored from a
		// backup, a force-deletion that killed the launcher unheard)
		// stays LauncherGone.
		c.mu.Lock()
		why := ""
		for uid := range vmi.Status.ActivePods {
			if w := c.terminating[uid]; w != "" {
				why = w
			}
		}
		c.mu.Unlock()
		if why == "" && obs.ended.GetShutdownRequested() {
			why = "The launcher pod was deleted"
		}
		return vmistatus.PodTerminated(end, obs.ended, why), nil
	}
	why := vmistatus.PodTermination(obs.pod)
	if why == "" && obs.ended.GetShutdownRequested() {
		pods, err := c.kube.CoreV1().Pods(obs.pod.Namespace).List(ctx, metav1.ListOptions{
			FieldSelector: fields.AndSelectors(
				fields.OneTermEqualSelector("metadata.name", obs.pod.Name),
				fields.OneTermEqualSelector("spec.nodeName", c.cfg.NodeName)).String(),
		})
		if err != nil {
			return end, fmt.Errorf("tell whether the launcher pod was terminated: %w", err)
		}
		why = fmt.Sprintf("The launcher pod %s was deleted", obs.pod.Name)
		for i := range pods.Items {
			if pods.Items[i].UID == obs.pod.UID {
				why = vmistatus.PodTermination(&pods.Items[i])
			}
		}
		if why == "" && vmistatus.LivenessKilled(obs.pod) && end.Reason != virtv1.ReasonGuestCrashed {
			// Neither deleted nor evicted, yet told to stop: the
			// kubelet's kill on a failed liveness probe.
			return vmistatus.LivenessFailed(end), nil
		}
	}
	return vmistatus.PodTerminated(end, obs.ended, why), nil
}

// run moves a live VMI along with its domain.
func (c *Controller) run(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation) error {
	st := obs.state
	d := st.Domain
	if d == nil {
		c.warnUnreachable(vmi, st)
		return nil // the watch reports as soon as it connects
	}
	if started(d) {
		c.noteTermination(vmi, obs.pod)
	}
	if !started(d) {
		if vmi.Status.Phase != virtv1.Scheduled {
			end := vmistatus.LauncherGone(fmt.Sprintf("The launcher has no running domain (%s) for a %s VMI", d.GetState(), vmi.Status.Phase))
			return c.finish(ctx, vmi, &end)
		}
		// The NICs are made ready (again: it is idempotent, and a restart
		// of this handler may have cut it short) before every start attempt.
		nics, err := c.cfg.Network.Prepare(ctx, vmi, obs.launcher.Target().PrivateDir)
		if err != nil {
			c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonNetworkSetupFailed, "Preparing the pod network failed, will retry: %v", err)
			return fmt.Errorf("prepare the pod network: %w", err)
		}
		if d, err = obs.launcher.Sync(ctx, vmi, nics); err != nil {
			if d, err = c.syncFailed(ctx, vmi, obs, err); d == nil {
				return err
			}
		}
		if monitor.Ended(d) {
			end := vmistatus.EndOfDomain(d)
			return c.finish(ctx, vmi, &end)
		}
	}
	now := c.clock.Now()
	next, dropped := vmistatus.Running(vmi, obs.pod, d, st.Info, metav1.NewTime(now))
	c.warnGuestReport(vmi, &dropped, now)
	written, err := c.writeStatus(ctx, vmi, next)
	if err != nil {
		return err
	}
	if written != vmi {
		c.recordRunning(vmi, written)
	}
	return c.syncSource(ctx, written, obs)
}

// syncFailed decides about a VMI whose Sync failed with syncErr. A domain
// that started despite the error (the launcher failed after the start, or
// its answer was lost) is returned, to go on with: a guest that runs is
// never failed because a call failed. Otherwise a permanent error
// (apiv1.SyncErrorIsPermanent) fails the VMI, and any other is returned for
// the workqueue to retry with back-off.
func (c *Controller) syncFailed(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation, syncErr error) (*apiv1.Domain, error) {
	logger := klog.FromContext(ctx)
	// The watch may not have caught up with the Sync: ask.
	d, err := obs.launcher.GetDomain(ctx)
	if err != nil {
		d = obs.launcher.State().Domain
	}
	if d != nil && started(d) {
		logger.Info("Sync failed but the domain has started; going on with it", "err", syncErr, "state", d.GetState())
		return d, nil
	}
	if err != nil {
		// Whether a guest runs is unknown: failing the VMI could kill one.
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonSyncRetrying, "Sync failed and the domain is unknown (%v), will retry: %v", err, syncErr)
		return nil, fmt.Errorf("sync failed and the domain is unknown (%v), retrying: %w", err, syncErr)
	}
	if apiv1.SyncErrorIsPermanent(syncErr) {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonSyncFailed, "The launcher refused the guest: %v", syncErr)
		end := vmistatus.SyncFailed(syncErr)
		return nil, c.finish(ctx, vmi, &end)
	}
	c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonSyncRetrying, "Starting the guest failed, will retry: %v", syncErr)
	return nil, fmt.Errorf("sync failed, retrying: %w", syncErr)
}

func (c *Controller) recordRunning(old, vmi *virtv1.VirtualMachineInstance) {
	if old.Status.Phase != virtv1.Running {
		how := ""
		if vmi.Status.Condition(virtv1.VirtualMachineInstanceSoftwareEmulation) != nil {
			how = " under software emulation (TCG)"
		}
		c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonStarted, "Guest started on node %s%s", c.cfg.NodeName, how)
	}
	wasPaused := old.Status.Condition(virtv1.VirtualMachineInstancePaused) != nil
	paused := vmi.Status.Condition(virtv1.VirtualMachineInstancePaused) != nil
	switch {
	case paused && !wasPaused:
		c.recorder.Event(vmi, corev1.EventTypeNormal, ReasonPaused, "Guest paused")
	case wasPaused && !paused:
		c.recorder.Event(vmi, corev1.EventTypeNormal, ReasonResumed, "Guest resumed")
	}
}

// shutdown stops the guest of a VMI being deleted; the end arrives by watch.
func (c *Controller) shutdown(ctx context.Context, vmi *virtv1.VirtualMachineInstance, obs *observation) error {
	key := vmi.Namespace + "/" + vmi.Name
	st := obs.state
	if st.Domain == nil {
		if c.unreachableTooLong(st) {
			c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonShutdownUnconfirmed,
				"The launcher has not answered since %s (%v); releasing the VMI: deleting its pod stops the guest", st.FailingSince.Format(time.RFC3339), st.Err)
			return c.finish(ctx, vmi, nil)
		}
		c.queue.AddAfter(key, c.cfg.UnreachableAfter)
		return nil
	}
	if !started(st.Domain) {
		// No guest ever ran and none will: nothing to shut down.
		return c.finish(ctx, vmi, nil)
	}
	grace := gracePeriod(vmi)
	c.mu.Lock()
	sent, asked := c.shutdownGrace[vmi.UID]
	c.mu.Unlock()
	// The launcher never lengthens a shutdown it runs, so asking again
	// (after a restart of this handler, which forgot what it sent) is
	// harmless; asking with a shorter grace period cuts it short.
	if !asked || grace < sent {
		if err := obs.launcher.Shutdown(ctx, grace); err != nil {
			return err
		}
		c.mu.Lock()
		c.shutdownGrace[vmi.UID] = grace
		c.mu.Unlock()
		switch {
		case asked:
			c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonShuttingDown, "Grace period shortened to %ds", grace)
		case !st.Domain.GetShutdownRequested():
			c.recorder.Eventf(vmi, corev1.EventTypeNormal, ReasonShuttingDown, "Shutting the guest down (ACPI power button), grace period %ds", grace)
		}
	}
	c.queue.AddAfter(key, time.Duration(grace)*time.Second+shutdownRecheck)
	return nil
}

// finish records how the guest ended, if it is not recorded yet, and
// releases a VMI being deleted.
func (c *Controller) finish(ctx context.Context, vmi *virtv1.VirtualMachineInstance, end *vmistatus.End) error {
	c.mu.Lock()
	delete(c.shutdownGrace, vmi.UID)
	for uid := range vmi.Status.ActivePods {
		delete(c.terminating, uid)
	}
	c.mu.Unlock()
	if end != nil && !vmi.Status.Phase.IsFinal() {
		next := vmistatus.Ended(vmi, *end, metav1.NewTime(c.clock.Now()))
		written, err := c.writeStatus(ctx, vmi, next)
		if err != nil {
			return err
		}
		kind := corev1.EventTypeNormal
		if end.Phase == virtv1.Failed {
			kind = corev1.EventTypeWarning
		}
		c.recorder.Eventf(written, kind, ReasonStopped, "%s (%s, %s)", end.Message, end.Phase, end.Reason)
		vmi = written
	}
	if vmi.DeletionTimestamp == nil || !finalizer.Has(vmi, virtv1.GuestShutdownFinalizer) {
		return nil
	}
	if err := c.removeFinalizer(ctx, vmi); err != nil {
		return err
	}
	for uid := range vmi.Status.ActivePods {
		c.monitor.Forget(uid)
	}
	return nil
}

// noteTermination says once, in a Warning event, that the launcher pod of
// vmi's running guest is being evicted, deleted or terminated: its
// launcher is shutting the guest down, and the VMI will fail
// (PodTerminated).
func (c *Controller) noteTermination(vmi *virtv1.VirtualMachineInstance, pod *corev1.Pod) {
	why := vmistatus.PodTermination(pod)
	if why == "" {
		return
	}
	c.mu.Lock()
	noted := c.terminating[pod.UID] != ""
	c.terminating[pod.UID] = why
	c.mu.Unlock()
	if !noted {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonPodTerminating,
			"%s: its launcher shuts the guest down (ACPI power button, destroyed after %ds)", why, gracePeriod(vmi))
	}
}

func (c *Controller) warnUnreachable(vmi *virtv1.VirtualMachineInstance, st monitor.State) {
	if c.unreachableTooLong(st) {
		c.recorder.Eventf(vmi, corev1.EventTypeWarning, ReasonLauncherUnreachable,
			"The launcher has not answered since %s: %v", st.FailingSince.Format(time.RFC3339), st.Err)
	}
	c.queue.AddAfter(vmi.Namespace+"/"+vmi.Name, c.cfg.UnreachableAfter)
}

func (c *Controller) unreachableTooLong(st monitor.State) bool {
	return st.Err != nil && !st.FailingSince.IsZero() && c.clock.Since(st.FailingSince) >= c.cfg.UnreachableAfter
}

// launcherPod is the VMI's active launcher pod on this node, nil if the
// cache has none. During a live migration the VMI has two active pods,
// both on this node when it migrates to the same node: its guest runs in
// the migration's target pod once the migration completed, in the other
// one until then.
func (c *Controller) launcherPod(vmi *virtv1.VirtualMachineInstance) *corev1.Pod {
	objs, err := c.podIndexer.ByIndex(vmipod.VMIUIDIndex, string(vmi.UID))
	if err != nil {
		return nil
	}
	ms := vmi.Status.MigrationState
	for _, obj := range objs {
		pod := obj.(*corev1.Pod)
		if _, active := vmi.Status.ActivePods[pod.UID]; !active || pod.Spec.NodeName != c.cfg.NodeName {
			continue
		}
		if ms != nil && ms.TargetPod != "" && (pod.Name == ms.TargetPod) != ms.Completed {
			continue
		}
		return pod
	}
	return nil
}

// started reports whether d is a domain that was started: not absent, not
// merely defined.
func started(d *apiv1.Domain) bool {
	switch d.GetState() {
	case apiv1.DomainState_DOMAIN_STATE_UNSPECIFIED, apiv1.DomainState_DOMAIN_STATE_ABSENT:
		return false
	case apiv1.DomainState_DOMAIN_STATE_SHUTOFF:
		return monitor.Ended(d)
	}
	return true
}

// gracePeriod is the seconds the guest of vmi has to shut down. virt-apiserver
// defaults and requires the field; only an object that bypassed it lacks one,
// and its guest gets no grace.
func gracePeriod(vmi *virtv1.VirtualMachineInstance) int64 {
	return ptr.Deref(vmi.Spec.TerminationGracePeriodSeconds, 0)
}
