package virtualmachineclusterinstancetype

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

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// strategy is how virtualmachineclusterinstancetypes are created, updated and
// deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}

// NewStrategy returns the strategy of virtualmachineclusterinstancetypes.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

// NamespaceScoped is false: VMs of every namespace can use one.
func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate starts the generation at 1.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	obj.(*virtualization.VirtualMachineClusterInstancetype).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changed: a revision
// a VM captured records the generation it copied.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	it, oldIT := obj.(*virtualization.VirtualMachineClusterInstancetype), old.(*virtualization.VirtualMachineClusterInstancetype)
	if !apiequality.Semantic.DeepEqual(it.Spec, oldIT.Spec) {
		it.Generation = oldIT.Generation + 1
	}
}

// Validate checks a new instancetype.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineClusterInstancetype(obj.(*virtualization.VirtualMachineClusterInstancetype))
}

// WarningsOnCreate has nothing to say.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

// Canonicalize does nothing: instancetypes have no equivalent spellings.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: a PUT of a missing instancetype is an error.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a changed instancetype.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineClusterInstancetypeUpdate(obj.(*virtualization.VirtualMachineClusterInstancetype), old.(*virtualization.VirtualMachineClusterInstancetype))
}

// WarningsOnUpdate has nothing to say.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// GetAttrs returns the labels and selectable fields of an instancetype.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	it, ok := obj.(*virtualization.VirtualMachineClusterInstancetype)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineClusterInstancetype: %T", obj)
	}
	return it.Labels, generic.ObjectMetaFieldsSet(&it.ObjectMeta, false), nil
}

// Match selects instancetypes by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
