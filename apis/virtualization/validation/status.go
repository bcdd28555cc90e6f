package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// phaseTransitions lists the phases a VMI may move to from each phase. A
// phase may always stay what it is. Succeeded and Failed are final: a guest
// that ended is never running again; a VM creates a new VMI instead.
var phaseTransitions = map[virtualization.VirtualMachineInstancePhase]sets.Set[virtualization.VirtualMachineInstancePhase]{
	virtualization.PhaseUnset: sets.New(virtualization.Pending, virtualization.Scheduling, virtualization.Failed),
	virtualization.Pending:    sets.New(virtualization.Scheduling, virtualization.Scheduled, virtualization.Failed, virtualization.Succeeded),
	virtualization.Scheduling: sets.New(virtualization.Scheduled, virtualization.Failed, virtualization.Succeeded),
	virtualization.Scheduled:  sets.New(virtualization.Running, virtualization.Failed, virtualization.Succeeded, virtualization.Unknown),
	virtualization.Running:    sets.New(virtualization.Succeeded, virtualization.Failed, virtualization.Unknown),
	virtualization.Unknown:    sets.New(virtualization.Running, virtualization.Succeeded, virtualization.Failed),
	virtualization.Succeeded:  sets.New[virtualization.VirtualMachineInstancePhase](),
	virtualization.Failed:     sets.New[virtualization.VirtualMachineInstancePhase](),
}

// phasesOnANode are the phases in which a guest has a node.
var phasesOnANode = sets.New(virtualization.Scheduled, virtualization.Running, virtualization.Unknown)

// ValidateVirtualMachineInstanceStatusUpdate validates a write of a VMI's
// status: phases move only forward, each change of phase appends its
// transition to a history that is never rewritten, the node a VMI was
// handed to changes only by a live migration's switch-over (migratedTo), and
// what the guest reported stays within the bounds virt-handler cuts it to
// (validateGuestReport).
func ValidateVirtualMachineInstanceStatusUpdate(vmi, old *virtualization.VirtualMachineInstance) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&vmi.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	statusPath := field.NewPath("status")
	s, o := &vmi.Status, &old.Status

	if s.Phase != o.Phase {
		allowed, known := phaseTransitions[o.Phase]
		if _, valid := phaseTransitions[s.Phase]; !valid {
			allErrs = append(allErrs, field.NotSupported(statusPath.Child("phase"), s.Phase, phaseNames()))
		} else if known && !allowed.Has(s.Phase) {
			allErrs = append(allErrs, field.Invalid(statusPath.Child("phase"), s.Phase,
				fmt.Sprintf("a VMI cannot go from %s to %s", phaseName(o.Phase), s.Phase)))
		}
	}
	allErrs = append(allErrs, validatePhaseTransitions(s, o, statusPath.Child("phaseTransitionTimestamps"))...)
	if o.NodeName != "" && s.NodeName != o.NodeName && !migratedTo(s, o) {
		allErrs = append(allErrs, field.Invalid(statusPath.Child("nodeName"), s.NodeName,
			fmt.Sprintf("the VMI was handed to node %q and moves to another node only by a completed live migration to it", o.NodeName)))
	}
	if s.NodeName == "" && phasesOnANode.Has(s.Phase) {
		allErrs = append(allErrs, field.Required(statusPath.Child("nodeName"), fmt.Sprintf("a %s VMI has a node", s.Phase)))
	}
	if s.NodeName != "" {
		allErrs = append(allErrs, validateDNSSubdomain(s.NodeName, statusPath.Child("nodeName"))...)
	}
	allErrs = append(allErrs, validateConditions(s.Conditions, o.Conditions, statusPath.Child("conditions"))...)
	allErrs = append(allErrs, validateGuestReport(s, o, statusPath)...)
	return allErrs
}

// migratedTo says the write is a live migration's switch-over: the node
// changes to the migration's target, in the write that marks it completed.
func migratedTo(s, o *virtualization.VirtualMachineInstanceStatus) bool {
	m, om := s.MigrationState, o.MigrationState
	return m != nil && om != nil && m.Completed && !om.Completed && !m.Failed &&
		m.TargetNode != "" && m.TargetNode == om.TargetNode && s.NodeName == m.TargetNode &&
		m.MigrationUID == om.MigrationUID
}

// validatePhaseTransitions checks that the history of phases only grows, by
// exactly the entry of the new phase when the phase changes. Entries are
// compared to the second: JSON, which some clients write, keeps no more.
func validatePhaseTransitions(s, o *virtualization.VirtualMachineInstanceStatus, fldPath *field.Path) field.ErrorList {
	ts, old := s.PhaseTransitionTimestamps, o.PhaseTransitionTimestamps
	for i := range old {
		if i >= len(ts) || ts[i].Phase != old[i].Phase || ts[i].PhaseTransitionTimestamp.Unix() != old[i].PhaseTransitionTimestamp.Unix() {
			return field.ErrorList{field.Forbidden(fldPath.Index(i), "the recorded phase transitions cannot be changed or removed, only appended to")}
		}
	}
	added := ts[len(old):]
	switch {
	case s.Phase == o.Phase && len(added) > 0:
		return field.ErrorList{field.Forbidden(fldPath.Index(len(old)), fmt.Sprintf("the phase stays %s: no transition to record", phaseName(s.Phase)))}
	case s.Phase != o.Phase && (len(added) != 1 || added[0].Phase != s.Phase):
		return field.ErrorList{field.Required(fldPath.Index(len(old)),
			fmt.Sprintf("a change of phase to %s appends exactly its transition (phase %s and its time; the API type's SetPhase does)", s.Phase, s.Phase))}
	}
	return nil
}

func validateConditions(conditions, old []virtualization.VirtualMachineInstanceCondition, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	types := sets.New[virtualization.VirtualMachineInstanceConditionType]()
	for i, c := range conditions {
		p := fldPath.Index(i)
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(p.Child("type"), "a condition has a type"))
		}
		if types.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Child("type"), c.Type))
		}
		types.Insert(c.Type)
		allErrs = append(allErrs, validateConditionStatus(c.Status, p.Child("status"))...)
		allErrs = append(allErrs, validateConditionText(c, old, p)...)
	}
	return allErrs
}

func validateConditionStatus(s corev1.ConditionStatus, fldPath *field.Path) field.ErrorList {
	switch s {
	case corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown:
		return nil
	}
	return field.ErrorList{field.NotSupported(fldPath, s, []corev1.ConditionStatus{corev1.ConditionTrue, corev1.ConditionFalse, corev1.ConditionUnknown})}
}

func phaseName(p virtualization.VirtualMachineInstancePhase) string {
	if p == virtualization.PhaseUnset {
		return "no phase"
	}
	return string(p)
}

func phaseNames() []virtualization.VirtualMachineInstancePhase {
	return []virtualization.VirtualMachineInstancePhase{virtualization.Pending, virtualization.Scheduling, virtualization.Scheduled,
		virtualization.Running, virtualization.Succeeded, virtualization.Failed, virtualization.Unknown}
}
