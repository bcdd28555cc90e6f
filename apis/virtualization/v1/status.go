package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The rules of status writes. Every component that writes a VMI's or a VM's
// status changes phases and conditions through these methods, so a phase
// change always records its transition and a condition's transition time
// means the same thing whoever wrote it. Which changes are legal is
// virt-apiserver's to judge (the /status strategy); these methods only make
// each change the same way everywhere.

// SetPhase puts the VMI in phase for reason ("" for phases that need none).
// A change of phase appends its transition at now to
// PhaseTransitionTimestamps; virt-apiserver refuses a phase change that does
// not record itself.
func (s *VirtualMachineInstanceStatus) SetPhase(phase VirtualMachineInstancePhase, reason string, now metav1.Time) {
	if s.Phase != phase {
		s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps, VirtualMachineInstancePhaseTransitionTimestamp{
			Phase: phase, PhaseTransitionTimestamp: now,
		})
	}
	s.Phase, s.Reason = phase, reason
}

// End puts the VMI in its final phase (Succeeded or Failed) for reason: Ready
// turns False saying why, Paused goes, since no vCPUs are left to pause, and
// AgentConnected, since no agent is left to talk to. Everything else stays:
// the interfaces, guestOSInfo and SoftwareEmulation describe the guest that
// ran.
func (s *VirtualMachineInstanceStatus) End(phase VirtualMachineInstancePhase, reason, message string, now metav1.Time) {
	s.SetPhase(phase, reason, now)
	s.SetCondition(VirtualMachineInstanceCondition{
		Type: VirtualMachineInstanceReady, Status: corev1.ConditionFalse, Reason: reason, Message: message,
	}, now)
	s.RemoveCondition(VirtualMachineInstancePaused)
	s.RemoveCondition(VirtualMachineInstanceAgentConnected)
}

// Fail ends the VMI in phase Failed for reason; message says what happened
// in words (End).
func (s *VirtualMachineInstanceStatus) Fail(reason, message string, now metav1.Time) {
	s.End(Failed, reason, message, now)
}

// SetCondition puts c in place of the condition of its type (see
// setCondition for its transition time).
func (s *VirtualMachineInstanceStatus) SetCondition(c VirtualMachineInstanceCondition, now metav1.Time) {
	s.Conditions = setCondition(s.Conditions, c, now)
}

// RemoveCondition drops the condition of type t, if any.
func (s *VirtualMachineInstanceStatus) RemoveCondition(t VirtualMachineInstanceConditionType) {
	s.Conditions = removeCondition(s.Conditions, string(t))
}

// Condition is the VM's condition of type t, nil if s has none. The pointer
// is into s.Conditions: writing through it changes s.
func (s *VirtualMachineStatus) Condition(t VirtualMachineConditionType) *VirtualMachineCondition {
	return findCondition(s.Conditions, string(t))
}

// SetCondition puts c in place of the VM's condition of its type (see
// setCondition for its transition time).
func (s *VirtualMachineStatus) SetCondition(c VirtualMachineCondition, now metav1.Time) {
	s.Conditions = setCondition(s.Conditions, c, now)
}

// RemoveCondition drops the VM's condition of type t, if any.
func (s *VirtualMachineStatus) RemoveCondition(t VirtualMachineConditionType) {
	s.Conditions = removeCondition(s.Conditions, string(t))
}

// condition is what the rules need of a VMI's and a VM's condition type.
type condition[C any] interface {
	*C
	conditionType() string
	conditionStatus() corev1.ConditionStatus
	transitionTime() *metav1.Time
}

func (c *VirtualMachineInstanceCondition) conditionType() string { return string(c.Type) }
func (c *VirtualMachineInstanceCondition) conditionStatus() corev1.ConditionStatus {
	return c.Status
}
func (c *VirtualMachineInstanceCondition) transitionTime() *metav1.Time {
	return &c.LastTransitionTime
}
func (c *VirtualMachineCondition) conditionType() string                   { return string(c.Type) }
func (c *VirtualMachineCondition) conditionStatus() corev1.ConditionStatus { return c.Status }
func (c *VirtualMachineCondition) transitionTime() *metav1.Time            { return &c.LastTransitionTime }

// setCondition puts c into conds in place of the condition of its type. Its
// LastTransitionTime is c's own when c brings one (a condition mirrored from
// another object keeps that object's time); otherwise it is now for a new
// condition or a changed status, and the old time while the status stays, so
// observing an unchanged state writes an identical condition and no write
// follows.
func setCondition[C any, P condition[C]](conds []C, c C, now metav1.Time) []C {
	pc := P(&c)
	old := findCondition[C, P](conds, pc.conditionType())
	if pc.transitionTime().IsZero() {
		*pc.transitionTime() = now
		if old != nil && P(old).conditionStatus() == pc.conditionStatus() {
			*pc.transitionTime() = *P(old).transitionTime()
		}
	}
	if old != nil {
		*old = c
		return conds
	}
	return append(conds, c)
}

func findCondition[C any, P condition[C]](conds []C, t string) *C {
	for i := range conds {
		if P(&conds[i]).conditionType() == t {
			return &conds[i]
		}
	}
	return nil
}

func removeCondition[C any, P condition[C]](conds []C, t string) []C {
	if findCondition[C, P](conds, t) == nil {
		return conds
	}
	var kept []C
	for i := range conds {
		if P(&conds[i]).conditionType() != t {
			kept = append(kept, conds[i])
		}
	}
	return kept
}
