package apiserver

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	typedv1 "kubevirt.dev/virt/generated/clientset/versioned/typed/virtualization/v1"
)

// writeVMIStatus reads the VMI name as admin, changes it and writes its
// status as c.
func writeVMIStatus(t *testing.T, admin, c typedv1.VirtualizationV1Interface, name string, change func(*virtv1.VirtualMachineInstance)) error {
	t.Helper()
	vmi, err := admin.VirtualMachineInstances(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	change(vmi)
	_, err = c.VirtualMachineInstances(ns).UpdateStatus(t.Context(), vmi, metav1.UpdateOptions{})
	return err
}

// runOnNode creates the VMI name and moves it, as controller and then as
// the handler of node, to Running there.
func runOnNode(t *testing.T, admin, controller, handler typedv1.VirtualizationV1Interface, name, node string) {
	t.Helper()
	if _, err := admin.VirtualMachineInstances(ns).Create(t.Context(), tinyVMI(name), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()
	for _, step := range []struct {
		c      typedv1.VirtualizationV1Interface
		change func(*virtv1.VirtualMachineInstance)
	}{
		{controller, func(v *virtv1.VirtualMachineInstance) {
			v.Status.SetPhase(virtv1.Scheduling, "", now)
			v.Status.ActivePods = map[types.UID]string{"pod-" + types.UID(name): ""}
		}},
		{controller, func(v *virtv1.VirtualMachineInstance) {
			v.Status.SetPhase(virtv1.Scheduled, "", now)
			v.Status.NodeName = node
			v.Status.ActivePods = map[types.UID]string{"pod-" + types.UID(name): node}
		}},
		{handler, func(v *virtv1.VirtualMachineInstance) { v.Status.SetPhase(virtv1.Running, "", now) }},
	} {
		if err := writeVMIStatus(t, admin, step.c, name, step.change); err != nil {
			t.Fatalf("bring %s to Running: %v", name, err)
		}
	}
}

func newMigration(vmi string) *virtv1.VirtualMachineInstanceMigration {
	return &virtv1.VirtualMachineInstanceMigration{
		ObjectMeta: metav1.ObjectMeta{GenerateName: virtv1.MigrationGenerateNamePrefix, Namespace: ns},
		Spec:       virtv1.VirtualMachineInstanceMigrationSpec{VMIName: vmi},
	}
}

// TestMigrationValidation: the real server refuses a migration its VMI
// cannot take now with a 422 at spec.vmiName that says why, keeps the spec
// and a final phase as they are, and selects VMIs by their migration's
// target node.
func TestMigrationValidation(t *testing.T) {
	_, c := start(t)
	admin := c.VirtualizationV1()
	ctx := t.Context()
	invalid := func(what string, err error, want string) {
		t.Helper()
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want 422 with %q", what, err, want)
		}
	}
	_, err := admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("missing"), metav1.CreateOptions{})
	invalid("a migration of a missing VMI", err, `spec.vmiName: Not found: "missing"`)
	_, err = admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration(""), metav1.CreateOptions{})
	invalid("a migration without spec.vmiName", err, "spec.vmiName: Required value")

	if _, err := admin.VirtualMachineInstances(ns).Create(ctx, tinyVMI("pending"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("pending"), metav1.CreateOptions{})
	invalid("a migration of a Pending VMI", err, "only a Running VMI can be migrated")

	runOnNode(t, admin, admin, admin, "vm1", "node-a")
	first, err := admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("vm1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a migration of a Running VMI: %v", err)
	}
	if !strings.HasPrefix(first.Name, virtv1.MigrationGenerateNamePrefix) || first.Labels[virtv1.MigrationVMINameLabel] != "vm1" {
		t.Errorf("created %s with labels %v", first.Name, first.Labels)
	}
	_, err = admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("vm1"), metav1.CreateOptions{})
	invalid("a second migration of the VMI", err, first.Name)

	changed := first.DeepCopy()
	changed.Spec.VMIName = "other"
	_, err = admin.VirtualMachineInstanceMigrations(ns).Update(ctx, changed, metav1.UpdateOptions{})
	invalid("changing spec.vmiName", err, "spec.vmiName")

	now := metav1.Now()
	first.Status.SetPhase(virtv1.MigrationFailed, now)
	failed, err := admin.VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, first, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("failing the migration: %v", err)
	}
	failed.Status.SetPhase(virtv1.MigrationRunning, now)
	_, err = admin.VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, failed, metav1.UpdateOptions{})
	invalid("a Failed migration running again", err, "status.phase")
	if _, err := admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("vm1"), metav1.CreateOptions{}); err != nil {
		t.Errorf("a migration after a Failed one: %v", err)
	}

	runOnNode(t, admin, admin, admin, "stuck", "node-a")
	if err := writeVMIStatus(t, admin, admin, "stuck", func(v *virtv1.VirtualMachineInstance) {
		v.Status.SetCondition(virtv1.VirtualMachineInstanceCondition{Type: virtv1.VirtualMachineInstanceIsMigratable, Status: corev1.ConditionFalse,
			Reason: virtv1.ReasonDisksNotMigratable, Message: "volume data: PVC data is not ReadWriteMany"}, now)
	}); err != nil {
		t.Fatal(err)
	}
	_, err = admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("stuck"), metav1.CreateOptions{})
	invalid("a migration of an unmigratable VMI", err, "(DisksNotLiveMigratable): volume data: PVC data is not ReadWriteMany")

	if err := writeVMIStatus(t, admin, admin, "vm1", func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: "m", SourceNode: "node-a", TargetNode: "node-b"}
	}); err != nil {
		t.Fatal(err)
	}
	list, err := admin.VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{FieldSelector: "status.migrationState.targetNode=node-b"})
	if err != nil {
		t.Fatalf("list by target node: %v", err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "vm1" {
		t.Errorf("VMIs migrating to node-b: %d, want vm1 only", len(list.Items))
	}
	ms, err := admin.VirtualMachineInstanceMigrations(ns).List(ctx, metav1.ListOptions{FieldSelector: "spec.vmiName=stuck"})
	if err != nil || len(ms.Items) != 0 {
		t.Errorf("migrations of stuck: %v, %v", ms, err)
	}
}

// TestMigrationOwnership: with the real identities (virt-controller's and
// the handlers' service accounts as the aggregator vouches for them), each
// end of a migration and the controller write their own part of the VMI's
// migrationState; only the target's handler moves the VMI, to itself, in
// the write that completes the migration; a migration's status is the
// controller's.
func TestMigrationOwnership(t *testing.T) {
	proxy := testserver.NewFrontProxy(t)
	server := testserver.Start(t, t.TempDir(), testserver.WithFrontProxy(proxy))
	ctx := t.Context()
	sa := []string{"system:serviceaccounts", "system:serviceaccounts:virt-system", "system:authenticated"}
	as := func(name string, extra map[string][]string) virtclient.Interface {
		return newClient(t, proxy.As(server, name, sa, extra))
	}
	admin := newClient(t, proxy.As(server, "admin", []string{"system:masters"}, nil)).VirtualizationV1()
	controller := as("system:serviceaccount:virt-system:virt-controller", nil).VirtualizationV1()
	handlerOf := func(node string) typedv1.VirtualizationV1Interface {
		return as("system:serviceaccount:virt-system:virt-handler", map[string][]string{noderestriction.NodeNameExtra: {node}}).VirtualizationV1()
	}
	nodeA, nodeB := handlerOf("node-a"), handlerOf("node-b")
	allowed := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	refused := func(what string, err error, field string) {
		t.Helper()
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), field+":") {
			t.Errorf("%s: err = %v, want 403 naming %s", what, err, field)
		}
	}
	write := func(c typedv1.VirtualizationV1Interface, change func(*virtv1.VirtualMachineInstance)) error {
		return writeVMIStatus(t, admin, c, "vm1", change)
	}
	runOnNode(t, admin, controller, nodeA, "vm1", "node-a")
	m, err := admin.VirtualMachineInstanceMigrations(ns).Create(ctx, newMigration("vm1"), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	now := metav1.Now()

	refused("the source handler starting the migration's bookkeeping", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: m.UID, TargetNode: "node-b"}
	}), "status.migrationState.migrationUid")
	allowed("the controller hands the target to node B", write(controller, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState = &virtv1.VirtualMachineInstanceMigrationState{MigrationUID: m.UID,
			SourceNode: "node-a", SourcePod: "pod-a", TargetNode: "node-b", TargetPod: "pod-b"}
		v.Status.ActivePods["pod-b-uid"] = "node-b"
	}))
	refused("the source handler saying the target is ready", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState.TargetNodeAddress = "198.18.0.12"
	}), "status.migrationState.targetNodeAddress")
	allowed("the target handler says it is ready", write(nodeB, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState.TargetNodeAddress = "198.18.0.12"
		v.Status.MigrationState.TargetDirectMigrationNodePorts = map[string]int32{"40001": 0, "40002": 49152}
	}))
	refused("the target handler starting the migration", write(nodeB, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState.StartTimestamp = &now
	}), "status.migrationState.startTimestamp")
	refused("the target handler writing the guest's interfaces before the switch-over", write(nodeB, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default"}}
	}), "status.interfaces")
	allowed("the source handler starts the migration", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.MigrationState.StartTimestamp = &now
		v.Status.MigrationState.Mode = virtv1.MigrationPreCopy
	}))
	complete := func(v *virtv1.VirtualMachineInstance) {
		s := v.Status.MigrationState
		s.Completed, s.EndTimestamp, s.TargetNodeDomainDetected, s.TargetNodeDomainReadyTimestamp, s.DowntimeMilliseconds = true, &now, true, &now, 180
		v.Status.NodeName = "node-b"
	}
	refused("the source handler completing the migration", write(nodeA, complete), "status.migrationState.completed")
	refused("the controller completing the migration", write(controller, complete), "status.migrationState.completed")
	allowed("the target handler completes the migration and switches over", write(nodeB, complete))
	allowed("node B's handler writes its VMI's interfaces", write(nodeB, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Interfaces = []virtv1.VirtualMachineInstanceNetworkInterface{{Name: "default", IPAddress: "198.18.0.10"}}
	}))
	refused("node A's handler after the switch-over", write(nodeA, func(v *virtv1.VirtualMachineInstance) {
		v.Status.Interfaces = nil
	}), "status.interfaces")
	got, err := admin.VirtualMachineInstances(ns).Get(ctx, "vm1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.NodeName != "node-b" || got.Status.MigrationState.DowntimeMilliseconds != 180 {
		t.Errorf("after the switch-over: node %s, downtime %d", got.Status.NodeName, got.Status.MigrationState.DowntimeMilliseconds)
	}

	// The migration's status and finalizer are the controller's.
	m.Status.SetPhase(virtv1.MigrationPending, now)
	_, err = nodeB.VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, m, metav1.UpdateOptions{})
	refused("a handler writing a migration's status", err, "status")
	m, err = controller.VirtualMachineInstanceMigrations(ns).UpdateStatus(ctx, m, metav1.UpdateOptions{})
	allowed("the controller writes the migration's status", err)
	m.Finalizers = []string{virtv1.MigrationFinalizer}
	m, err = controller.VirtualMachineInstanceMigrations(ns).Update(ctx, m, metav1.UpdateOptions{})
	allowed("the controller adds its finalizer", err)
	m.Labels["evil"] = "yes"
	_, err = controller.VirtualMachineInstanceMigrations(ns).Update(ctx, m, metav1.UpdateOptions{})
	refused("the controller relabelling a migration", err, "metadata.labels")
}

