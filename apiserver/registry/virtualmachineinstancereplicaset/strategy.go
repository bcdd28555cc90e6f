package virtualmachineinstancereplicaset

import (
	"context"
	"fmt"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/generic"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// strategy is how virtualmachineinstancereplicasets are created, updated
// and deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}
var _ rest.ResetFieldsStrategy = strategy{}

// NewStrategy returns the strategy of the main resource.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

// NamespaceScoped is true: a replica set lives in the namespace of its
// instances.
func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says status is not written through the main resource.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(virtv1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status a client sent.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
	rs.Status = virtualization.VirtualMachineInstanceReplicaSetStatus{}
	rs.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when the
// spec changed (a scale through /scale is a spec change too).
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
	oldRS := old.(*virtualization.VirtualMachineInstanceReplicaSet)
	rs.Status = oldRS.Status
	if !apiequality.Semantic.DeepEqual(rs.Spec, oldRS.Spec) {
		rs.Generation = oldRS.Generation + 1
	}
}

// Validate checks a new replica set.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceReplicaSet(obj.(*virtualization.VirtualMachineInstanceReplicaSet))
}

// WarningsOnCreate returns risky settings of a new replica set's template.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return validation.VirtualMachineInstanceReplicaSetWarnings(obj.(*virtualization.VirtualMachineInstanceReplicaSet))
}

// Canonicalize does nothing: replica sets have no equivalent spellings to
// normalise.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: a PUT of a missing replica set is an error.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a changed replica set.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceReplicaSetUpdate(obj.(*virtualization.VirtualMachineInstanceReplicaSet),
		old.(*virtualization.VirtualMachineInstanceReplicaSet))
}

// WarningsOnUpdate returns risky settings of a changed replica set's template.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return validation.VirtualMachineInstanceReplicaSetWarnings(obj.(*virtualization.VirtualMachineInstanceReplicaSet))
}

// statusStrategy is how virtualmachineinstancereplicasets/status is written.
type statusStrategy struct {
	strategy
}

var _ rest.RESTUpdateStrategy = statusStrategy{}

// NewStatusStrategy returns the strategy of the status subresource.
func NewStatusStrategy(s strategy) statusStrategy {
	return statusStrategy{s}
}

// GetResetFields says the spec and metadata are not written through /status.
func (statusStrategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(virtv1.SchemeGroupVersion.String()): fieldpath.NewSet(
			fieldpath.MakePathOrDie("spec"),
			fieldpath.MakePathOrDie("metadata", "labels"),
			fieldpath.MakePathOrDie("metadata", "annotations"),
			fieldpath.MakePathOrDie("metadata", "finalizers"),
			fieldpath.MakePathOrDie("metadata", "ownerReferences"),
		),
	}
}

// PrepareForUpdate keeps everything but the status.
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
	oldRS := old.(*virtualization.VirtualMachineInstanceReplicaSet)
	rs.Spec = oldRS.Spec
	rs.Labels = oldRS.Labels
	rs.Annotations = oldRS.Annotations
	rs.Finalizers = oldRS.Finalizers
	rs.OwnerReferences = oldRS.OwnerReferences
}

// ValidateUpdate checks a status write.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceReplicaSetStatusUpdate(obj.(*virtualization.VirtualMachineInstanceReplicaSet),
		old.(*virtualization.VirtualMachineInstanceReplicaSet))
}

// WarningsOnUpdate has nothing to say about status writes.
func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetAttrs returns the labels and selectable fields of a replica set.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	rs, ok := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstanceReplicaSet: %T", obj)
	}
	return rs.Labels, generic.ObjectMetaFieldsSet(&rs.ObjectMeta, true), nil
}

// Match selects replica sets by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
