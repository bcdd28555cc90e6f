package migration

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"

	"kubevirt.dev/virt/internal/vmipod"
)

// targetProgress is where a target pod stands.
type targetProgress int

const (
	targetCreated   targetProgress = iota // not bound to a node yet
	targetScheduled                       // bound, launcher not ready
	targetReady                           // launcher ready
)

// targetState is what the target pod says about its migration: how far it
// got, or why the migration fails (reason and message set), and when the
// next timeout falls due.
type targetState struct {
	progress        targetProgress
	reason, message string
	recheckAfter    time.Duration
}

// examineTarget looks at the target pod at now. A pod that the scheduler
// cannot place fails the migration once it has been unschedulable for
// cfg.UnschedulableTimeout; any pod whose launcher is not ready
// cfg.PendingTimeout after its creation fails it too (an image that does not
// pull, a launcher that does not start). A target launcher that exited, a
// holder container that ended or a pod being deleted fails it at once:
// nothing waits on it any more.
func examineTarget(pod *corev1.Pod, cfg Config, now time.Time) targetState {
	switch {
	case pod.DeletionTimestamp != nil:
		return targetState{reason: virtv1.MigrationReasonTargetNotReady, message: fmt.Sprintf("target pod %s was deleted", pod.Name)}
	case vmipod.Exited(pod):
		return targetState{reason: virtv1.MigrationReasonTargetNotReady, message: fmt.Sprintf("target launcher of pod %s exited", pod.Name)}
	case vmipod.EndedHolder(pod) != nil:
		cs := vmipod.EndedHolder(pod)
		return targetState{reason: virtv1.MigrationReasonTargetNotReady,
			message: fmt.Sprintf("container %s of target pod %s ended (%s): %s", cs.Name, pod.Name, cs.State.Terminated.Reason, cs.State.Terminated.Message)}
	}
	if pod.Spec.NodeName == "" {
		if c := podCondition(pod, corev1.PodScheduled); c != nil && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			since := c.LastTransitionTime.Time
			if since.IsZero() {
				since = pod.CreationTimestamp.Time
			}
			if left := since.Add(cfg.UnschedulableTimeout).Sub(now); left > 0 {
				return targetState{progress: targetCreated, recheckAfter: left}
			}
			return targetState{reason: virtv1.MigrationReasonTargetUnschedulable,
				message: fmt.Sprintf("target pod %s could not be scheduled for %s: %s", pod.Name, cfg.UnschedulableTimeout, c.Message)}
		}
	}
	progress := targetCreated
	if pod.Spec.NodeName != "" {
		progress = targetScheduled
	}
	// The launcher runs (the target's node waits for it to serve): the
	// pod's own Ready waits for the guest-in-pod gate, which opens only
	// once the guest has arrived, and the container's for a readiness
	// probe of the guest.
	if progress == targetScheduled && pod.Status.Phase == corev1.PodRunning && vmipod.LauncherRunning(pod) {
		return targetState{progress: targetReady}
	}
	if left := pod.CreationTimestamp.Add(cfg.PendingTimeout).Sub(now); left > 0 {
		return targetState{progress: progress, recheckAfter: min(left, cfg.UnschedulableTimeout)}
	}
	return targetState{reason: virtv1.MigrationReasonTargetNotReady,
		message: fmt.Sprintf("target pod %s was not ready within %s", pod.Name, cfg.PendingTimeout)}
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

// avoidSource says which node the target pod must avoid under policy, given
// whether a schedulable node other than the source exists; refused says the
// migration cannot go anywhere (Never with no other node).
func avoidSource(policy SameNodePolicy, source string, otherNode bool) (avoid string, refused bool) {
	switch {
	case policy == SameNodeAlways:
		return "", false
	case otherNode:
		return source, false
	case policy == SameNodeNever:
		return source, true
	default: // IfOnlyNode, and the only node
		return "", false
	}
}
