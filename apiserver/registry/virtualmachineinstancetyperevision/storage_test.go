package virtualmachineinstancetyperevision

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"

	"kubevirt.dev/virt/apis/virtualization"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

func newStorage(t *testing.T) *REST {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachineinstancetyperevisions")
	s, err := NewREST(scheme, registrytest.OptionsGetter(opts))
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(s.Store.DestroyFunc)
	return s
}

// small is a copy of KubeVirt's u1.small, as the VM controller writes it.
const small = `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineClusterInstancetype",` +
	`"metadata":{"name":"u1.small","uid":"u","generation":2},"spec":{"cpu":{"guest":1},"memory":{"guest":"2Gi"}}}`

func valid(name string) *virtualization.VirtualMachineInstancetypeRevision {
	return withData(name, small)
}

func withData(name, data string) *virtualization.VirtualMachineInstancetypeRevision {
	return &virtualization.VirtualMachineInstancetypeRevision{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "test"},
		Data:       runtime.RawExtension{Raw: []byte(data)},
		Revision:   2,
	}
}

func TestCreate(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestCreate(valid("vm-u1.small-u-2"),
		// Nothing in it.
		withData("", ""),
		// Not an instancetype.
		withData("", `{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`),
		// An instancetype the platform refuses: the copy is checked as
		// the object it copies.
		withData("", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstancetype",`+
			`"spec":{"cpu":{"guest":1,"dedicatedCPUPlacement":true},"memory":{"guest":"1Gi"}}}`),
		// A field no preference has.
		withData("", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachinePreference","spec":{"preferredDiskBuss":"virtio"}}`),
	)
}

// TestUpdate: labels and owners may change (the garbage collector writes
// them), the copy never.
func TestUpdate(t *testing.T) {
	s := newStorage(t)
	genericregistrytest.New(t, s.Store).TestUpdate(valid("vm-u1.small-u-2"),
		func(obj runtime.Object) runtime.Object {
			r := obj.(*virtualization.VirtualMachineInstancetypeRevision)
			r.Labels = map[string]string{"seen": "yes"}
			return r
		},
		func(obj runtime.Object) runtime.Object {
			r := obj.(*virtualization.VirtualMachineInstancetypeRevision)
			r.Data.Raw = []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineClusterInstancetype",` +
				`"metadata":{"name":"u1.small"},"spec":{"cpu":{"guest":8},"memory":{"guest":"32Gi"}}}`)
			return r
		},
		func(obj runtime.Object) runtime.Object {
			r := obj.(*virtualization.VirtualMachineInstancetypeRevision)
			r.Revision = 3
			return r
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
		[]labels.Set{{"virtualization.kubevirt.io/revision-object-name": "other"}},
		[]fields.Set{{"metadata.name": "w"}},
		[]fields.Set{{"metadata.name": "other"}},
	)
}
