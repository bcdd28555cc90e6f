package virtualmachineinstancetyperevision

import (
	"context"
	"fmt"

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
	"kubevirt.dev/virt/internal/instancetype"
)

// strategy is how virtualmachineinstancetyperevisions are created, updated
// and deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}

// NewStrategy returns the strategy of virtualmachineinstancetyperevisions.
func NewStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

// NamespaceScoped is true: a revision belongs to a VM of its namespace.
func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate sets nothing: a revision is stored as its writer made
// it, or refused.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {}

// PrepareForUpdate changes nothing: ValidateUpdate refuses an update that
// changes more than metadata, rather than dropping what it asked for.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {}

// Validate checks a new revision, and what it holds as the object it
// copies would be checked: the one time its data is validated, since a
// revision never changes after.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	r := obj.(*virtualization.VirtualMachineInstancetypeRevision)
	errs := validation.ValidateVirtualMachineInstancetypeRevision(r)
	if len(r.Data.Raw) > 0 {
		errs = append(errs, instancetype.ValidateRevisionData(r.Data.Raw, field.NewPath("data"))...)
	}
	return errs
}

// WarningsOnCreate has nothing to say.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

// Canonicalize does nothing: the data is kept byte for byte.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: revisions are created by POST only.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: the garbage collector's metadata
// patches carry no resourceVersion.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate refuses any change but of metadata.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstancetypeRevisionUpdate(obj.(*virtualization.VirtualMachineInstancetypeRevision), old.(*virtualization.VirtualMachineInstancetypeRevision))
}

// WarningsOnUpdate has nothing to say.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// GetAttrs returns the labels and selectable fields of a revision.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	r, ok := obj.(*virtualization.VirtualMachineInstancetypeRevision)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstancetypeRevision: %T", obj)
	}
	return r.Labels, generic.ObjectMetaFieldsSet(&r.ObjectMeta, true), nil
}

// Match selects revisions by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
