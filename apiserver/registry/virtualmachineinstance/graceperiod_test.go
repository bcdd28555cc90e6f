package virtualmachineinstance

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

// TestSetTerminationGracePeriod: the one spec change the server makes to a
// VMI is its own, for the instance it names by UID; a client's spec change
// is still refused.
func TestSetTerminationGracePeriod(t *testing.T) {
	storage, _ := newStorage(t)
	ctx := ctxFor(t)
	obj, err := storage.Create(ctx, validVMI("vmi"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	created := obj.(*virtualization.VirtualMachineInstance)

	if _, err := storage.SetTerminationGracePeriod(ctx, "vmi", "another-uid", 1, nil); !apierrors.IsConflict(err) {
		t.Errorf("other UID: err = %v, want Conflict", err)
	}
	if _, err := storage.SetTerminationGracePeriod(ctx, "missing", created.UID, 1, nil); !apierrors.IsNotFound(err) {
		t.Errorf("missing VMI: err = %v, want NotFound", err)
	}
	if was, err := storage.SetTerminationGracePeriod(ctx, "vmi", created.UID, 5, []string{metav1.DryRunAll}); err != nil || was != 30 {
		t.Errorf("dry run: was = %d, err = %v, want 30, nil", was, err)
	}
	was, err := storage.SetTerminationGracePeriod(ctx, "vmi", created.UID, 5, nil)
	if err != nil || was != 30 {
		t.Fatalf("was = %d, err = %v, want 30, nil", was, err)
	}
	obj, err = storage.Get(ctx, "vmi", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if *vmi.Spec.TerminationGracePeriodSeconds != 5 || vmi.Generation != created.Generation+1 {
		t.Errorf("grace = %d, generation = %d; want 5, %d", *vmi.Spec.TerminationGracePeriodSeconds, vmi.Generation, created.Generation+1)
	}

	// Through the main resource, the spec stays immutable.
	_, _, err = storage.Update(ctx, "vmi", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		vmi := old.(*virtualization.VirtualMachineInstance).DeepCopy()
		vmi.Spec.TerminationGracePeriodSeconds = ptr.To(int64(1))
		return vmi, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("client's grace period change: err = %v, want Invalid", err)
	}
}
