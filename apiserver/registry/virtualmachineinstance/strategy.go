package virtualmachineinstance

import (
	"context"
	"fmt"
	"slices"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
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

// NodeNameField is the field selector (and watch-cache index) the node
// daemons list and watch with: each node only cares about its own VMIs.
const NodeNameField = "status.nodeName"

// TargetNodeField selects the VMIs migrating to a node: the target node's
// virt-handler watches it beside NodeNameField.
const TargetNodeField = "status.migrationState.targetNode"

// finalizers are added to every VMI on create, so no component has to race
// to add them before the VMI can be deleted: the guest is shut down and the
// launcher pod removed before the object disappears.
var finalizers = []string{virtv1.GuestShutdownFinalizer, virtv1.LauncherPodFinalizer}

// strategy is how virtualmachineinstances are created, updated and deleted.
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

// NamespaceScoped is true: a VMI lives in a namespace, like its pod.
func (strategy) NamespaceScoped() bool { return true }

// GetResetFields says status is not written through the main resource.
func (strategy) GetResetFields() map[fieldpath.APIVersion]*fieldpath.Set {
	return map[fieldpath.APIVersion]*fieldpath.Set{
		fieldpath.APIVersion(virtv1.SchemeGroupVersion.String()): fieldpath.NewSet(fieldpath.MakePathOrDie("status")),
	}
}

// PrepareForCreate clears the status a client sent, starts the VMI Pending,
// and adds the platform's finalizers.
func (strategy) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	vmi := obj.(*virtualization.VirtualMachineInstance)
	vmi.Status = virtualization.VirtualMachineInstanceStatus{}
	vmi.Status.SetPhase(virtualization.Pending, "", metav1.Now())
	vmi.Generation = 1
	for _, f := range finalizers {
		if !slices.Contains(vmi.Finalizers, f) {
			vmi.Finalizers = append(vmi.Finalizers, f)
		}
	}
}

// PrepareForUpdate keeps the stored status and bumps the generation when the
// spec changed (validation then refuses the change: the spec is immutable).
func (strategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	vmi := obj.(*virtualization.VirtualMachineInstance)
	oldVMI := old.(*virtualization.VirtualMachineInstance)
	vmi.Status = oldVMI.Status
	if !apiequality.Semantic.DeepEqual(vmi.Spec, oldVMI.Spec) {
		vmi.Generation = oldVMI.Generation + 1
	}
}

// Validate checks a new VMI.
func (strategy) Validate(ctx context.Context, obj runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstance(obj.(*virtualization.VirtualMachineInstance))
}

// WarningsOnCreate returns the risky settings of a new VMI.
func (strategy) WarningsOnCreate(ctx context.Context, obj runtime.Object) []string {
	return validation.VirtualMachineInstanceWarnings(&obj.(*virtualization.VirtualMachineInstance).Spec, "")
}

// Canonicalize drops empty maps so equal VMIs are stored equally.
func (strategy) Canonicalize(obj runtime.Object) {
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if len(vmi.Spec.NodeSelector) == 0 {
		vmi.Spec.NodeSelector = nil
	}
}

// AllowCreateOnUpdate is false: a PUT of a missing VMI is an error, not a create.
func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

// AllowUnconditionalUpdate is true: an update without resourceVersion wins.
func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

// ValidateUpdate checks a change of metadata or spec.
func (strategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceUpdate(obj.(*virtualization.VirtualMachineInstance), old.(*virtualization.VirtualMachineInstance))
}

// WarningsOnUpdate has nothing to say: the spec cannot change.
func (strategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string { return nil }

// statusStrategy is how virtualmachineinstances/status is written.
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

// PrepareForUpdate keeps everything but the status. The writer records the
// phase transition it makes (ValidateUpdate refuses one that it did not).
func (statusStrategy) PrepareForUpdate(ctx context.Context, obj, old runtime.Object) {
	vmi := obj.(*virtualization.VirtualMachineInstance)
	oldVMI := old.(*virtualization.VirtualMachineInstance)
	vmi.Spec = oldVMI.Spec
	vmi.Labels = oldVMI.Labels
	vmi.Annotations = oldVMI.Annotations
	vmi.Finalizers = oldVMI.Finalizers
	vmi.OwnerReferences = oldVMI.OwnerReferences
}

// ValidateUpdate checks the phase transition, its record, and the node
// hand-off.
func (statusStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	return validation.ValidateVirtualMachineInstanceStatusUpdate(obj.(*virtualization.VirtualMachineInstance), old.(*virtualization.VirtualMachineInstance))
}

// WarningsOnUpdate has nothing to say about status writes.
func (statusStrategy) WarningsOnUpdate(ctx context.Context, obj, old runtime.Object) []string {
	return nil
}

// GetAttrs returns the labels and selectable fields of a VMI.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	vmi, ok := obj.(*virtualization.VirtualMachineInstance)
	if !ok {
		return nil, nil, fmt.Errorf("not a VirtualMachineInstance: %T", obj)
	}
	return vmi.Labels, selectableFields(vmi), nil
}

func selectableFields(vmi *virtualization.VirtualMachineInstance) fields.Set {
	set := generic.ObjectMetaFieldsSet(&vmi.ObjectMeta, true)
	set[NodeNameField] = vmi.Status.NodeName
	set["status.phase"] = string(vmi.Status.Phase)
	set[TargetNodeField] = targetNode(vmi)
	return set
}

// Match selects VMIs by labels and fields; status.nodeName is answered from
// the watch cache's index instead of a scan, and so is
// status.migrationState.targetNode.
func Match(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{
		Label:       label,
		Field:       field,
		GetAttrs:    GetAttrs,
		IndexFields: []string{NodeNameField, TargetNodeField},
	}
}

// NodeNameTriggerFunc lets the watch cache dispatch an event only to the
// watchers of the VMI's node.
func NodeNameTriggerFunc(obj runtime.Object) string {
	return obj.(*virtualization.VirtualMachineInstance).Status.NodeName
}

// NodeNameIndexFunc indexes the watch cache by node.
func NodeNameIndexFunc(obj interface{}) ([]string, error) {
	vmi, ok := obj.(*virtualization.VirtualMachineInstance)
	if !ok {
		return nil, fmt.Errorf("not a VirtualMachineInstance: %T", obj)
	}
	return []string{vmi.Status.NodeName}, nil
}

// TargetNodeIndexFunc indexes the watch cache by migration target node. (The
// cache dispatches events by one trigger only, status.nodeName's.)
func TargetNodeIndexFunc(obj interface{}) ([]string, error) {
	vmi, ok := obj.(*virtualization.VirtualMachineInstance)
	if !ok {
		return nil, fmt.Errorf("not a VirtualMachineInstance: %T", obj)
	}
	return []string{targetNode(vmi)}, nil
}

func targetNode(vmi *virtualization.VirtualMachineInstance) string {
	if vmi.Status.MigrationState == nil {
		return ""
	}
	return vmi.Status.MigrationState.TargetNode
}
