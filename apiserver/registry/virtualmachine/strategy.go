package virtualmachine

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

// strategy is how virtualmachines are created, updated and deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	// expander validates the templates of VMs that reference an
	// instancetype or a preference, once expanded with them.
	expander Expander
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}
var _ rest.ResetFieldsStrategy = strategy{}

// NewStrategy returns the strategy of the main resource.
func NewStrategy(typer runtime.ObjectTyper, expander Expander) strategy {
	return strategy{typer, names.SimpleNameGenerator, expander}
}

// NamespaceScoped is true: a VM lives in the namespace of its instances.
func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says status is not written through the main resource.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(virtv1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status a client sent.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	vm := obj.(*virtualization.VirtualMachine)
	vm.Status = virtualization.VirtualMachineStatus{}
	vm.Generation = 1
}

// PrepareForUpdate keeps the stored status and bumps the generation when the
// spec changed, so the controller can tell (observedGeneration) that it has
// acted on the change.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	vm := obj.(*virtualization.VirtualMachine)
	oldVM := old.(*virtualization.VirtualMachine)
	vm.Status = oldVM.Status
	if !apiequality.Semantic.DeepEqual(vm.Spec, oldVM.Spec) {
		vm.Generation = oldVM.Generation + 1
	}
}

// Validate checks a new VM, and the template of one with references once
// expanded.
func (s strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	vm := obj.(*virtualization.VirtualMachine)
	if errs := validation.ValidateVirtualMachine(vm); len(errs) > 0 {
		return errs
	}
	return s.validateExpanded(ctx, vm)
}

// WarningsOnCreate returns deprecated and risky settings of a new VM.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return validation.VirtualMachineWarnings(obj.(*virtualization.VirtualMachine))
}

// Canonicalize does nothing: VMs have no equivalent spellings to normalise.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: a PUT of a missing VM is an error.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a changed VM. The expanded template is checked
// again only when what it is made of changed: a start or stop of a VM
// whose instancetype is gone must not fail on it.
func (s strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	vm, oldVM := obj.(*virtualization.VirtualMachine), old.(*virtualization.VirtualMachine)
	if errs := validation.ValidateVirtualMachineUpdate(vm, oldVM); len(errs) > 0 {
		return errs
	}
	if apiequality.Semantic.DeepEqual(vm.Spec.Template, oldVM.Spec.Template) &&
		apiequality.Semantic.DeepEqual(vm.Spec.Instancetype, oldVM.Spec.Instancetype) &&
		apiequality.Semantic.DeepEqual(vm.Spec.Preference, oldVM.Spec.Preference) {
		return nil
	}
	return s.validateExpanded(ctx, vm)
}

// WarningsOnUpdate returns deprecated and risky settings of a changed VM.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return validation.VirtualMachineWarnings(obj.(*virtualization.VirtualMachine))
}

// statusStrategy is how virtualmachines/status is written.
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
	vm := obj.(*virtualization.VirtualMachine)
	oldVM := old.(*virtualization.VirtualMachine)
	vm.Spec = oldVM.Spec
	vm.Labels = oldVM.Labels
	vm.Annotations = oldVM.Annotations
	vm.Finalizers = oldVM.Finalizers
	vm.OwnerReferences = oldVM.OwnerReferences
}

// ValidateUpdate checks a status write.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineStatusUpdate(obj.(*virtualization.VirtualMachine), old.(*virtualization.VirtualMachine))
}

// WarningsOnUpdate has nothing to say about status writes.
func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetAttrs returns the labels and selectable fields of a VM.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	vm, ok := obj.(*virtualization.VirtualMachine)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachine: %T", obj)
	}
	set := generic.ObjectMetaFieldsSet(&vm.ObjectMeta, true)
	set["status.printableStatus"] = string(vm.Status.PrintableStatus)
	return vm.Labels, set, nil
}

// Match selects VMs by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
