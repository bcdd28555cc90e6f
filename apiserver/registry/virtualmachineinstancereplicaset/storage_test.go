package virtualmachineinstancereplicaset

import (
	"context"
	"testing"

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

func newStorage(t *testing.T) (*REST, *StatusREST, *ScaleREST) {
	t.Helper()
	scheme := registrytest.NewScheme()
	if err := AddScaleToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachineinstancereplicasets")
	rs, status, scale, err := NewREST(scheme, registrytest.OptionsGetter(opts))
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(rs.Store.DestroyFunc)
	return rs, status, scale
}

func validReplicaSet(name string) *virtualization.VirtualMachineInstanceReplicaSet {
	return &virtualization.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec: virtualization.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &virtualization.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
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
	storage, _, _ := newStorage(t)
	valid := validReplicaSet("")
	valid.ObjectMeta = metav1.ObjectMeta{}
	noSelector := validReplicaSet("")
	noSelector.Spec.Selector = nil
	mismatch := validReplicaSet("")
	mismatch.Spec.Selector.MatchLabels = map[string]string{"app": "db"}
	negative := validReplicaSet("")
	negative.Spec.Replicas = ptr.To(int32(-1))
	badTemplate := validReplicaSet("")
	badTemplate.Spec.Template.Spec.Domain.CPU.Cores = 0
	genericregistrytest.New(t, storage.Store).TestCreate(valid, noSelector, mismatch, negative, badTemplate)
}

func TestUpdate(t *testing.T) {
	storage, _, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestUpdate(validReplicaSet("upd"),
		func(obj runtime.Object) runtime.Object {
			rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
			rs.Spec.Replicas = ptr.To(int32(5))
			rs.Spec.Paused = true
			return rs
		},
		func(obj runtime.Object) runtime.Object {
			rs := obj.(*virtualization.VirtualMachineInstanceReplicaSet)
			rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "other"}}
			rs.Spec.Template.ObjectMeta.Labels = map[string]string{"app": "other"}
			return rs
		},
	)
}

func TestDelete(t *testing.T) {
	storage, _, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).ReturnDeletedObject().TestDelete(validReplicaSet("del"))
}

func TestGet(t *testing.T) {
	storage, _, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestGet(validReplicaSet("get"))
}

func TestList(t *testing.T) {
	storage, _, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestList(validReplicaSet("list"))
}

func TestWatch(t *testing.T) {
	storage, _, _ := newStorage(t)
	genericregistrytest.New(t, storage.Store).TestWatch(validReplicaSet("w"),
		[]labels.Set{{}},
		[]labels.Set{{"team": "b"}},
		[]fields.Set{{"metadata.name": "w"}},
		[]fields.Set{{"metadata.name": "other"}},
	)
}

// TestStatusIsOnlyWrittenThroughStatus: the controller owns the status, the
// user the spec; neither overwrites the other's half.
func TestStatusIsOnlyWrittenThroughStatus(t *testing.T) {
	storage, status, _ := newStorage(t)
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	if _, err := storage.Create(ctx, validReplicaSet("st"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	rs := update(t, ctx, storage, "st", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
		rs.Spec.Replicas = ptr.To(int32(3))
		rs.Status.Replicas = 9 // ignored by the main resource
	})
	if *rs.Spec.Replicas != 3 || rs.Status.Replicas != 0 || rs.Generation != 2 {
		t.Errorf("spec write: replicas %d, status.replicas %d, generation %d; want 3, 0, 2", *rs.Spec.Replicas, rs.Status.Replicas, rs.Generation)
	}
	rs = update(t, ctx, status, "st", func(rs *virtualization.VirtualMachineInstanceReplicaSet) {
		rs.Status.Replicas, rs.Status.ReadyReplicas, rs.Status.LabelSelector = 3, 1, "app=web"
		rs.Spec.Replicas = ptr.To(int32(7)) // ignored by /status
	})
	if *rs.Spec.Replicas != 3 || rs.Status.Replicas != 3 || rs.Status.ReadyReplicas != 1 || rs.Generation != 2 {
		t.Errorf("status write: replicas %d, status %+v, generation %d", *rs.Spec.Replicas, rs.Status, rs.Generation)
	}
	_, _, err := status.Update(ctx, "st", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		rs := old.(*virtualization.VirtualMachineInstanceReplicaSet).DeepCopy()
		rs.Status.ReadyReplicas = 4
		return rs, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err == nil {
		t.Error("more ready than existing replicas was accepted")
	}
}

func update(t *testing.T, ctx context.Context, r rest.Updater, name string, mutate func(*virtualization.VirtualMachineInstanceReplicaSet)) *virtualization.VirtualMachineInstanceReplicaSet {
	t.Helper()
	obj, _, err := r.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		rs := old.(*virtualization.VirtualMachineInstanceReplicaSet).DeepCopy()
		mutate(rs)
		return rs, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*virtualization.VirtualMachineInstanceReplicaSet)
}

func TestShortNamesAndCategories(t *testing.T) {
	storage, _, _ := newStorage(t)
	if got := storage.ShortNames(); len(got) != 2 || got[0] != "vmirs" || got[1] != "vmirss" {
		t.Errorf("short names = %v, want [vmirs vmirss]", got)
	}
	if got := storage.Categories(); len(got) != 2 || got[0] != "all" || got[1] != "virt" {
		t.Errorf("categories = %v, want [all virt]", got)
	}
}
