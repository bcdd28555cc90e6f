package v1

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Minute))
	t2 = metav1.NewTime(t0.Add(2 * time.Minute))
)

func TestSetPhase(t *testing.T) {
	s := VirtualMachineInstanceStatus{Phase: Pending, PhaseTransitionTimestamps: []VirtualMachineInstancePhaseTransitionTimestamp{{Phase: Pending, PhaseTransitionTimestamp: t0}}}
	s.SetPhase(Scheduling, "", t1)
	s.SetPhase(Scheduling, "", t2) // no change of phase: no transition
	s.SetPhase(Failed, ReasonPodFailed, t2)
	want := []VirtualMachineInstancePhaseTransitionTimestamp{
		{Phase: Pending, PhaseTransitionTimestamp: t0},
		{Phase: Scheduling, PhaseTransitionTimestamp: t1},
		{Phase: Failed, PhaseTransitionTimestamp: t2},
	}
	if diff := cmp.Diff(want, s.PhaseTransitionTimestamps); diff != "" {
		t.Errorf("transitions (-want +got):\n%s", diff)
	}
	if s.Phase != Failed || s.Reason != ReasonPodFailed {
		t.Errorf("phase %s reason %q, want Failed %s", s.Phase, s.Reason, ReasonPodFailed)
	}
}

func TestSetConditionTransitionTime(t *testing.T) {
	ready := func(st corev1.ConditionStatus, reason string, at metav1.Time) VirtualMachineInstanceCondition {
		return VirtualMachineInstanceCondition{Type: VirtualMachineInstanceReady, Status: st, Reason: reason, LastTransitionTime: at}
	}
	for _, tt := range []struct {
		name string
		old  []VirtualMachineInstanceCondition
		set  VirtualMachineInstanceCondition
		want []VirtualMachineInstanceCondition
	}{
		{"new condition: now", nil, ready(corev1.ConditionTrue, "", metav1.Time{}),
			[]VirtualMachineInstanceCondition{ready(corev1.ConditionTrue, "", t2)}},
		{"status stays: old time, new reason", []VirtualMachineInstanceCondition{ready(corev1.ConditionFalse, "A", t0)}, ready(corev1.ConditionFalse, "B", metav1.Time{}),
			[]VirtualMachineInstanceCondition{ready(corev1.ConditionFalse, "B", t0)}},
		{"status changes: now", []VirtualMachineInstanceCondition{ready(corev1.ConditionFalse, "A", t0)}, ready(corev1.ConditionTrue, "", metav1.Time{}),
			[]VirtualMachineInstanceCondition{ready(corev1.ConditionTrue, "", t2)}},
		{"mirrored time wins", []VirtualMachineInstanceCondition{ready(corev1.ConditionFalse, "A", t0)}, ready(corev1.ConditionFalse, "A", t1),
			[]VirtualMachineInstanceCondition{ready(corev1.ConditionFalse, "A", t1)}},
		{"others untouched", []VirtualMachineInstanceCondition{{Type: VirtualMachineInstancePaused, Status: corev1.ConditionTrue, LastTransitionTime: t0}},
			ready(corev1.ConditionTrue, "", metav1.Time{}),
			[]VirtualMachineInstanceCondition{{Type: VirtualMachineInstancePaused, Status: corev1.ConditionTrue, LastTransitionTime: t0}, ready(corev1.ConditionTrue, "", t2)}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := VirtualMachineInstanceStatus{Conditions: tt.old}
			s.SetCondition(tt.set, t2)
			if diff := cmp.Diff(tt.want, s.Conditions); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
		})
	}
}

// The VM's conditions follow the same rule as the VMI's.
func TestVMSetCondition(t *testing.T) {
	s := VirtualMachineStatus{Conditions: []VirtualMachineCondition{{Type: VirtualMachineReady, Status: corev1.ConditionFalse, Reason: "A", LastTransitionTime: t0}}}
	s.SetCondition(VirtualMachineCondition{Type: VirtualMachineReady, Status: corev1.ConditionFalse, Reason: "B"}, t2)
	if c := s.Condition(VirtualMachineReady); c == nil || c.LastTransitionTime != t0 || c.Reason != "B" {
		t.Errorf("unchanged status: condition %+v, want reason B at %v", c, t0)
	}
	s.SetCondition(VirtualMachineCondition{Type: VirtualMachineReady, Status: corev1.ConditionTrue}, t2)
	if c := s.Condition(VirtualMachineReady); c.LastTransitionTime != t2 {
		t.Errorf("changed status: transition %v, want %v", c.LastTransitionTime, t2)
	}
	s.RemoveCondition(VirtualMachineFailure) // absent: nothing happens
	s.RemoveCondition(VirtualMachineReady)
	if len(s.Conditions) != 0 {
		t.Errorf("conditions after removal: %+v", s.Conditions)
	}
}

func TestFail(t *testing.T) {
	s := VirtualMachineInstanceStatus{
		Phase: Running,
		Conditions: []VirtualMachineInstanceCondition{
			{Type: VirtualMachineInstanceReady, Status: corev1.ConditionFalse, Reason: "Paused", LastTransitionTime: t0},
			{Type: VirtualMachineInstancePaused, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: VirtualMachineInstanceAgentConnected, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: VirtualMachineInstanceSoftwareEmulation, Status: corev1.ConditionTrue, LastTransitionTime: t0},
		},
	}
	s.Fail(ReasonNodeUnresponsive, "node n is unresponsive", t1)
	want := VirtualMachineInstanceStatus{
		Phase:                     Failed,
		Reason:                    ReasonNodeUnresponsive,
		PhaseTransitionTimestamps: []VirtualMachineInstancePhaseTransitionTimestamp{{Phase: Failed, PhaseTransitionTimestamp: t1}},
		Conditions: []VirtualMachineInstanceCondition{
			// Ready stayed False: its transition time stays too.
			{Type: VirtualMachineInstanceReady, Status: corev1.ConditionFalse, Reason: ReasonNodeUnresponsive, Message: "node n is unresponsive", LastTransitionTime: t0},
			{Type: VirtualMachineInstanceSoftwareEmulation, Status: corev1.ConditionTrue, LastTransitionTime: t0},
		},
	}
	if diff := cmp.Diff(want, s); diff != "" {
		t.Errorf("failed status (-want +got):\n%s", diff)
	}
}
