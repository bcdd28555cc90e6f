package launcherpod

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func TestLookupOfARenderedPod(t *testing.T) {
	vmi := newVMI(nil)
	pod, err := New(vmi, testConfig)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := IndexByVMIUID(pod); len(got) != 1 || got[0] != string(vmi.UID) {
		t.Errorf("IndexByVMIUID = %v, want [%s]", got, vmi.UID)
	}
	if got := VMIKey(pod); got != vmi.Namespace+"/"+vmi.Name {
		t.Errorf("VMIKey = %q, want %s/%s", got, vmi.Namespace, vmi.Name)
	}
	if Exited(pod) {
		t.Errorf("a new pod has exited")
	}
}

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
		{"compute terminated", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated(ComputeContainer)}}, true},
		{"other container terminated", corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{terminated(ToolsContainer)}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := Exited(&corev1.Pod{Status: tt.status}); got != tt.want {
				t.Errorf("Exited = %v, want %v", got, tt.want)
			}
		})
	}
}
