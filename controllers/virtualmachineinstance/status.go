package virtualmachineinstance

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	"kubevirt.dev/virt/launcher/layout"
)

// nextStatus is the status of a VMI that is not yet handed off, given its
// launcher pod, and whether the change is worth a write of its own.
//
// Some changes ride along with the next write instead of causing one: the
// pod's node appearing in activePods and the pod's PodScheduled condition
// turning True. Written eagerly, each would add a status write between
// Scheduling and Scheduled to every VMI; the Scheduled write carries both.
func nextStatus(old *virtv1.VirtualMachineInstanceStatus, pod *corev1.Pod, now metav1.Time) (*virtv1.VirtualMachineInstanceStatus, bool) {
	s := old.DeepCopy()
	switch {
	case pod.DeletionTimestamp != nil, vmipod.Exited(pod):
		// A launcher that exits before the hand-off never ran a guest,
		// whatever its exit code, even while other containers of its pod
		// (a container disk's holder) still run.
		s.Fail(podFailureReason(pod), failureMessage(pod), now)
	case vmipod.EndedHolder(pod) != nil:
		// The launcher runs but cannot start the guest without the files
		// the ended container held: fail now rather than after the
		// launcher's own bound.
		s.Fail(virtv1.ReasonPodFailed, holderMessage(pod, vmipod.EndedHolder(pod)), now)
	case pod.Status.Phase == corev1.PodRunning && vmipod.LauncherRunning(pod) && pod.Spec.NodeName != "":
		s.SetPhase(virtv1.Scheduled, "", now)
		s.NodeName = pod.Spec.NodeName
		s.LauncherContainerImageVersion = computeImage(pod)
	default:
		s.SetPhase(virtv1.Scheduling, "", now)
	}
	s.ActivePods = map[types.UID]string{pod.UID: pod.Spec.NodeName}
	if c := podCondition(pod, corev1.PodScheduled); c != nil {
		// Mirrored with the pod's own times: they say when the scheduler
		// decided, not when this controller noticed.
		s.SetCondition(virtv1.VirtualMachineInstanceCondition{
			Type:               virtv1.VirtualMachineInstancePodScheduled,
			Status:             c.Status,
			LastProbeTime:      c.LastProbeTime,
			LastTransitionTime: c.LastTransitionTime,
			Reason:             c.Reason,
			Message:            c.Message,
		}, now)
	}
	return s, eagerChange(old, s)
}

// podFailureReason is the VMI's reason for a launcher pod that ended or was
// deleted before the hand-off.
func podFailureReason(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return virtv1.ReasonPodDeleted
	}
	return virtv1.ReasonPodFailed
}

// eagerChange reports whether s differs from old in more than the changes
// that wait for the next write.
func eagerChange(old, s *virtv1.VirtualMachineInstanceStatus) bool {
	if s.Phase != old.Phase || s.Reason != old.Reason || s.NodeName != old.NodeName {
		return true
	}
	if !sets.KeySet(s.ActivePods).Equal(sets.KeySet(old.ActivePods)) {
		return true
	}
	oc := old.Condition(virtv1.VirtualMachineInstancePodScheduled)
	nc := s.Condition(virtv1.VirtualMachineInstancePodScheduled)
	switch {
	case nc == nil:
		return false
	case oc == nil:
		return nc.Status != corev1.ConditionTrue
	default:
		return oc.Status != nc.Status || oc.Reason != nc.Reason || oc.Message != nc.Message
	}
}

// failedStatus is old moved to Failed for reason, message saying why.
func failedStatus(old *virtv1.VirtualMachineInstanceStatus, reason, message string, now metav1.Time) *virtv1.VirtualMachineInstanceStatus {
	s := old.DeepCopy()
	s.Fail(reason, message, now)
	return s
}

func podCondition(pod *corev1.Pod, t corev1.PodConditionType) *corev1.PodCondition {
	for i := range pod.Status.Conditions {
		if pod.Status.Conditions[i].Type == t {
			return &pod.Status.Conditions[i]
		}
	}
	return nil
}

func computeImage(pod *corev1.Pod) string {
	for _, c := range pod.Spec.Containers {
		if c.Name == layout.ComputeContainer {
			return c.Image
		}
	}
	return ""
}

// holderMessage says which of pod's holders ended, for the VMI's event.
func holderMessage(pod *corev1.Pod, cs *corev1.ContainerStatus) string {
	t := cs.State.Terminated
	msg := fmt.Sprintf("container %s of launcher pod %s ended (exit code %d, %s) before the VMI was handed to a node; the guest cannot start without the files it holds", cs.Name, pod.Name, t.ExitCode, t.Reason)
	if t.Message != "" {
		msg += ": " + t.Message
	}
	return msg
}

// failureMessage says why pod failed, for the VMI's event.
func failureMessage(pod *corev1.Pod) string {
	if pod.DeletionTimestamp != nil {
		return fmt.Sprintf("launcher pod %s was deleted before the VMI was handed to a node", pod.Name)
	}
	msg := fmt.Sprintf("launcher pod %s ended (%s) before the VMI was handed to a node", pod.Name, pod.Status.Phase)
	if pod.Status.Message != "" {
		return msg + ": " + pod.Status.Message
	}
	for _, cs := range append(pod.Status.InitContainerStatuses, pod.Status.ContainerStatuses...) {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return fmt.Sprintf("%s: container %s exited with %d (%s) %s", msg, cs.Name, t.ExitCode, t.Reason, t.Message)
		}
	}
	return msg
}
