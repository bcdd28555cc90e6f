package virtualization

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// SetPhase puts the VMI in phase for reason and, when the phase changes,
// records the transition at now. It is the versioned type's rule
// (v1.VirtualMachineInstanceStatus.SetPhase) for the one status virt-apiserver
// writes itself: a new VMI's Pending.
func (s *VirtualMachineInstanceStatus) SetPhase(phase VirtualMachineInstancePhase, reason string, now metav1.Time) {
	if s.Phase != phase {
		s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps, VirtualMachineInstancePhaseTransitionTimestamp{
			Phase: phase, PhaseTransitionTimestamp: now,
		})
	}
	s.Phase, s.Reason = phase, reason
}
