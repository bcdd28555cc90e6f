package guestpod

import (
	corev1 "k8s.io/api/core/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// GuestInPodCondition is the readiness gate of launcher pods: True while
// the pod's QEMU runs the VMI's guest.
const GuestInPodCondition corev1.PodConditionType = virtv1.GuestInPodCondition

// Reasons of the condition.
const (
	ReasonGuestRuns  = "GuestRuns"
	ReasonNoGuest    = "NoGuestHere"
	ReasonVMIStopped = "VMINotRunning"
)

// GuestPod is the name of the launcher pod a VMI's guest runs in, "" when
// it runs in none (the VMI is not Running) or the status does not say.
func GuestPod(vmi *virtv1.VirtualMachineInstance, pods []*corev1.Pod) string {
	if vmi.Status.Phase != virtv1.Running || vmi.Status.NodeName == "" {
		return ""
	}
	if ms := vmi.Status.MigrationState; ms != nil && ms.SourcePod != "" {
		if ms.Completed {
			return ms.TargetPod
		}
		// Running, failed or cancelled: the guest is (still) on the
		// source.
		return ms.SourcePod
	}
	// No migration yet: the VMI's one launcher pod on its node.
	name := ""
	for _, p := range pods {
		if p.Spec.NodeName != vmi.Status.NodeName || p.DeletionTimestamp != nil {
			continue
		}
		if _, active := vmi.Status.ActivePods[p.UID]; !active {
			continue
		}
		if name != "" {
			return "" // two candidates: the status does not say which
		}
		name = p.Name
	}
	return name
}

// Desired is the condition pod should carry for vmi whose guest runs in
// pod guestPod, and whether the pod has the gate at all.
func Desired(pod *corev1.Pod, vmi *virtv1.VirtualMachineInstance, guestPod string) (corev1.ConditionStatus, string, bool) {
	if !HasGate(pod) {
		return "", "", false
	}
	switch {
	case vmi == nil || vmi.Status.Phase != virtv1.Running:
		return corev1.ConditionFalse, ReasonVMIStopped, true
	case pod.Name == guestPod:
		return corev1.ConditionTrue, ReasonGuestRuns, true
	default:
		return corev1.ConditionFalse, ReasonNoGuest, true
	}
}

// HasGate says whether pod carries the readiness gate (pods created before
// it existed do not, and stay Ready as they were).
func HasGate(pod *corev1.Pod) bool {
	for _, g := range pod.Spec.ReadinessGates {
		if g.ConditionType == GuestInPodCondition {
			return true
		}
	}
	return false
}

// Current is the pod's condition status, "" when it has none yet.
func Current(pod *corev1.Pod) (corev1.ConditionStatus, string) {
	for _, c := range pod.Status.Conditions {
		if c.Type == GuestInPodCondition {
			return c.Status, c.Reason
		}
	}
	return "", ""
}
