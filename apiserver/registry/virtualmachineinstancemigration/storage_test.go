package virtualmachineinstancemigration

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	genericapirequest "k8s.io/apiserver/pkg/endpoints/request"
	genericregistrytest "k8s.io/apiserver/pkg/registry/generic/testing"
	"k8s.io/apiserver/pkg/registry/rest"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/registry/registrytest"
)

const namespace = "test"

// vmiGetter serves VMIs from a map, as the VMI store would.
type vmiGetter map[string]*virtualization.VirtualMachineInstance

func (g vmiGetter) Get(_ context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	if vmi, ok := g[name]; ok {
		return vmi.DeepCopy(), nil
	}
	return nil, apierrors.NewNotFound(virtualization.Resource("virtualmachineinstances"), name)
}

func newStorage(t *testing.T, vmis rest.Getter) (*REST, *StatusREST) {
	t.Helper()
	scheme := registrytest.NewScheme()
	opts, _ := registrytest.NewRESTOptions(t, scheme, "virtualmachineinstancemigrations")
	m, status, err := NewREST(scheme, registrytest.OptionsGetter(opts), vmis)
	if err != nil {
		t.Fatalf("NewREST: %v", err)
	}
	t.Cleanup(m.Store.DestroyFunc)
	return m, status
}

// newPlainStorage checks migrations on their own: the generic tests create
// the same object several times, which the one-unfinished-migration rule
// would refuse.
func newPlainStorage(t *testing.T) *REST {
	t.Helper()
	m, _ := newStorage(t, nil)
	m.Store.CreateStrategy = NewStrategy(registrytest.NewScheme(), nil)
	return m
}

func validMigration(name, vmi string) *virtualization.VirtualMachineInstanceMigration {
	return &virtualization.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Spec:       virtualization.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
	}
}

func runningVMI(name string) *virtualization.VirtualMachineInstance {
	return &virtualization.VirtualMachineInstance{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace},
		Status:     virtualization.VirtualMachineInstanceStatus{Phase: virtualization.Running, NodeName: "node-a"},
	}
}

func TestCreate(t *testing.T) {
	storage := newPlainStorage(t)
	valid := validMigration("", "vm1")
	valid.ObjectMeta = metav1.ObjectMeta{}
	genericregistrytest.New(t, storage.Store).TestCreate(valid, validMigration("", ""), validMigration("", "Not_A_Name"))
}

func TestUpdate(t *testing.T) {
	storage := newPlainStorage(t)
	genericregistrytest.New(t, storage.Store).TestUpdate(validMigration("upd", "vm1"),
		func(obj runtime.Object) runtime.Object {
			m := obj.(*virtualization.VirtualMachineInstanceMigration)
			m.Annotations = map[string]string{"note": "x"}
			return m
		},
		func(obj runtime.Object) runtime.Object {
			m := obj.(*virtualization.VirtualMachineInstanceMigration)
			m.Spec.VMIName = "vm2"
			return m
		},
	)
}

func TestDelete(t *testing.T) {
	storage := newPlainStorage(t)
	genericregistrytest.New(t, storage.Store).ReturnDeletedObject().TestDelete(validMigration("del", "vm1"))
}

func TestGet(t *testing.T) {
	storage := newPlainStorage(t)
	genericregistrytest.New(t, storage.Store).TestGet(validMigration("get", "vm1"))
}

func TestList(t *testing.T) {
	storage := newPlainStorage(t)
	genericregistrytest.New(t, storage.Store).TestList(validMigration("list", "vm1"))
}

func TestWatch(t *testing.T) {
	storage := newPlainStorage(t)
	genericregistrytest.New(t, storage.Store).TestWatch(validMigration("w", "vm1"),
		[]labels.Set{{}},
		[]labels.Set{{"team": "b"}},
		[]fields.Set{{"metadata.name": "w", "spec.vmiName": "vm1"}},
		[]fields.Set{{"metadata.name": "other"}, {"metadata.name": "w", "spec.vmiName": "vm2"}},
	)
}

