package virtualmachineinstancetype

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

func newStorage(t *testing.T) *REST {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachineinstancetypes")
	s, err := NewREST(scheme, registrytest.OptionsGetter(opts))
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(s.Store.DestroyFunc)
	return s
}

// valid is KubeVirt's u1.small: one vCPU, 2Gi.
func valid(name string) *virtualization.VirtualMachineInstancetype {
	return &virtualization.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: virtualization.VirtualMachineInstancetypeSpec{
			CPU:    virtualization.CPUInstancetype{Guest: 1},
			Memory: virtualization.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
		},
	}
}

func TestCreate(t *testing.T) {
	s := newStorage(t)
	noCPU := valid("")
	noCPU.Spec.CPU.Guest = 0
	dedicated := valid("")
	dedicated.Spec.CPU.DedicatedCPUPlacement = ptr.To(true)
	overcommit := valid("")
	overcommit.Spec.Memory.OvercommitPercent = 101
	genericregistrytest.New(t, s.Store).TestCreate(valid("u1.small"), noCPU, dedicated, overcommit)
}

func TestUpdate(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestUpdate(valid("u1.small"),
		func(obj runtime.Object) runtime.Object {
			it := obj.(*virtualization.VirtualMachineInstancetype)
			it.Spec.CPU.Guest = 2
			return it
		},
		func(obj runtime.Object) runtime.Object {
			it := obj.(*virtualization.VirtualMachineInstancetype)
			it.Spec.Memory.Guest = resource.Quantity{}
			return it
		},
	)
}

func TestDelete(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).ReturnDeletedObject().TestDelete(valid("del"))
}

func TestGet(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestGet(valid("get"))
}

func TestList(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestList(valid("list"))
}

func TestWatch(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestWatch(valid("w"),
		[]labels.Set{{}},
		[]labels.Set{{"size": "large"}},
		[]fields.Set{{"metadata.name": "w"}},
		[]fields.Set{{"metadata.name": "other"}},
	)
}
