package migration

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"

	"kubevirt.dev/virt/launcher/layout"
)

func TestExamineTarget(t *testing.T) {
	created := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	cfg := Config{UnschedulableTimeout: 5 * time.Minute, PendingTimeout: 15 * time.Minute}
	pod := func(mutate func(*corev1.Pod)) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "target", CreationTimestamp: metav1.NewTime(created)},
			Status: corev1.PodStatus{Phase: corev1.PodPending}}
		mutate(p)
		return p
	}
	unschedulable := func(since time.Time) func(*corev1.Pod) {
		return func(p *corev1.Pod) {
			p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: corev1.PodReasonUnschedulable, Message: "0/1 nodes are available", LastTransitionTime: metav1.NewTime(since)}}
		}
	}
	bound := func(p *corev1.Pod) { p.Spec.NodeName = "n2" }
	ready := func(p *corev1.Pod) {
		p.Spec.NodeName = "n2"
		p.Status.Phase = corev1.PodRunning
		launcherStarted(p)
	}
	for _, tt := range []struct {
		name       string
		pod        *corev1.Pod
		now        time.Time
		want       targetProgress
		wantReason string
		wantMsg    string
		wantAfter  time.Duration
	}{
		{name: "just created", pod: pod(func(*corev1.Pod) {}), now: created, want: targetCreated, wantAfter: 5 * time.Minute},
		{name: "unschedulable for 1m", pod: pod(unschedulable(created.Add(time.Minute))), now: created.Add(2 * time.Minute),
			want: targetCreated, wantAfter: 4 * time.Minute},
		{name: "unschedulable for 5m", pod: pod(unschedulable(created)), now: created.Add(5 * time.Minute),
			wantReason: virtv1.MigrationReasonTargetUnschedulable, wantMsg: "0/1 nodes are available"},
		{name: "bound", pod: pod(bound), now: created.Add(time.Minute), want: targetScheduled, wantAfter: 5 * time.Minute},
		{name: "bound, late in the pending timeout", pod: pod(bound), now: created.Add(14 * time.Minute), want: targetScheduled, wantAfter: time.Minute},
		{name: "bound, not ready for 15m", pod: pod(bound), now: created.Add(15 * time.Minute),
			wantReason: virtv1.MigrationReasonTargetNotReady, wantMsg: "not ready within 15m0s"},
		{name: "ready", pod: pod(ready), now: created.Add(time.Hour), want: targetReady},
		{name: "launcher exited", pod: pod(func(p *corev1.Pod) {
			ready(p)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: layout.ComputeContainer,
				State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 1}}}}
		}), now: created, wantReason: virtv1.MigrationReasonTargetNotReady, wantMsg: "exited"},
		{name: "holder ended", pod: pod(func(p *corev1.Pod) {
			bound(p)
			p.Status.ContainerStatuses = []corev1.ContainerStatus{
				{Name: layout.ComputeContainer, State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{}}},
				{Name: "kernel-boot", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 128, Reason: "StartError"}}},
			}
		}), now: created, wantReason: virtv1.MigrationReasonTargetNotReady, wantMsg: "container kernel-boot of target pod"},
		{name: "deleted", pod: pod(func(p *corev1.Pod) { p.DeletionTimestamp = &metav1.Time{Time: created} }), now: created,
			wantReason: virtv1.MigrationReasonTargetNotReady, wantMsg: "deleted"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := examineTarget(tt.pod, cfg, tt.now)
			if got.reason != tt.wantReason || !strings.Contains(got.message, tt.wantMsg) {
				t.Fatalf("failure %q %q, want %q with %q", got.reason, got.message, tt.wantReason, tt.wantMsg)
			}
			if tt.wantReason == "" && (got.progress != tt.want || got.recheckAfter != tt.wantAfter) {
				t.Errorf("progress %d recheck after %s, want %d after %s", got.progress, got.recheckAfter, tt.want, tt.wantAfter)
			}
		})
	}
}

func TestAvoidSource(t *testing.T) {
	for _, tt := range []struct {
		policy      SameNodePolicy
		otherNode   bool
		wantAvoid   string
		wantRefused bool
	}{
		{SameNodeAlways, true, "", false},
		{SameNodeAlways, false, "", false},
		{SameNodeIfOnlyNode, true, "src", false},
		{SameNodeIfOnlyNode, false, "", false},
		{SameNodeNever, true, "src", false},
		{SameNodeNever, false, "src", true},
	} {
		avoid, refused := avoidSource(tt.policy, "src", tt.otherNode)
		if avoid != tt.wantAvoid || refused != tt.wantRefused {
			t.Errorf("avoidSource(%s, other node %v) = %q, %v; want %q, %v", tt.policy, tt.otherNode, avoid, refused, tt.wantAvoid, tt.wantRefused)
		}
	}
}
