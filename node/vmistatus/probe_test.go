package vmistatus

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// TestRunningReadinessProbe: with a readiness probe, a running guest is
// Ready only while the launcher's compute container (whose probe it is) is.
func TestRunningReadinessProbe(t *testing.T) {
	vmi := scheduled()
	vmi.Spec.ReadinessProbe = &virtv1.Probe{Handler: virtv1.Handler{TCPSocket: &corev1.TCPSocketAction{}}}
	for _, ready := range []bool{false, true} {
		p := pod()
		p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: layout.ComputeContainer, Ready: ready}}
		s, _ := Running(vmi, p, domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, ""), info, t1)
		c := s.Condition(virtv1.VirtualMachineInstanceReady)
		want, reason := corev1.ConditionFalse, ReasonReadinessProbeFailed
		if ready {
			want, reason = corev1.ConditionTrue, ""
		}
		if c == nil || c.Status != want || c.Reason != reason {
			t.Errorf("compute ready %v: Ready %+v, want %s %q", ready, c, want, reason)
		}
	}
	// Without a probe the container's readiness does not matter.
	s, _ := Running(scheduled(), pod(), domain(apiv1.DomainState_DOMAIN_STATE_RUNNING, ""), info, t1)
	if c := s.Condition(virtv1.VirtualMachineInstanceReady); c == nil || c.Status != corev1.ConditionTrue {
		t.Errorf("without a probe: Ready %+v", c)
	}
}

// TestLivenessKilled: only a pod with a liveness probe, neither deleted nor
// evicted, blames its launcher's stop on the probe.
func TestLivenessKilled(t *testing.T) {
	withProbe := func() *corev1.Pod {
		return &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name: layout.ComputeContainer, LivenessProbe: &corev1.Probe{}}}}}
	}
	if !LivenessKilled(withProbe()) {
		t.Error("a pod with a liveness probe, untouched: want true")
	}
	if LivenessKilled(&corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: layout.ComputeContainer}}}}) {
		t.Error("a pod without a liveness probe: want false")
	}
	deleted := withProbe()
	deleted.DeletionTimestamp = &metav1.Time{}
	if LivenessKilled(deleted) {
		t.Error("a deleted pod: want false")
	}
	evicted := withProbe()
	evicted.Status.Reason = "Evicted"
	if LivenessKilled(evicted) {
		t.Error("an evicted pod: want false")
	}
	end := LivenessFailed(End{virtv1.Succeeded, virtv1.ReasonGuestShutdown, "The guest powered off"})
	if end.Phase != virtv1.Failed || end.Reason != virtv1.ReasonLivenessProbeFailed {
		t.Errorf("LivenessFailed = %+v", end)
	}
}
