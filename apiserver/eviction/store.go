package eviction

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Store reaches the VMIs through virt-apiserver's own status storage, in
// process: the mark is the server's own write (its row in the ownership
// table), not a client's.
type Store struct {
	Status rest.Patcher
	Scheme *runtime.Scheme
}

var _ VMIs = Store{}

// Get reads the VMI and converts it to v1.
func (s Store) Get(ctx context.Context, namespace, name string) (*virtv1.VirtualMachineInstance, error) {
	obj, err := s.Status.Get(genericapirequest.WithNamespace(ctx, namespace), name, &metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	out := &virtv1.VirtualMachineInstance{}
	if err := s.Scheme.Convert(obj, out, nil); err != nil {
		return nil, fmt.Errorf("convert VMI %s/%s: %w", namespace, name, err)
	}
	return out, nil
}

// MarkEvacuation sets status.evacuationNodeName on the current VMI of that
// name, if it is still the one with uid.
func (s Store) MarkEvacuation(ctx context.Context, namespace, name string, uid types.UID, node string) error {
	mark := func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		vmi, ok := old.(*virtualization.VirtualMachineInstance)
		if !ok {
			return nil, fmt.Errorf("unexpected object %T", old)
		}
		if vmi.UID != uid {
			return nil, apierrors.NewConflict(virtv1.Resource("virtualmachineinstances"), name, fmt.Errorf("the VMI was replaced"))
		}
		vmi = vmi.DeepCopy()
		vmi.Status.EvacuationNodeName = node
		return vmi, nil
	}
	_, _, err := s.Status.Update(genericapirequest.WithNamespace(ctx, namespace), name, rest.DefaultUpdatedObjectInfo(nil, mark),
		rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	return err
}
