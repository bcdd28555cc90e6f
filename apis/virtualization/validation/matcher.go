package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// HasReferences reports whether a VM references an instancetype or a
// preference. Its template is then validated only once expanded with
// them, which needs the objects they name: the API server's VM strategy
// does that (ValidateExpandedTemplate).
func HasReferences(spec *virtualization.VirtualMachineSpec) bool {
	return spec.Instancetype != nil || spec.Preference != nil
}

// validateMatchers checks spec.instancetype and spec.preference themselves.
func validateMatchers(spec *virtualization.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m := spec.Instancetype; m != nil {
		p := fldPath.Child("instancetype")
		if _, ok := virtv1.NormalizeInstancetypeKind(m.Kind); !ok {
			allErrs = append(allErrs, field.NotSupported(p.Child("kind"), m.Kind, []string{virtv1.ClusterInstancetypeKind, virtv1.InstancetypeKind}))
		}
		allErrs = append(allErrs, validateMatcher(m.Name, m.RevisionName, m.InferFromVolume, m.InferFromVolumeFailurePolicy, p)...)
	}
	if m := spec.Preference; m != nil {
		p := fldPath.Child("preference")
		if _, ok := virtv1.NormalizePreferenceKind(m.Kind); !ok {
			allErrs = append(allErrs, field.NotSupported(p.Child("kind"), m.Kind, []string{virtv1.ClusterPreferenceKind, virtv1.PreferenceKind}))
		}
		allErrs = append(allErrs, validateMatcher(m.Name, m.RevisionName, m.InferFromVolume, m.InferFromVolumeFailurePolicy, p)...)
	}
	return allErrs
}

func validateMatcher(name, revision, inferFrom string, inferPolicy *string, p *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	// KubeVirt infers an instancetype or preference from labels of a
	// DataVolume or PVC; this platform has no DataVolumes and does not
	// read claims' labels, so a VM relying on it would silently get none.
	if inferFrom != "" {
		allErrs = append(allErrs, field.Forbidden(p.Child("inferFromVolume"), "not supported: name the instancetype or preference (name, kind) instead of inferring it from a volume"))
	}
	if inferPolicy != nil {
		allErrs = append(allErrs, field.Forbidden(p.Child("inferFromVolumeFailurePolicy"), "not supported: inferFromVolume is not"))
	}
	if name == "" {
		allErrs = append(allErrs, field.Required(p.Child("name"), "the name of the object referred to"))
	} else {
		allErrs = append(allErrs, validateDNSSubdomain(name, p.Child("name"))...)
	}
	return append(allErrs, validateDNSSubdomain(revision, p.Child("revisionName"))...)
}

// validateMatcherUpdates refuses pointing a reference at another object
// while keeping the revision of the old one: the VM would say one name and
// run with another's copy. Clearing or changing the revisionName with the
// name is what moves a VM to another instancetype.
func validateMatcherUpdates(spec, old *virtualization.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if m, o := spec.Instancetype, old.Instancetype; m != nil && o != nil && o.RevisionName != "" &&
		m.RevisionName == o.RevisionName && (m.Name != o.Name || kindOf(virtv1.NormalizeInstancetypeKind, m.Kind) != kindOf(virtv1.NormalizeInstancetypeKind, o.Kind)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("instancetype", "revisionName"), m.RevisionName,
			"names the revision of "+o.Name+": clear it when changing the instancetype's name or kind"))
	}
	if m, o := spec.Preference, old.Preference; m != nil && o != nil && o.RevisionName != "" &&
		m.RevisionName == o.RevisionName && (m.Name != o.Name || kindOf(virtv1.NormalizePreferenceKind, m.Kind) != kindOf(virtv1.NormalizePreferenceKind, o.Kind)) {
		allErrs = append(allErrs, field.Invalid(fldPath.Child("preference", "revisionName"), m.RevisionName,
			"names the revision of "+o.Name+": clear it when changing the preference's name or kind"))
	}
	return allErrs
}

func kindOf(normalize func(string) (string, bool), kind string) string {
	if k, ok := normalize(kind); ok {
		return k
	}
	return kind
}
