package validation

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// migrationPhases are the phases a migration may have, in order.
var migrationPhases = []virtualization.VirtualMachineInstanceMigrationPhase{
	virtualization.MigrationPhaseUnset, virtualization.MigrationPending, virtualization.MigrationScheduling,
	virtualization.MigrationScheduled, virtualization.MigrationPreparingTarget, virtualization.MigrationTargetReady,
	virtualization.MigrationRunning, virtualization.MigrationSucceeded, virtualization.MigrationFailed,
}

// ValidateVirtualMachineInstanceMigration validates a migration being
// created, on its own; whether its VMI can migrate is checked against the
// VMI by ValidateMigrationOfVMI.
func ValidateVirtualMachineInstanceMigration(m *virtualization.VirtualMachineInstanceMigration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&m.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	p := field.NewPath("spec", "vmiName")
	if m.Spec.VMIName == "" {
		return append(allErrs, field.Required(p, "the name of the VirtualMachineInstance to migrate"))
	}
	return append(allErrs, validateDNSSubdomain(m.Spec.VMIName, p)...)
}

// ValidateVirtualMachineInstanceMigrationUpdate validates a change of a
// migration: its spec cannot change, since virt-controller may already be
// moving the VMI it names.
func ValidateVirtualMachineInstanceMigrationUpdate(m, old *virtualization.VirtualMachineInstanceMigration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&m.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if m.Spec != old.Spec {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "vmiName"), m.Spec.VMIName,
			"the spec of a VirtualMachineInstanceMigration cannot change; create a new migration instead"))
	}
	return allErrs
}

// ValidateVirtualMachineInstanceMigrationStatusUpdate validates a write of a
// migration's status: the phase is known and does not leave Succeeded or
// Failed, and the conditions are well formed.
func ValidateVirtualMachineInstanceMigrationStatusUpdate(m, old *virtualization.VirtualMachineInstanceMigration) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&m.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	s, o := &m.Status, &old.Status
	if s.Phase != o.Phase {
		switch {
		case !sets.New(migrationPhases...).Has(s.Phase):
			allErrs = append(allErrs, field.NotSupported(p.Child("phase"), s.Phase, migrationPhases[1:]))
		case o.Phase.Final():
			allErrs = append(allErrs, field.Invalid(p.Child("phase"), s.Phase,
				fmt.Sprintf("the migration has ended (%s); its phase cannot change", o.Phase)))
		}
	}
	cp := p.Child("conditions")
	types := sets.New[virtualization.VirtualMachineInstanceMigrationConditionType]()
	for i, c := range s.Conditions {
		if c.Type == "" {
			allErrs = append(allErrs, field.Required(cp.Index(i).Child("type"), "a condition has a type"))
		}
		if types.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
		}
		types.Insert(c.Type)
		allErrs = append(allErrs, validateConditionStatus(c.Status, cp.Index(i).Child("status"))...)
	}
	return allErrs
}

// ValidateMigrationOfVMI says why vmi cannot be migrated now, at fldPath
// (the migration's spec.vmiName): it must be Running on the node it was
// handed to, not being deleted, and not known to be unmigratable (its
// LiveMigratable condition False, whose message is quoted).
func ValidateMigrationOfVMI(vmi *virtualization.VirtualMachineInstance, fldPath *field.Path) field.ErrorList {
	switch {
	case vmi.DeletionTimestamp != nil:
		return field.ErrorList{field.Invalid(fldPath, vmi.Name, "the VMI is being deleted")}
	case vmi.Status.Phase != virtualization.Running:
		return field.ErrorList{field.Invalid(fldPath, vmi.Name,
			fmt.Sprintf("only a Running VMI can be migrated; this one is %s", phaseName(vmi.Status.Phase)))}
	case vmi.Status.NodeName == "":
		return field.ErrorList{field.Invalid(fldPath, vmi.Name, "the VMI has not been handed to a node yet")}
	}
	for _, c := range vmi.Status.Conditions {
		if c.Type == virtualization.VirtualMachineInstanceIsMigratable && c.Status == corev1.ConditionFalse {
			return field.ErrorList{field.Invalid(fldPath, vmi.Name,
				fmt.Sprintf("the VMI is not live migratable (%s): %s", c.Reason, c.Message))}
		}
	}
	return nil
}
