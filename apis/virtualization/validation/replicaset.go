package validation

import (
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apimachineryvalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// ValidateVirtualMachineInstanceReplicaSet validates a replica set being
// created. Its name must be a DNS label because its instances are named
// after it (generateName "<name>-") and an instance's name is one.
func ValidateVirtualMachineInstanceReplicaSet(rs *virtualization.VirtualMachineInstanceReplicaSet) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMeta(&rs.ObjectMeta, true, apimachineryvalidation.NameIsDNSLabel, field.NewPath("metadata"))
	return append(allErrs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
}

// ValidateVirtualMachineInstanceReplicaSetUpdate validates a change of a
// replica set. The number of replicas, the template and paused may change
// (the template applies to instances created from then on); the selector
// may not, as in apps/v1: a new selector would silently orphan the running
// instances and adopt others.
func ValidateVirtualMachineInstanceReplicaSetUpdate(rs, old *virtualization.VirtualMachineInstanceReplicaSet) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	allErrs = append(allErrs, validateReplicaSetSpec(&rs.Spec, field.NewPath("spec"))...)
	if !apiequality.Semantic.DeepEqual(rs.Spec.Selector, old.Spec.Selector) {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "selector"), rs.Spec.Selector,
			"the selector of a VirtualMachineInstanceReplicaSet cannot change; create a new replica set instead"))
	}
	return allErrs
}

// ValidateVirtualMachineInstanceReplicaSetStatusUpdate validates a write of
// a replica set's status.
func ValidateVirtualMachineInstanceReplicaSetStatusUpdate(rs, old *virtualization.VirtualMachineInstanceReplicaSet) field.ErrorList {
	allErrs := apimachineryvalidation.ValidateObjectMetaUpdate(&rs.ObjectMeta, &old.ObjectMeta, field.NewPath("metadata"))
	p := field.NewPath("status")
	s := rs.Status
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.Replicas), p.Child("replicas"))...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(s.ReadyReplicas), p.Child("readyReplicas"))...)
	if s.ReadyReplicas > s.Replicas {
		allErrs = append(allErrs, field.Invalid(p.Child("readyReplicas"), s.ReadyReplicas, "cannot be more than status.replicas"))
	}
	if s.LabelSelector != "" {
		if _, err := labels.Parse(s.LabelSelector); err != nil {
			allErrs = append(allErrs, field.Invalid(p.Child("labelSelector"), s.LabelSelector, err.Error()))
		}
	}
	cp := p.Child("conditions")
	types := sets.New[virtualization.VirtualMachineInstanceReplicaSetConditionType]()
	for i, c := range s.Conditions {
		if types.Has(c.Type) {
			allErrs = append(allErrs, field.Duplicate(cp.Index(i).Child("type"), c.Type))
		}
		types.Insert(c.Type)
		allErrs = append(allErrs, validateConditionStatus(c.Status, cp.Index(i).Child("status"))...)
	}
	return allErrs
}

func validateReplicaSetSpec(spec *virtualization.VirtualMachineInstanceReplicaSetSpec, fldPath *field.Path) field.ErrorList {
	var allErrs field.ErrorList
	if spec.Replicas != nil {
		allErrs = append(allErrs, apimachineryvalidation.ValidateNonnegativeField(int64(*spec.Replicas), fldPath.Child("replicas"))...)
	}

	sp := fldPath.Child("selector")
	var selector labels.Selector
	switch {
	case spec.Selector == nil:
		allErrs = append(allErrs, field.Required(sp, "a VirtualMachineInstanceReplicaSet needs a selector that matches its template's labels"))
	case len(spec.Selector.MatchLabels)+len(spec.Selector.MatchExpressions) == 0:
		// An empty selector matches every instance of the namespace: the
		// replica set would adopt (and scale down) instances not its own.
		allErrs = append(allErrs, field.Invalid(sp, spec.Selector, "empty selector is invalid: it would select every instance of the namespace"))
	default:
		errs := metav1validation.ValidateLabelSelector(spec.Selector, metav1validation.LabelSelectorValidationOptions{}, sp)
		allErrs = append(allErrs, errs...)
		if len(errs) == 0 {
			var err error
			if selector, err = metav1.LabelSelectorAsSelector(spec.Selector); err != nil {
				allErrs = append(allErrs, field.Invalid(sp, spec.Selector, err.Error()))
			}
		}
	}

	tp := fldPath.Child("template")
	if spec.Template == nil {
		return append(allErrs, field.Required(tp, "a VirtualMachineInstanceReplicaSet needs the template of its instances"))
	}
	lp := tp.Child("metadata", "labels")
	allErrs = append(allErrs, metav1validation.ValidateLabels(spec.Template.ObjectMeta.Labels, lp)...)
	allErrs = append(allErrs, apimachineryvalidation.ValidateAnnotations(spec.Template.ObjectMeta.Annotations, tp.Child("metadata", "annotations"))...)
	if selector != nil && !selector.Matches(labels.Set(spec.Template.ObjectMeta.Labels)) {
		// Instances the replica set creates would not count as its own: it
		// would create more without end.
		allErrs = append(allErrs, field.Invalid(lp, spec.Template.ObjectMeta.Labels, "`selector` does not match template `labels`"))
	}
	allErrs = append(allErrs, ValidateVirtualMachineInstanceSpec(&spec.Template.Spec, tp.Child("spec"))...)
	return allErrs
}

// VirtualMachineInstanceReplicaSetWarnings returns the warnings of a replica
// set's template.
func VirtualMachineInstanceReplicaSetWarnings(rs *virtualization.VirtualMachineInstanceReplicaSet) []string {
	if rs.Spec.Template == nil {
		return nil
	}
	return VirtualMachineInstanceWarnings(&rs.Spec.Template.Spec, "spec.template.")
}
