package virtualmachine

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

// stubExpander stands in for the server's: it answers errs, or the VM with
// four cores, and counts its calls.
type stubExpander struct {
	calls int
	errs  field.ErrorList
}

func (s *stubExpander) Expand(_ context.Context, vm *virtualization.VirtualMachine) (*virtualization.VirtualMachine, field.ErrorList, error) {
	s.calls++
	if len(s.errs) > 0 {
		return nil, s.errs, nil
	}
	out := vm.DeepCopy()
	out.Spec.Instancetype, out.Spec.Preference = nil, nil
	out.Spec.Template.Spec.Domain.CPU = &virtualization.CPU{Sockets: 4, Cores: 1, Threads: 1}
	return out, nil, nil
}

func newExpandingStorage(t *testing.T, e Expander) *REST {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachines")
	vm, _, err := NewREST(scheme, registrytest.OptionsGetter(opts), e)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(vm.Store.DestroyFunc)
	return vm
}

// sizedVM is validVM with its size left to the instancetype u1.small.
func sizedVM(name string) *virtualization.VirtualMachine {
	vm := validVM(name)
	vm.Spec.Template.Spec.Domain.CPU = nil
	vm.Spec.Instancetype = &virtualization.InstancetypeMatcher{Name: "u1.small"}
	return vm
}

func TestExpandedValidation(t *testing.T) {
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	e := &stubExpander{}
	storage := newExpandingStorage(t, e)
	if _, err := storage.Create(ctx, sizedVM("sized"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("create: %v", err)
	}
	if e.calls != 1 {
		t.Fatalf("expanded %d times on create, want 1", e.calls)
	}
	update := func(mutate func(*virtualization.VirtualMachine)) error {
		_, _, err := storage.Update(ctx, "sized", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			vm := old.(*virtualization.VirtualMachine).DeepCopy()
			mutate(vm)
			return vm, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		return err
	}
	// A stop changes neither the template nor the references: a VM whose
	// instancetype is gone must still stop.
	e.errs = field.ErrorList{field.NotFound(field.NewPath("spec", "instancetype", "name"), "u1.small")}
	if err := update(func(vm *virtualization.VirtualMachine) {
		vm.Spec.RunStrategy = ptr.To(virtualization.RunStrategyHalted)
	}); err != nil {
		t.Errorf("stop of a VM whose instancetype is gone: %v", err)
	}
	if e.calls != 1 {
		t.Errorf("a run strategy change expanded the VM again (%d calls)", e.calls)
	}
	// A template change is checked again.
	err := update(func(vm *virtualization.VirtualMachine) { vm.Spec.Template.Spec.Hostname = "web" })
	if !apierrors.IsInvalid(err) || e.calls != 2 {
		t.Errorf("template change with a missing instancetype: %v (%d calls), want 422", err, e.calls)
	}
}

func TestReferencesWithoutExpander(t *testing.T) {
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	storage := newExpandingStorage(t, nil)
	_, err := storage.Create(ctx, sizedVM("sized"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("create without an expander: %v, want 422", err)
	}
}

func TestExpandSpec(t *testing.T) {
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	e := &stubExpander{}
	storage := newExpandingStorage(t, e)
	expand := NewExpandSpecREST(storage, e)
	for _, vm := range []*virtualization.VirtualMachine{sizedVM("sized"), validVM("plain")} {
		if _, err := storage.Create(ctx, vm, rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	obj, err := expand.Get(ctx, "sized", &metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if vm := obj.(*virtualization.VirtualMachine); vm.Spec.Instancetype != nil || vm.Spec.Template.Spec.Domain.CPU.Sockets != 4 {
		t.Errorf("expanded %+v", vm.Spec)
	}
	calls := e.calls
	if obj, err := expand.Get(ctx, "plain", &metav1.GetOptions{}); err != nil || e.calls != calls || obj.(*virtualization.VirtualMachine).Spec.Template.Spec.Domain.CPU.Cores != 1 {
		t.Errorf("a VM without references: %v, %d expansions", err, e.calls-calls)
	}
	e.errs = field.ErrorList{field.Forbidden(field.NewPath("spec", "template", "spec", "domain", "cpu", "sockets"), "conflict")}
	if _, err := expand.Get(ctx, "sized", &metav1.GetOptions{}); !apierrors.IsInvalid(err) {
		t.Errorf("a conflict: %v, want 422", err)
	}
	if _, err := expand.Get(ctx, "absent", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a missing VM: %v, want 404", err)
	}
}