// TestCreateChecksTheVMI: a migration is refused with 422 at spec.vmiName
// unless its VMI can move now; the message says why.
func TestCreateChecksTheVMI(t *testing.T) {
	pending := runningVMI("pending")
	pending.Status.Phase, pending.Status.NodeName = virtualization.Pending, ""
	stuck := runningVMI("stuck")
	stuck.Status.Conditions = []virtualization.VirtualMachineInstanceCondition{{
		Type: virtualization.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
		Reason: virtv1.ReasonDisksNotMigratable, Message: "PVC data is not ReadWriteMany",
	}}
	deleting := runningVMI("deleting")
	deleting.DeletionTimestamp = &metav1.Time{}
	storage, _ := newStorage(t, vmiGetter{"ok": runningVMI("ok"), "pending": pending, "stuck": stuck, "deleting": deleting})
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)

	for _, tc := range []struct{ vmi, want string }{
		{"missing", `spec.vmiName: Not found: "missing"`},
		{"pending", "only a Running VMI can be migrated; this one is Pending"},
		{"stuck", "not live migratable (DisksNotLiveMigratable): PVC data is not ReadWriteMany"},
		{"deleting", "being deleted"},
	} {
		t.Run(tc.vmi, func(t *testing.T) {
			m := validMigration("", tc.vmi)
			m.GenerateName = virtv1.MigrationGenerateNamePrefix
			_, err := storage.Create(ctx, m, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
			if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.vmiName") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("create for VMI %s: %v; want 422 at spec.vmiName with %q", tc.vmi, err, tc.want)
			}
		})
	}

	m := validMigration("", "ok")
	m.GenerateName = virtv1.MigrationGenerateNamePrefix
	obj, err := storage.Create(ctx, m, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create for a Running VMI: %v", err)
	}
	first := obj.(*virtualization.VirtualMachineInstanceMigration)
	if first.Labels[virtv1.MigrationVMINameLabel] != "ok" {
		t.Errorf("labels = %v, want %s=ok", first.Labels, virtv1.MigrationVMINameLabel)
	}
	_, err = storage.Create(ctx, m, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), first.Name) {
		t.Fatalf("second migration of the same VMI: %v; want 422 naming %s", err, first.Name)
	}
}

// TestEndedMigrationAllowsAnother: only unfinished migrations block a new
// one.
func TestEndedMigrationAllowsAnother(t *testing.T) {
	storage, status := newStorage(t, vmiGetter{"ok": runningVMI("ok")})
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	if _, err := storage.Create(ctx, validMigration("one", "ok"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []virtualization.VirtualMachineInstanceMigrationPhase{virtualization.MigrationPending, virtualization.MigrationFailed} {
		update(t, ctx, status, "one", func(m *virtualization.VirtualMachineInstanceMigration) { m.Status.Phase = phase })
	}
	if _, err := storage.Create(ctx, validMigration("two", "ok"), rest.ValidateAllObjectFunc, &metav1.CreateOptions{}); err != nil {
		t.Fatalf("a migration after a Failed one: %v", err)
	}
	// A final phase stays final.
	_, _, err := status.Update(ctx, "one", updateInfo(func(m *virtualization.VirtualMachineInstanceMigration) {
		m.Status.Phase = virtualization.MigrationRunning
	}), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("Failed -> Running: %v, want 422", err)
	}
}

// TestStatusIsOnlyWrittenThroughStatus: the controller owns the status, the
// user the spec and metadata; neither overwrites the other's half.
func TestStatusIsOnlyWrittenThroughStatus(t *testing.T) {
	storage, status := newStorage(t, nil)
	ctx := genericapirequest.WithNamespace(genericapirequest.NewContext(), namespace)
	m := validMigration("st", "vm1")
	m.Status.Phase = virtualization.MigrationSucceeded // dropped on create
	obj, err := storage.Create(ctx, m, rest.ValidateAllObjectFunc, &metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.(*virtualization.VirtualMachineInstanceMigration).Status.Phase; got != "" {
		t.Errorf("phase after create = %q, want none", got)
	}
	got := update(t, ctx, storage, "st", func(m *virtualization.VirtualMachineInstanceMigration) {
		m.Finalizers = []string{virtv1.MigrationFinalizer}
		m.Status.Phase = virtualization.MigrationRunning // ignored by the main resource
	})
	if got.Status.Phase != "" || len(got.Finalizers) != 1 {
		t.Errorf("main write: phase %q, finalizers %v", got.Status.Phase, got.Finalizers)
	}
	got = update(t, ctx, status, "st", func(m *virtualization.VirtualMachineInstanceMigration) {
		m.Status.Phase = virtualization.MigrationPending
		m.Finalizers = nil // ignored by /status
	})
	if got.Status.Phase != virtualization.MigrationPending || len(got.Finalizers) != 1 {
		t.Errorf("status write: phase %q, finalizers %v", got.Status.Phase, got.Finalizers)
	}
}

func updateInfo(mutate func(*virtualization.VirtualMachineInstanceMigration)) rest.UpdatedObjectInfo {
	return rest.DefaultUpdatedObjectInfo(nil, func(_ context.Context, _, old runtime.Object) (runtime.Object, error) {
		m := old.(*virtualization.VirtualMachineInstanceMigration).DeepCopy()
		mutate(m)
		return m, nil
	})
}

func update(t *testing.T, ctx context.Context, r rest.Updater, name string, mutate func(*virtualization.VirtualMachineInstanceMigration)) *virtualization.VirtualMachineInstanceMigration {
	t.Helper()
	obj, _, err := r.Update(ctx, name, updateInfo(mutate), rest.ValidateAllObjectFunc, rest.ValidateAllObjectUpdateFunc, false, &metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*virtualization.VirtualMachineInstanceMigration)
}

func TestShortNamesAndCategories(t *testing.T) {
	storage := newPlainStorage(t)
	if got := storage.ShortNames(); len(got) != 2 || got[0] != "vmim" {
		t.Errorf("short names = %v, want [vmim vmims]", got)
	}
}
