package virtualmachineinstance

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

const namespace = "test"

func newStorage(t *testing.T) (*REST, *StatusREST) {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachineinstances")
	vmi, status, err := NewREST(scheme, registrytest.OptionsGetter(opts))
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(vmi.Store.DestroyFunc)
	return vmi, status
}

// validVMI is what a client posts after defaulting.
func validVMI(name string) *virtualization.VirtualMachineInstance {
	return &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
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
	}
}

func ctxFor(t *testing.T) context.Context {
	return genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
}

// genericTester runs Kubernetes' generic registry tests. Those delete and
// recreate objects of the same name, which the platform's finalizers would
// (rightly) hold; the tester's store drops them after PrepareForCreate, and
// TestCreatePreparesStatusAndFinalizers / TestDeleteWaitsForFinalizers cover
// them instead.
func genericTester(t *testing.T, storage *REST) *genericregistrytest.Tester {
	store := *storage.Store
	store.CreateStrategy = withoutFinalizers{store.CreateStrategy.(strategy)}
	return genericregistrytest.New(t, &store)
}

type withoutFinalizers struct{ strategy }

func (s withoutFinalizers) PrepareForCreate(ctx context.Context, obj runtime.Object) {
	s.strategy.PrepareForCreate(ctx, obj)
	obj.(*virtualization.VirtualMachineInstance).Finalizers = nil
}

func TestCreate(t *testing.T) {
	storage, _ := newStorage(t)
	test := genericTester(t, storage)
	valid := validVMI("")
	valid.ObjectMeta = metav1.ObjectMeta{}
	noMemory := validVMI("")
	noMemory.Spec.Domain.Memory = nil
	badName := validVMI("")
	badName.Spec.Hostname = "not_a_label"
	test.TestCreate(valid, noMemory, badName)
}

