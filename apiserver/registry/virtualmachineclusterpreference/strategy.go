package virtualmachineclusterpreference

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

// strategy is how virtualmachineclusterpreferences are created, updated and
// deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}

// NewStrategy returns the strategy of virtualmachineclusterpreferences.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

// NamespaceScoped is false: VMs of every namespace can use one.
func (strategy) NamespaceScoped() bool { return false }

// PrepareForCreate starts the generation at 1.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	obj.(*virtualization.VirtualMachineClusterPreference).Generation = 1
}

// PrepareForUpdate bumps the generation when the spec changed: a revision
// a VM captured records the generation it copied.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	p, oldP := obj.(*virtualization.VirtualMachineClusterPreference), old.(*virtualization.VirtualMachineClusterPreference)
	if !apiequality.Semantic.DeepEqual(p.Spec, oldP.Spec) {
		p.Generation = oldP.Generation + 1
	}
}

// Validate checks a new preference.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineClusterPreference(obj.(*virtualization.VirtualMachineClusterPreference))
}

// WarningsOnCreate has nothing to say.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

// Canonicalize does nothing: preferences have no equivalent spellings.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: a PUT of a missing preference is an error.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a changed preference.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineClusterPreferenceUpdate(obj.(*virtualization.VirtualMachineClusterPreference), old.(*virtualization.VirtualMachineClusterPreference))
}

// WarningsOnUpdate has nothing to say.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// GetAttrs returns the labels and selectable fields of a preference.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	p, ok := obj.(*virtualization.VirtualMachineClusterPreference)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineClusterPreference: %T", obj)
	}
	return p.Labels, generic.ObjectMetaFieldsSet(&p.ObjectMeta, false), nil
}

// Match selects preferences by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
