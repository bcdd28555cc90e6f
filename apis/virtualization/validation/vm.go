package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"slices"

	"kubevirt.dev/virt/apis/virtualization"
)

var runStrategies = []virtualization.VirtualMachineRunStrategy{
	virtualization.RunStrategyAlways, virtualization.RunStrategyRerunOnFailure,
	virtualization.RunStrategyManual, virtualization.RunStrategyHalted,
}

// ValidateVirtualMachine validates a VM being created.
func ValidateVirtualMachine(vm *virtualization.VirtualMachine) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&vm.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(allErrs, validateVirtualMachineSpec(&vm.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineUpdate validates a change of a VM. Unlike a VMI, a
// VM's spec may change: the next instance it creates follows the new spec.
func ValidateVirtualMachineUpdate(vm, old *virtualization.VirtualMachine) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&vm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateMatcherUpdates(&vm.Spec, &old.Spec, field.NewPath("spec"))...)
	return append(allErrs, validateVirtualMachineSpec(&vm.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineStatusUpdate validates a write of a VM's status.
func ValidateVirtualMachineStatusUpdate(vm, old *virtualization.VirtualMachine) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&vm.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status", "conditions")
	types := sets.New[virtualization.VirtualMachineConditionType]()
	for i, c := range vm.Status.Conditions {
		if types.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(p.Index(i).Child("type"), c.Type))
		}
		types.Insert(c.Type)
		allErrs = append(allErrs, validateConditionStatus(c.Status, p.Index(i).Child("status"))...)
	}
	if f := vm.Status.StartFailure; f != nil && f.ConsecutiveFailCount < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("status", "startFailure", "consecutiveFailCount"), f.ConsecutiveFailCount, "must not be negative"))
	}
	allErrs = append(allErrs, validateStateChangeRequests(vm.Status.StateChangeRequests, field.NewPath("status", "stateChangeRequests"))...)
	return allErrs
}

func validateVirtualMachineSpec(spec *virtualization.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	switch {
	case spec.Running != nil && spec.RunStrategy != nil:
		allErrs = append(allErrs, field.Forbidden(fldPath.Child("running"), "set either running or runStrategy, not both (running is deprecated)"))
	case spec.RunStrategy != nil && !slices.Contains(runStrategies, *spec.RunStrategy):
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("runStrategy"), *spec.RunStrategy, runStrategies))
	}
	allErrs = append(allErrs, validateUnsupportedVirtualMachineSpec(spec, fldPath)...)
	if s := spec.UpdateVolumesStrategy; s != nil && *s != virtualization.UpdateVolumesStrategyReplacement && *s != virtualization.UpdateVolumesStrategyMigration {
		allErrs = append(allErrs, field.NotSupported(fldPath.Child("updateVolumesStrategy"), *s,
			[]virtualization.UpdateVolumesStrategy{virtualization.UpdateVolumesStrategyReplacement, virtualization.UpdateVolumesStrategyMigration}))
	}
	if spec.Template == nil {
		return append(allErrs, field.Required(fldPath.Child("template"), "a VirtualMachine needs the template of its instances"))
	}
	tp := fldPath.Child("template")
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Template.ObjectMeta.Labels, tp.Child("metadata", "labels"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.Template.ObjectMeta.Annotations, tp.Child("metadata", "annotations"))...)
	allErrs = append(allErrs, validateDebugAnnotations(spec.Template.ObjectMeta.Annotations, tp.Child("metadata", "annotations"))...)
	if HasReferences(spec) {
		return append(allErrs, validateMatchers(spec, fldPath)...)
	}
	allErrs = append(allErrs, ValidateVirtualMachineInstanceSpec(&spec.Template.Spec, tp.Child("spec"))...)
	return allErrs
}