func TestCreatePreparesStatusAndFinalizers(t *testing.T) {
	storage, _ := newStorage(t)
	in := validVMI("fresh")
	in.Status = virtualization.VirtualMachineInstanceStatus{Phase: virtualization.Running, NodeName: "sneaky"}
	obj, err := storage.Create(ctxFor(t), in, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	vmi := obj.(*virtualization.VirtualMachineInstance)
	if vmi.Status.Phase != virtualization.Pending || vmi.Status.NodeName != "" {
		t.Errorf("status = %+v, want a fresh Pending status without node", vmi.Status)
	}
	if len(vmi.Status.PhaseTransitionTimestamps) != 1 || vmi.Status.PhaseTransitionTimestamps[0].Phase != virtualization.Pending {
		t.Errorf("phaseTransitionTimestamps = %+v, want one for Pending", vmi.Status.PhaseTransitionTimestamps)
	}
	want := []string{virtv1.GuestShutdownFinalizer, virtv1.LauncherPodFinalizer}
	if len(vmi.Finalizers) != 2 || vmi.Finalizers[0] != want[0] || vmi.Finalizers[1] != want[1] {
		t.Errorf("finalizers = %v, want %v", vmi.Finalizers, want)
	}
	if vmi.Generation != 1 {
		t.Errorf("generation = %d, want 1", vmi.Generation)
	}
}

func TestUpdate(t *testing.T) {
	storage, _ := newStorage(t)
	test := genericTester(t, storage)
	test.TestUpdate(validVMI("upd"),
		// valid: metadata changes
		func(obj runtime.Object) runtime.Object {
			vmi := obj.(*virtualization.VirtualMachineInstance)
			vmi.Labels = map[string]string{"team": "a"}
			return vmi
		},
		// invalid: the spec is immutable
		func(obj runtime.Object) runtime.Object {
			vmi := obj.(*virtualization.VirtualMachineInstance)
			vmi.Spec.Domain.CPU.Cores = 2
			return vmi
		},
	)
}

func TestGet(t *testing.T) {
	storage, _ := newStorage(t)
	genericTester(t, storage).TestGet(validVMI("get"))
}

func TestList(t *testing.T) {
	storage, _ := newStorage(t)
	genericTester(t, storage).TestList(validVMI("list"))
}

// TestDeleteWaitsForFinalizers: a delete marks the VMI; it is gone only
// once the node and the controller removed their finalizers.
func TestDeleteWaitsForFinalizers(t *testing.T) {
	storage, _ := newStorage(t)
	ctx := ctxFor(t)
	if _, err := storage.Create(ctx, validVMI("del"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	obj, deleted, err := storage.Delete(ctx, "del", rest.ValidateAllObjectFunc, &metav1.DeleteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if deleted || obj.(*virtualization.VirtualMachineInstance).DeletionTimestamp == nil {
		t.Fatalf("deleted=%v: want the VMI kept, marked for deletion, while finalizers remain", deleted)
	}
	// The finalizer holders remove theirs.
	_, _, err = storage.Update(ctx, "del", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, obj runtime.Object) (runtime.Object, error) {
		vmi := obj.(*virtualization.VirtualMachineInstance)
		vmi.Finalizers = nil
		return vmi, nil
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := storage.Get(ctx, "del", &metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("get after the last finalizer: err = %v, want NotFound", err)
	}
}

func TestStatusUpdate(t *testing.T) {
	storage, status := newStorage(t)
	ctx := ctxFor(t)
	if _, err := storage.Create(ctx, validVMI("st"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	update := func(mutate func(*virtualization.VirtualMachineInstance)) (*virtualization.VirtualMachineInstance, error) {
		obj, _, err := status.Update(ctx, "st", rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, obj runtime.Object) (runtime.Object, error) {
			vmi := obj.(*virtualization.VirtualMachineInstance).DeepCopy()
			mutate(vmi)
			return vmi, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			return nil, err
		}
		return obj.(*virtualization.VirtualMachineInstance), nil
	}

	got, err := update(func(vmi *virtualization.VirtualMachineInstance) {
		vmi.Status.SetPhase(virtualization.Scheduled, "", metav1.Now())
		vmi.Status.NodeName = "node-1"
		vmi.Spec.Domain.CPU.Cores = 8            // ignored: status writes keep the spec
		vmi.Labels = map[string]string{"x": "y"} // ignored too
	})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != virtualization.Scheduled || got.Status.NodeName != "node-1" {
		t.Errorf("status = %+v, want Scheduled on node-1", got.Status)
	}
	if got.Spec.Domain.CPU.Cores != 1 || got.Labels != nil {
		t.Errorf("a status write changed the spec or labels: cores=%d labels=%v", got.Spec.Domain.CPU.Cores, got.Labels)
	}
	if ts := got.Status.PhaseTransitionTimestamps; len(ts) != 2 || ts[1].Phase != virtualization.Scheduled {
		t.Errorf("phaseTransitionTimestamps = %+v, want Pending then Scheduled", ts)
	}

	if _, err := update(func(vmi *virtualization.VirtualMachineInstance) {
		vmi.Status.SetPhase(virtualization.Succeeded, "", metav1.Now())
	}); err != nil {
		t.Fatal(err)
	}
	_, err = update(func(vmi *virtualization.VirtualMachineInstance) {
		vmi.Status.SetPhase(virtualization.Running, "", metav1.Now())
	})
	if !apierrors.IsInvalid(err) {
		t.Errorf("Succeeded -> Running: err = %v, want Invalid", err)
	}
}

// TestWatchByNode: a node's watch sees only its own VMIs, through the
// status.nodeName field selector the node daemons use.
func TestWatchByNode(t *testing.T) {
	storage, status := newStorage(t)
	ctx := ctxFor(t)
	w, err := storage.Watch(ctx, &metainternalversion.ListOptions{
		LabelSelector: labels.Everything(),
		FieldSelector: fields.OneTermEqualSelector(NodeNameField, "node-a"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()

	for _, name := range []string{"on-a", "on-b"} {
		if _, err := storage.Create(ctx, validVMI(name), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for name, node := range map[string]string{"on-a": "node-a", "on-b": "node-b"} {
		_, _, err := status.Update(ctx, name, rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, obj runtime.Object) (runtime.Object, error) {
			vmi := obj.(*virtualization.VirtualMachineInstance).DeepCopy()
			vmi.Status.SetPhase(virtualization.Scheduled, "", metav1.Now())
			vmi.Status.NodeName = node
			return vmi, nil
		}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	select {
	case ev := <-w.ResultChan():
		vmi := ev.Object.(*virtualization.VirtualMachineInstance)
		// Entering the selection is an ADDED event for this watcher.
		if ev.Type != watch.Added || vmi.Name != "on-a" {
			t.Errorf("first event = %s %s, want ADDED on-a", ev.Type, vmi.Name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the VMI of node-a within 10s")
	}
	select {
	case ev := <-w.ResultChan():
		t.Errorf("node-a's watch got an event it should not: %s %s", ev.Type, ev.Object.(*virtualization.VirtualMachineInstance).Name)
	case <-time.After(500 * time.Millisecond):
	}
}

func TestShortNamesAndCategories(t *testing.T) {
	storage, _ := newStorage(t)
	if got := storage.ShortNames(); len(got) != 2 || got[0] != "vmi" || got[1] != "vmis" {
		t.Errorf("short names = %v, want [vmi vmis]", got)
	}
	if got := storage.Categories(); len(got) != 2 || got[0] != "all" || got[1] != "virt" {
		t.Errorf("categories = %v, want [all virt]", got)
	}
}

func TestWatch(t *testing.T) {
	storage, _ := newStorage(t)
	genericTester(t, storage).TestWatch(validVMI("w"),
		[]labels.Set{{}},
		[]labels.Set{{"team": "b"}},
		[]fields.Set{{"metadata.name": "w"}, {NodeNameField: ""}},
		[]fields.Set{{"metadata.name": "other"}, {"status.phase": "Running"}, {NodeNameField: "node-a"}},
	)
}