// TestMigrateSubresources: PUT virtualmachineinstances/NAME/migrate and
// virtualmachines/NAME/migrate create a migration of the instance, checked
// like any other.
func TestMigrateSubresources(t *testing.T) {
	_, c := start(t)
	admin := c.VirtualizationV1()
	ctx := t.Context()
	runOnNode(t, admin, admin, admin, "vm1", "node-a")
	m, err := admin.VirtualMachineInstances(ns).Migrate(ctx, "vm1", &virtv1.MigrateOptions{}, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("migrate the VMI: %v", err)
	}
	if !strings.HasPrefix(m.Name, virtv1.MigrationGenerateNamePrefix) || m.Spec.VMIName != "vm1" {
		t.Errorf("created %s for %s", m.Name, m.Spec.VMIName)
	}
	if _, err := admin.VirtualMachineInstanceMigrations(ns).Get(ctx, m.Name, metav1.GetOptions{}); err != nil {
		t.Errorf("the created migration: %v", err)
	}
	_, err = admin.VirtualMachineInstances(ns).Migrate(ctx, "vm1", &virtv1.MigrateOptions{}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), m.Name) {
		t.Errorf("migrate again: %v, want 422 naming %s", err, m.Name)
	}
	_, err = admin.VirtualMachineInstances(ns).Migrate(ctx, "missing", &virtv1.MigrateOptions{}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("migrate a missing VMI: %v, want 422", err)
	}
	_, err = admin.VirtualMachines(ns).Migrate(ctx, "missing", &virtv1.MigrateOptions{}, metav1.UpdateOptions{})
	if !apierrors.IsNotFound(err) {
		t.Errorf("migrate a missing VM: %v, want 404", err)
	}
	_, err = admin.VirtualMachineInstances(ns).Migrate(ctx, "vm1", &virtv1.MigrateOptions{DryRun: []string{"Some"}}, metav1.UpdateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("dryRun Some: %v, want 422", err)
	}
}
