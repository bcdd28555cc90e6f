package virtualmachine

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericregistry "k8s.io/apiserver/pkg/registry/generic/registry"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// Expander expands a VM that references an instancetype or a preference:
// its template with them applied and then defaulted, the references
// removed. Field errors are the VM's fault (a conflict, a missing object);
// an error is a failure to read them.
type Expander interface {
	Expand(ctx context.Context, vm *virtualization.VirtualMachine) (*virtualization.VirtualMachine, field.ErrorList, error)
}

// validateExpanded checks the template of a VM with references as the
// instance it would create: with the instancetype's vCPUs and memory, the
// preference's defaults, and the defaults of every VMI.
func (s strategy) validateExpanded(ctx context.Context, vm *virtualization.VirtualMachine) field.ErrorList {
	if !validation.HasReferences(&vm.Spec) {
		return nil
	}
	if s.expander == nil {
		return field.ErrorList{field.Forbidden(field.NewPath("spec", "instancetype"), "this server does not serve instancetypes and preferences")}
	}
	expanded, errs, err := s.expander.Expand(ctx, vm)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec"), err)}
	}
	if len(errs) > 0 {
		return errs
	}
	return validation.ValidateVirtualMachineInstanceSpec(&expanded.Spec.Template.Spec, field.NewPath("spec", "template", "spec"))
}

// ExpandSpecREST is the storage of virtualmachines/expand-spec: the VM as
// if written without references (KubeVirt's expand-spec), so that a user
// sees the instance the VM creates and can keep the result as a plain VM.
type ExpandSpecREST struct {
	vms      *genericregistry.Store
	expander Expander
}

var _ rest.Getter = &ExpandSpecREST{}

// NewExpandSpecREST returns the expand-spec subresource of the VMs of vms.
func NewExpandSpecREST(vms *REST, expander Expander) *ExpandSpecREST {
	return &ExpandSpecREST{vms: vms.Store, expander: expander}
}

// New returns an empty VM: the answer is one.
func (r *ExpandSpecREST) New() runtime.Object { return &virtualization.VirtualMachine{} }

// Destroy does nothing: the main store owns the storage.
func (r *ExpandSpecREST) Destroy() {}

// Get answers VM name expanded. A VM without references is answered as
// stored (its template is defaulted already); one whose references cannot
// be resolved or conflict is a 422 naming the fields, as its update would
// be.
func (r *ExpandSpecREST) Get(ctx context.Context, name string, options *metav1.GetOptions) (runtime.Object, error) {
	obj, err := r.vms.Get(ctx, name, options)
	if err != nil {
		return nil, err
	}
	vm := obj.(*virtualization.VirtualMachine)
	if !validation.HasReferences(&vm.Spec) {
		return vm, nil
	}
	if r.expander == nil {
		return nil, apierrors.NewServiceUnavailable("this server does not serve instancetypes and preferences")
	}
	expanded, errs, err := r.expander.Expand(ctx, vm)
	if err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(virtualization.Kind("VirtualMachine"), name, errs)
	}
	return expanded, nil
}
