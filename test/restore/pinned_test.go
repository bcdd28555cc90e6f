package restore

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// The pinned VM's size, and what its instancetype is edited to after the
// VM was pinned: the restored VM must start with the first.
var (
	pinnedCPU, pinnedMemory = uint32(1), resource.MustParse("192Mi")
	editedCPU, editedMemory = uint32(2), resource.MustParse("256Mi")
)

// pinnedVM is a stopped VM sized by a namespaced instancetype, pinned to
// revisions of it and of its preference, and the revisions' UIDs.
type pinnedVM struct {
	name      string
	revisions map[string]types.UID
}

// createPinned creates the VM, waits until virt-controller pinned it, and
// then edits the instancetype: from there on only the revision knows the
// size the VM must start with.
func createPinned(t *testing.T, c *framework.Cluster, ns string) pinnedVM {
	t.Helper()
	ctx := t.Context()
	v1 := c.Virt.VirtualizationV1()
	it, err := v1.VirtualMachineInstancetypes(ns).Create(ctx, &virtv1.VirtualMachineInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "restore-pinned"},
		Spec: virtv1.VirtualMachineInstancetypeSpec{
			CPU:    virtv1.CPUInstancetype{Guest: pinnedCPU},
			Memory: virtv1.MemoryInstancetype{Guest: pinnedMemory},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create instancetype: %v", err)
	}
	vm, err := c.ExampleVM("vm-instancetype.yaml")
	if err != nil {
		t.Fatal(err)
	}
	vm.Name = "vm-pinned"
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	vm.Spec.Instancetype = &virtv1.InstancetypeMatcher{Kind: virtv1.InstancetypeKind, Name: it.Name}
	vm.Spec.Template.ObjectMeta.Labels = map[string]string{"app": vm.Name}
	if _, err := v1.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create VM %s: %v", vm.Name, err)
	}
	var pinned *virtv1.VirtualMachine
	err = framework.WaitFor(ctx, time.Minute, "VM "+vm.Name+" pinned to revisions", func(ctx context.Context) (bool, error) {
		got, err := v1.VirtualMachines(ns).Get(ctx, vm.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		pinned = got
		return got.Spec.Instancetype.RevisionName != "" && got.Spec.Preference.RevisionName != "", nil
	})
	if err != nil {
		t.Fatal(err)
	}
	p := pinnedVM{name: vm.Name, revisions: map[string]types.UID{}}
	for _, name := range []string{pinned.Spec.Instancetype.RevisionName, pinned.Spec.Preference.RevisionName} {
		r, err := v1.VirtualMachineInstancetypeRevisions(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %s: %v", name, err)
		}
		p.revisions[name] = r.UID
	}
	it.Spec.CPU.Guest, it.Spec.Memory.Guest = editedCPU, editedMemory
	if _, err := v1.VirtualMachineInstancetypes(ns).Update(ctx, it, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("edit instancetype: %v", err)
	}
	t.Logf("VM %s pinned to %v; its instancetype edited to %d vCPUs and %s", vm.Name, p.revisions, editedCPU, editedMemory.String())
	return p
}

// checkPinned: after the restore the VM's revisions are back, as they were,
// and the VM, started, runs a guest of the pinned size, not the edited
// instancetype's.
func checkPinned(t *testing.T, c *framework.Cluster, ns string, p pinnedVM) {
	t.Helper()
	ctx := t.Context()
	v1 := c.Virt.VirtualizationV1()
	vm, err := v1.VirtualMachines(ns).Get(ctx, p.name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("restored VM %s: %v", p.name, err)
	}
	for name, uid := range p.revisions {
		r, err := v1.VirtualMachineInstancetypeRevisions(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("revision %s after the restore: %v", name, err)
		}
		if r.UID != uid || !metav1.IsControlledBy(r, vm) {
			t.Errorf("revision %s is back with UID %s owned by %v, want UID %s owned by VM %s", name, r.UID, r.OwnerReferences, uid, vm.UID)
		}
	}
	it, err := v1.VirtualMachineInstancetypes(ns).Get(ctx, vm.Spec.Instancetype.Name, metav1.GetOptions{})
	if err != nil || it.Spec.CPU.Guest != editedCPU {
		t.Fatalf("the restored instancetype: %v, %+v; want the edited one", err, it)
	}

	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyAlways)
	if _, err := v1.VirtualMachines(ns).Update(ctx, vm, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("start the restored VM %s: %v", p.name, err)
	}
	vmi, err := c.WaitVMIRunning(ctx, ns, p.name)
	if err != nil {
		t.Fatalf("the restored pinned VM %s does not start: %v", p.name, err)
	}
	if cpu := vmi.Spec.Domain.CPU; cpu == nil || cpu.Sockets*cpu.Cores*cpu.Threads != pinnedCPU {
		t.Errorf("the instance's cpu %+v, want the pinned %d vCPU", cpu, pinnedCPU)
	}
	if m := vmi.Spec.Domain.Memory; m == nil || m.Guest == nil || m.Guest.Cmp(pinnedMemory) != 0 {
		t.Errorf("the instance's memory %+v, want the pinned %s, not the edited %s", m, pinnedMemory.String(), editedMemory.String())
	}
	pod, err := c.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	d, err := c.LiveDomain(ctx, pod, vmi)
	if err != nil {
		t.Fatal(err)
	}
	bytes, err := framework.DomainMemoryBytes(d)
	if err != nil {
		t.Fatal(err)
	}
	if d.VCPU == nil || d.VCPU.Value != uint(pinnedCPU) || bytes != uint64(pinnedMemory.Value()) {
		t.Errorf("the libvirt domain has vcpu %+v and %d bytes, want %d and %d", d.VCPU, bytes, pinnedCPU, pinnedMemory.Value())
	}
	t.Logf("restored pinned VM %s runs with %d vCPU and %d MiB, as its revision says", p.name, d.VCPU.Value, bytes>>20)
}
