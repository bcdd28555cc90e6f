package validation

import (
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// ValidateVirtualMachineInstancetypeRevision validates the envelope of a
// new revision: its name and a generation that can be one. What its data
// holds is checked by the registry with the expansion's decoder
// (internal/instancetype), which knows the four kinds a revision may copy.
func ValidateVirtualMachineInstancetypeRevision(r *virtualization.VirtualMachineInstancetypeRevision) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&r.ObjectMeta, true, apimachineryvalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	if len(r.Data.Raw) == 0 {
		allErrs = append(allErrs, field.Required(field.NewPath("data"), "the copied instancetype or preference"))
	}
	if r.Revision < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("revision"), r.Revision, "must be a generation: 0 or more"))
	}
	return allErrs
}

// ValidateVirtualMachineInstancetypeRevisionUpdate lets only the metadata
// of a revision change (labels, and the owner references and finalizers
// the garbage collector writes): a VM pinned to a revision must run with
// the same copy for as long as it names it.
func ValidateVirtualMachineInstancetypeRevisionUpdate(r, old *virtualization.VirtualMachineInstancetypeRevision) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&r.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	if string(r.Data.Raw) != string(old.Data.Raw) {
		allErrs = append(allErrs, field.Forbidden(field.NewPath("data"), "a revision never changes: create another and point the VM's revisionName at it"))
	}
	allErrs = append(allErrs, apimachineryvalidation.ValidateImmutableField(r.Revision, old.Revision, field.NewPath("revision"))...)
	return allErrs
}
