package virtualmachine

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

const namespace = "test"

func newStorage(t *testing.T) (*REST, *StatusREST) {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachines")
	vm, status, err := NewREST(scheme, registrytest.OptionsGetter(opts), nil)
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(vm.Store.DestroyFunc)
	return vm, status
}

func validVM(name string) *virtualization.VirtualMachine {
	return &virtualization.VirtualMachine{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: virtualization.VirtualMachineSpec{
			RunStrategy: ptr.To(virtualization.RunStrategyAlways),
			Template: &virtualization.VirtualMachineInstanceTemplateSpec{
				Spec: virtualization.VirtualMachineInstanceSpec{
					Domain: virtualization.DomainSpec{
						CPU:     &virtualization.CPU{Cores: 1, Sockets: 1, Threads: 1},
						Memory:  &virtualization.Memory{Guest: ptr.To(resource.MustParse("128Mi"))},
						Machine: &virtualization.Machine{Type: "q35"},
						Firmware: &virtualization.Firmware{KernelBoot: &virtualization.KernelBoot{
							Container: &virtualization.KernelBootContainer{Image: "localhost/guest:dev", KernelPath: "/boot/vmlinuz"},
						}},
					},
					TerminationGracePeriodSeconds: ptr.To(int64(30)),
				},
			},
		},
	}
}

func TestCreate(t *testing.T) {
	storage, _ := newStorage(t)
	valid := validVM("")
	valid.ObjectMeta = metav1.ObjectMeta{}
	badStrategy := validVM("")
	badStrategy.Spec.RunStrategy = ptr.To(virtualization.VirtualMachineRunStrategy("Sometimes"))
	noTemplate := validVM("")
	noTemplate.Spec.Template = nil
	genericregistrytest.New(t, storage.Store).TestCreate(valid, badStrategy, noTemplate)
}

func TestUpdate(t *testing.T) {
	storage, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestUpdate(validVM("upd"),
		func(obj runtime.Object) runtime.Object {
			vm := obj.(*virtualization.VirtualMachine)
			vm.Spec.RunStrategy = ptr.To(virtualization.RunStrategyHalted)
			return vm
		},
		func(obj runtime.Object) runtime.Object {
			vm := obj.(*virtualization.VirtualMachine)
			vm.Spec.Template.Spec.Domain.CPU.Cores = 0
			return vm
		},
	)
}

func TestDelete(t *testing.T) {
	storage, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).ReturnDeletedObject().TestDelete(validVM("del"))
}

func TestGet(t *testing.T) {
	storage, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestGet(validVM("get"))
}

func TestList(t *testing.T) {
	storage, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestList(validVM("list"))
}

func TestWatch(t *testing.T) {
	storage, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestWatch(validVM("w"),
		[]labels.Set{{}},
		[]labels.Set{{"team": "b"}},
		[]fields.Set{{"metadata.name": "w"}, {"status.printableStatus": ""}},
		[]fields.Set{{"metadata.name": "other"}, {"status.printableStatus": "Running"}},
	)
}

// TestSpecChangeBumpsGeneration: the controller compares observedGeneration
// with generation to know whether it acted on the latest spec.
func TestSpecChangeBumpsGeneration(t *testing.T) {
	storage, status := newStorage(t)
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	if _, err := storage.Create(ctx, validVM("gen"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	update := func(r rest.Updater, mutate func(*virtualization.VirtualMachine)) *virtualization.VirtualMachine {
		t.Helper()
		obj, _, err := r.Update(ctx, "gen", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
			vm := old.(*virtualization.VirtualMachine).DeepCopy()
			mutate(vm)
			return vm, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*virtualization.VirtualMachine)
	}
	vm := update(storage, func(vm *virtualization.VirtualMachine) { vm.Labels = map[string]string{"a": "b"} })
	if vm.Generation != 1 {
		t.Errorf("metadata change: generation = %d, want 1", vm.Generation)
	}
	vm = update(storage, func(vm *virtualization.VirtualMachine) {
		vm.Spec.RunStrategy = ptr.To(virtualization.RunStrategyHalted)
		vm.Status.Ready = true // ignored by the main resource
	})
	if vm.Generation != 2 || vm.Status.Ready {
		t.Errorf("spec change: generation = %d ready = %v, want 2 and false", vm.Generation, vm.Status.Ready)
	}
	vm = update(status, func(vm *virtualization.VirtualMachine) {
		vm.Status.PrintableStatus = virtualization.VirtualMachineStatusStopped
		vm.Spec.RunStrategy = ptr.To(virtualization.RunStrategyAlways) // ignored by /status
	})
	if vm.Status.PrintableStatus != virtualization.VirtualMachineStatusStopped || *vm.Spec.RunStrategy != virtualization.RunStrategyHalted || vm.Generation != 2 {
		t.Errorf("status write: %+v %v gen %d", vm.Status, *vm.Spec.RunStrategy, vm.Generation)
	}
	if _, err := storage.Get(ctx, "missing", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get missing: %v", err)
	}
}

func TestShortNamesAndCategories(t *testing.T) {
	storage, _ := newStorage(t)
	if got := storage.ShortNames(); len(got) != 2 || got[0] != "vm" || got[1] != "vms" {
		t.Errorf("short names = %v, want [vm vms]", got)
	}
	if got := storage.Categories(); len(got) != 2 || got[0] != "all" || got[1] != "virt" {
		t.Errorf("categories = %v, want [all virt]", got)
	}
}
