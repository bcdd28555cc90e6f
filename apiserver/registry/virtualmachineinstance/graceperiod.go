package virtualmachineinstance

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apis/virtualization/validation"
)

// SetTerminationGracePeriod sets spec.terminationGracePeriodSeconds of the
// VMI name with UID uid to seconds and returns what it was. It is the one
// change of a VMI's spec after creation, and no client makes it directly:
// the stop and restart subresources of VMs shorten the grace period of the
// instance they stop (KubeVirt's stop --grace-period), and virt-handler
// gives the guest what the spec says when the VMI is deleted. The server
// calls it; it is not served.
func (r *REST) SetTerminationGracePeriod(ctx context.Context, name string, uid types.UID, seconds int64, dryRun []string) (int64, error) {
	store := *r.Store
	store.UpdateStrategy = gracePeriodStrategy{r.Store.UpdateStrategy.(strategy)}
	var was int64
	_, _, err := store.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		vmi := old.(*virtualization.VirtualMachineInstance).DeepCopy()
		if vmi.UID != uid {
			return nil, apierrors.NewConflict(virtualization.Resource("virtualmachineinstances"), name,
				fmt.Errorf("VMI %s was replaced (UID %s, not %s)", name, vmi.UID, uid))
		}
		if vmi.Spec.TerminationGracePeriodSeconds != nil {
			was = *vmi.Spec.TerminationGracePeriodSeconds
		}
		vmi.Spec.TerminationGracePeriodSeconds = &seconds
		return vmi, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{DryRun: dryRun})
	return was, err
}

// gracePeriodStrategy is the main strategy with one exception: the grace
// period may change.
type gracePeriodStrategy struct {
	strategy
}

// ValidateUpdate checks the update as the main strategy does, but against
// the old VMI with the new grace period.
func (gracePeriodStrategy) ValidateUpdate(ctx context.Context, obj, old runtime.Object) field.ErrorList {
	vmi := obj.(*virtualization.VirtualMachineInstance)
	was := old.(*virtualization.VirtualMachineInstance).DeepCopy()
	was.Spec.TerminationGracePeriodSeconds = vmi.Spec.TerminationGracePeriodSeconds
	allErrs := validation.ValidateVirtualMachineInstanceUpdate(vmi, was)
	if g := vmi.Spec.TerminationGracePeriodSeconds; g == nil || *g < 0 {
		allErrs = append(allErrs, field.Invalid(field.NewPath("spec", "terminationGracePeriodSeconds"), g, "must be zero or more seconds"))
	}
	return allErrs
}
