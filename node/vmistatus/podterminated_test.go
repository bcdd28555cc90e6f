package vmistatus

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

func TestPodTermination(t *testing.T) {
	now := metav1.Now()
	disruption := func(reason, msg string) []corev1.PodCondition {
		return []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: reason, Message: msg}}
	}
	for _, tc := range []struct {
		name string
		pod  *corev1.Pod
		want string
	}{
		{"no pod", nil, ""},
		{"running", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}}, ""},
		{"a DisruptionTarget that is not True", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionFalse}}}}, ""},
		{"evicted through the Eviction API", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", DeletionTimestamp: &now},
			Status: corev1.PodStatus{Conditions: disruption("EvictionByEvictionAPI", "Eviction API: evicting")}},
			"The launcher pod p was evicted (Eviction API: evicting)"},
		{"taint eviction", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", DeletionTimestamp: &now},
			Status: corev1.PodStatus{Conditions: disruption("DeletionByTaintManager", "Taint manager: deleting due to NoExecute taint")}},
			"The launcher pod p was terminated by Kubernetes (DeletionByTaintManager: Taint manager: deleting due to NoExecute taint)"},
		{"node-pressure eviction by the kubelet", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"},
			Status: corev1.PodStatus{Phase: corev1.PodFailed, Reason: "Evicted", Message: "The node was low on resource: memory."}},
			"The launcher pod p was evicted by its kubelet (The node was low on resource: memory.)"},
		{"deleted", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", DeletionTimestamp: &now}}, "The launcher pod p was deleted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := PodTermination(tc.pod); got != tc.want {
				t.Errorf("PodTermination = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestPodTerminated(t *testing.T) {
	const why = "The launcher pod p was evicted (Eviction API: evicting)"
	requested := &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN, ShutdownRequested: true}
	byItself := &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_GUEST_SHUTDOWN}
	destroyed := &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_DESTROYED, ShutdownRequested: true}
	crashed := &apiv1.Domain{StopReason: apiv1.StopReason_STOP_REASON_CRASHED, Reason: "crashed", ShutdownRequested: true}
	for _, tc := range []struct {
		name       string
		end        End
		d          *apiv1.Domain
		why        string
		wantReason string
		wantMsg    string
	}{
		{"nobody terminated the pod", EndOfDomain(requested), requested, "", virtv1.ReasonGuestShutdown, "The guest powered off"},
		{"ACPI shutdown after the eviction", EndOfDomain(requested), requested, why, virtv1.ReasonPodTerminated, why + "; the guest powered off"},
		{"destroyed after the grace period", EndOfDomain(destroyed), destroyed, why, virtv1.ReasonPodTerminated,
			why + "; the guest did not power off within its grace period and was destroyed"},
		{"powered off before anyone asked", EndOfDomain(byItself), byItself, why, virtv1.ReasonGuestShutdown, "The guest powered off"},
		{"crashed", EndOfDomain(crashed), crashed, why, virtv1.ReasonGuestCrashed, "The guest crashed"},
		{"exit code 0, no domain", EndOfExit(&corev1.ContainerStateTerminated{ExitCode: 0}, true), nil, why, virtv1.ReasonPodTerminated,
			why + "; the guest powered off (launcher exit code 0)"},
		{"launcher killed", EndOfExit(&corev1.ContainerStateTerminated{ExitCode: 137}, true), nil, why, virtv1.ReasonPodTerminated,
			why + "; the launcher failed (exit code 137)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := PodTerminated(tc.end, tc.d, tc.why)
			if got.Reason != tc.wantReason || !strings.HasPrefix(got.Message, tc.wantMsg) {
				t.Errorf("PodTerminated = %s %q, want %s %q", got.Reason, got.Message, tc.wantReason, tc.wantMsg)
			}
			if tc.wantReason == virtv1.ReasonPodTerminated && got.Phase != virtv1.Failed {
				t.Errorf("phase %s, want Failed: the VM restarts it", got.Phase)
			}
		})
	}
}
