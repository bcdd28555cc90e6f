package virtualmachinepreference

import (
	"testing"

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
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachinepreferences")
	s, err := NewREST(scheme, registrytest.OptionsGetter(opts))
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(s.Store.DestroyFunc)
	return s
}

// valid prefers what a Linux guest likes: virtio disks and NICs.
func valid(name string) *virtualization.VirtualMachinePreference {
	return &virtualization.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Spec: virtualization.VirtualMachinePreferenceSpec{
			Devices: &virtualization.DevicePreferences{
				PreferredDiskBus:        virtualization.DiskBusVirtio,
				PreferredInterfaceModel: "virtio",
			},
		},
	}
}

func TestCreate(t *testing.T) {
	s := newStorage(t)
	badBus := valid("")
	badBus.Spec.Devices.PreferredDiskBus = "ide"
	badTopology := valid("")
	badTopology.Spec.CPU = &virtualization.CPUPreferences{PreferredCPUTopology: ptr.To(virtualization.PreferredCPUTopology("dies"))}
	arm := valid("")
	arm.Spec.PreferredArchitecture = ptr.To("arm64")
	genericregistrytest.New(t, s.Store).TestCreate(valid("fedora"), badBus, badTopology, arm)
}

func TestUpdate(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestUpdate(valid("fedora"),
		func(obj runtime.Object) runtime.Object {
			p := obj.(*virtualization.VirtualMachinePreference)
			p.Spec.Machine = &virtualization.MachinePreferences{PreferredMachineType: "pc-q35-9.2"}
			return p
		},
		func(obj runtime.Object) runtime.Object {
			p := obj.(*virtualization.VirtualMachinePreference)
			p.Spec.Devices.PreferredInterfaceModel = "no-such-model"
			return p
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
		[]labels.Set{{"os": "windows"}},
		[]fields.Set{{"metadata.name": "w"}},
		[]fields.Set{{"metadata.name": "other"}},
	)
}
