package vmistatus

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// End is how a guest ended: the VMI's final phase, its reason and a message
// for the Ready condition and the event.
type End struct {
	Phase   virtv1.VirtualMachineInstancePhase
	Reason  string
	Message string
}

// EndOfDomain is the end of a domain that ran and stopped, as the launcher
// reported it (WatchDomain, GetDomain or its final-state file).
func EndOfDomain(d *apiv1.Domain) End {
	libvirt := d.GetReason()
	switch d.GetStopReason() {
	case apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN:
		return End{virtv1.Succeeded, virtv1.ReasonGuestShutdown, "The guest powered off"}
	case apiv1.StopReason_STOP_REASON_DESTROYED:
		msg := "The domain was destroyed"
		if d.GetShutdownRequested() {
			msg = "The guest did not power off within its grace period and was destroyed"
		}
		return End{virtv1.Failed, virtv1.ReasonGuestDestroyed, msg}
	case apiv1.StopReason_STOP_REASON_CRASHED:
		// libvirt says "failed" when QEMU itself went away under a running
		// guest (killed, or crashed), "crashed" when the guest crashed.
		// Both are GuestCrashed ("qemu or the guest crashed"): the launcher
		// that reports it is alive, so it is not LauncherGone; the message
		// tells the two apart.
		if libvirt == "failed" {
			return End{virtv1.Failed, virtv1.ReasonGuestCrashed, "QEMU exited unexpectedly under the running guest (libvirt: failed)"}
		}
		return End{virtv1.Failed, virtv1.ReasonGuestCrashed, fmt.Sprintf("The guest crashed (libvirt: %s)", libvirt)}
	default:
		return End{virtv1.Failed, virtv1.ReasonLauncherGone, fmt.Sprintf("The domain stopped for an unknown reason (libvirt: %s)", libvirt)}
	}
}

// EndOfExit is the end told by the launcher container's termination, for a
// launcher that left no final state. guestRan says whether the VMI was
// Running: a launcher exits 0 also when stopped before it started a guest.
func EndOfExit(t *corev1.ContainerStateTerminated, guestRan bool) End {
	code := int(t.ExitCode)
	detail := fmt.Sprintf("exit code %d", code)
	if t.Reason != "" {
		detail += ", " + t.Reason
	}
	if t.Message != "" {
		detail += ": " + t.Message
	}
	switch {
	case code == apiv1.ExitGuestShutdown && guestRan:
		return End{virtv1.Succeeded, virtv1.ReasonGuestShutdown, "The guest powered off (launcher " + detail + ")"}
	case code == apiv1.ExitGuestShutdown:
		return End{virtv1.Failed, virtv1.ReasonLauncherGone, "The launcher exited before it started the guest (" + detail + ")"}
	case code == apiv1.ExitCrashed:
		return End{virtv1.Failed, virtv1.ReasonGuestCrashed, "The guest or QEMU crashed (launcher " + detail + ")"}
	case code == apiv1.ExitDestroyed:
		return End{virtv1.Failed, virtv1.ReasonGuestDestroyed, "The domain was destroyed (launcher " + detail + ")"}
	default:
		return End{virtv1.Failed, virtv1.ReasonLauncherGone, "The launcher failed (" + detail + ")"}
	}
}

// LauncherGone is the end of a guest whose launcher disappeared without
// telling how.
func LauncherGone(why string) End {
	return End{virtv1.Failed, virtv1.ReasonLauncherGone, why}
}

// SyncFailed is the end of a guest the launcher could not define or start.
func SyncFailed(err error) End {
	return End{virtv1.Failed, virtv1.ReasonSyncFailed, fmt.Sprintf("The launcher could not start the guest: %v", err)}
}

// evictionByEvictionAPI is the DisruptionTarget reason of a pod evicted
// through the Eviction API (kubectl drain); client-go names no constant
// for it.
const evictionByEvictionAPI = "EvictionByEvictionAPI"

// PodTermination says who stopped the launcher pod, "" when nothing says
// anyone did: evicted through the Eviction API (kubectl drain), marked
// for termination by another part of Kubernetes (the DisruptionTarget
// condition: preemption, taint eviction, the pod garbage collector, the
// kubelet's node-pressure eviction or graceful node shutdown), evicted by
// the kubelet, or deleted. Each of them SIGTERMs the launcher, which shuts
// its guest down. The caller knows the VMI is neither being deleted nor
// ended, so the platform did not ask for it.
func PodTermination(pod *corev1.Pod) string {
	if pod == nil {
		return ""
	}
	for _, c := range pod.Status.Conditions {
		if c.Type != corev1.DisruptionTarget || c.Status != corev1.ConditionTrue {
			continue
		}
		if c.Reason == evictionByEvictionAPI {
			return fmt.Sprintf("The launcher pod %s was evicted (%s)", pod.Name, c.Message)
		}
		return fmt.Sprintf("The launcher pod %s was terminated by Kubernetes (%s: %s)", pod.Name, c.Reason, c.Message)
	}
	if pod.Status.Reason == "Evicted" {
		return fmt.Sprintf("The launcher pod %s was evicted by its kubelet (%s)", pod.Name, pod.Status.Message)
	}
	if pod.DeletionTimestamp != nil {
		return fmt.Sprintf("The launcher pod %s was deleted", pod.Name)
	}
	return ""
}

// LivenessKilled reports whether the kubelet stopped pod's launcher for a
// failed liveness probe, given that the launcher was told to shut its guest
// down (its SIGTERM) while its VMI was not being deleted: the compute
// container carries the VMI's liveness probe (launcherpod.guestProbe) and
// the pod is neither deleted nor evicted (PodTermination says ""), which
// leaves the kubelet's kill of a container that fails its liveness probe.
// The launcher may still be lingering: its container's status does not
// tell yet. The pod's restart policy Never keeps the kubelet from starting
// the launcher again in place.
func LivenessKilled(pod *corev1.Pod) bool {
	if pod == nil || pod.DeletionTimestamp != nil || PodTermination(pod) != "" {
		return false
	}
	for _, c := range pod.Spec.Containers {
		if c.Name == layout.ComputeContainer {
			return c.LivenessProbe != nil
		}
	}
	return false
}

// LivenessFailed is the end of a guest whose launcher the kubelet stopped
// for a failed liveness probe (LivenessKilled), end being how the guest
// itself ended then.
func LivenessFailed(end End) End {
	return End{virtv1.Failed, virtv1.ReasonLivenessProbeFailed,
		"The guest failed its liveness probe and the kubelet stopped its launcher (the launcher pod's events say why); " + lowerFirst(end.Message)}
}

// PodTerminated is the end of a guest whose launcher pod was stopped from
// outside (why, from PodTermination): its launcher's SIGTERM shut the guest
// down, or the grace period ran out, or the launcher went with its pod.
// That is Failed, PodTerminated: neither the guest nor the VMI's user
// ended it, and a VM restarts it (KubeVirt too fails a VMI whose pod went
// away). A guest that powered off on its own before anyone asked (d, the
// last domain known, says no shutdown was requested) or crashed ends as it
// did. d may be nil when only the exit code tells.
func PodTerminated(end End, d *apiv1.Domain, why string) End {
	switch {
	case why == "", end.Reason == virtv1.ReasonGuestCrashed:
		return end
	case end.Reason == virtv1.ReasonGuestShutdown && d != nil && !d.GetShutdownRequested():
		return end
	}
	return End{virtv1.Failed, virtv1.ReasonPodTerminated, why + "; " + lowerFirst(end.Message)}
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' || (len(s) > 1 && s[1] >= 'A' && s[1] <= 'Z') {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}
