package virtualmachineinstancemigration

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// strategy is how virtualmachineinstancemigrations are created, updated and
// deleted.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	look *lookup
}

var _ rest.RESTCreateUpdateStrategy = strategy{}
var _ rest.RESTDeleteStrategy = strategy{}
var _ rest.ResetFieldsStrategy = strategy{}

// NewStrategy returns the strategy of the main resource; look reads the VMI
// and the other migrations a new migration is checked against (nil, or nil
// fields, skip those checks).
func NewStrategy(typer runtime.ObjectTyper, look *lookup) strategy {
	if look == nil {
		look = &lookup{}
	}
	return strategy{typer, names.SimpleNameGenerator, look}
}

// NamespaceScoped is true: a migration lives in the namespace of its VMI.
func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says status is not written through the main resource.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(virtv1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status a client sent and labels the migration
// with its VMI's name, by which the VMI's migrations are listed.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	m := obj.(*virtualization.VirtualMachineInstanceMigration)
	m.Status = virtualization.VirtualMachineInstanceMigrationStatus{}
	m.Generation = 1
	setVMILabel(m)
}

// PrepareForUpdate keeps the stored status and the VMI label.
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	m := obj.(*virtualization.VirtualMachineInstanceMigration)
	m.Status = old.(*virtualization.VirtualMachineInstanceMigration).Status
	setVMILabel(m)
}

// setVMILabel labels m with spec.vmiName (spec cannot change, so neither
// does the label).
func setVMILabel(m *virtualization.VirtualMachineInstanceMigration) {
	if m.Spec.VMIName == "" {
		return
	}
	if m.Labels == nil {
		m.Labels = map[string]string{}
	}
	m.Labels[virtv1.MigrationVMINameLabel] = m.Spec.VMIName
}

// Validate checks a new migration, and that its VMI can be migrated now.
func (s strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	m := obj.(*virtualization.VirtualMachineInstanceMigration)
	if errs := validation.ValidateVirtualMachineInstanceMigration(m); len(errs) > 0 {
		return errs
	}
	return s.look.check(ctx, m)
}

// WarningsOnCreate has nothing to say.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string { return nil }

// Canonicalize does nothing: migrations have no equivalent spellings.
func (strategy) Canonicalize(obj runtime.Object) {}

// AllowCreateOnUpdate is false: a PUT of a missing migration is an error.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a changed migration: only its metadata may change.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceMigrationUpdate(obj.(*virtualization.VirtualMachineInstanceMigration),
		old.(*virtualization.VirtualMachineInstanceMigration))
}

// WarningsOnUpdate has nothing to say.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// statusStrategy is how virtualmachineinstancemigrations/status is written.
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
	m := obj.(*virtualization.VirtualMachineInstanceMigration)
	o := old.(*virtualization.VirtualMachineInstanceMigration)
	m.Spec = o.Spec
	m.Labels = o.Labels
	m.Annotations = o.Annotations
	m.Finalizers = o.Finalizers
	m.OwnerReferences = o.OwnerReferences
}

// ValidateUpdate checks a status write.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceMigrationStatusUpdate(obj.(*virtualization.VirtualMachineInstanceMigration),
		old.(*virtualization.VirtualMachineInstanceMigration))
}

// WarningsOnUpdate has nothing to say about status writes.
func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// lookup reads what a new migration is checked against from this server's
// own storage.
type lookup struct {
	vmis       rest.Getter
	migrations rest.Lister
}

// check refuses a migration whose VMI cannot move now: it does not exist,
// is not Running on a node, is being deleted, says it is not live
// migratable, or already has an unfinished migration. Two migrations
// created at the same instant may both pass; virt-controller runs only the
// older one and fails the other.
func (l *lookup) check(ctx context.Context, m *virtualization.VirtualMachineInstanceMigration) field.ErrorList {
	p := field.NewPath("spec", "vmiName")
	if l.vmis != nil {
		obj, err := l.vmis.Get(ctx, m.Spec.VMIName, &metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return field.ErrorList{field.NotFound(p, m.Spec.VMIName)}
		case err != nil:
			return field.ErrorList{field.InternalError(p, fmt.Errorf("read the VMI: %w", err))}
		}
		if errs := validation.ValidateMigrationOfVMI(obj.(*virtualization.VirtualMachineInstance), p); len(errs) > 0 {
			return errs
		}
	}
	if l.migrations != nil {
		list, err := l.migrations.List(ctx, &metainternalversion.ListOptions{
			LabelSelector: labels.SelectorFromSet(labels.Set{virtv1.MigrationVMINameLabel: m.Spec.VMIName}),
		})
		if err != nil {
			return field.ErrorList{field.InternalError(p, fmt.Errorf("list the VMI's migrations: %w", err))}
		}
		for _, other := range list.(*virtualization.VirtualMachineInstanceMigrationList).Items {
			if other.Spec.VMIName == m.Spec.VMIName && !other.Status.Phase.Final() {
				return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
					"the VMI %s already has an unfinished migration, %s (phase %s); wait for it to end or delete it",
					m.Spec.VMIName, other.Name, phaseName(other.Status.Phase)))}
			}
		}
	}
	return nil
}

func phaseName(p virtualization.VirtualMachineInstanceMigrationPhase) string {
	if p == virtualization.MigrationPhaseUnset {
		return "not yet started"
	}
	return string(p)
}

// GetAttrs returns the labels and selectable fields of a migration.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	m, ok := obj.(*virtualization.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstanceMigration: %T", obj)
	}
	f := generic.ObjectMetaFieldsSet(&m.ObjectMeta, true)
	f["spec.vmiName"] = m.Spec.VMIName
	f["status.phase"] = string(m.Status.Phase)
	return m.Labels, f, nil
}

// Match selects migrations by labels and fields.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
