package vmipod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"

	"kubevirt.dev/virt/launcher/layout"
)

func TestExited(t *testing.T) {
	terminated := func(name string) corev1.ContainerStatus {
		return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}
	}
	for _, tt := range []struct {
		name   string
		status corev1.PodStatus
		want   bool
	}{
		{"running", corev1.PodStatus{Phase: corev1.PodRunning}, false},
		{"succeeded", corev1.PodStatus{Phase: corev1.PodSucceeded}, true},
		{"failed", corev1.PodStatus{Phase: corev1.PodFailed}, true},
		{"compute terminated", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated(layout.ComputeContainer)}}, true},
		{"other container terminated", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated("virt-tools")}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Exited(&corev1.Pod{Status: tt.status}); got != tt.want {
				t.Errorf("Exited = %v, want %v", got, tt.want)
			}
		})
	}
}
