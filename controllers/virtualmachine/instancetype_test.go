package virtualmachine

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/instancetype"
)

func clusterInstancetype(mem string, generation int64) *virtv1.VirtualMachineClusterInstancetype {
	return &virtv1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small", UID: "it-uid", Generation: generation, ResourceVersion: "1"},
		Spec: virtv1.VirtualMachineInstancetypeSpec{
			CPU:    virtv1.CPUInstancetype{Guest: 2},
			Memory: virtv1.MemoryInstancetype{Guest: resource.MustParse(mem)},
		},
	}
}

func namespacedPreference() *virtv1.VirtualMachinePreference {
	return &virtv1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: "ns", UID: "pref-uid", Generation: 1},
		Spec: virtv1.VirtualMachinePreferenceSpec{
			CPU:     &virtv1.CPUPreferences{PreferredCPUTopology: ptr.To(virtv1.PreferCores)},
			Machine: &virtv1.MachinePreferences{PreferredMachineType: "pc-q35-9.2"},
		},
	}
}

func sized(vm *virtv1.VirtualMachine) {
	vm.Spec.Instancetype = &virtv1.InstancetypeMatcher{Name: "u1.small"}
	vm.Spec.Preference = &virtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}
}

// add puts objects into the controller's caches of the four kinds.
func (f *fixture) add(objs ...runtime.Object) {
	f.t.Helper()
	v1 := f.factory.Virtualization().V1()
	for _, obj := range objs {
		var err error
		switch o := obj.(type) {
		case *virtv1.VirtualMachineClusterInstancetype:
			err = v1.VirtualMachineClusterInstancetypes().Informer().GetIndexer().Update(o)
		case *virtv1.VirtualMachineInstancetype:
			err = v1.VirtualMachineInstancetypes().Informer().GetIndexer().Update(o)
		case *virtv1.VirtualMachinePreference:
			err = v1.VirtualMachinePreferences().Informer().GetIndexer().Update(o)
		case *virtv1.VirtualMachineClusterPreference:
			err = v1.VirtualMachineClusterPreferences().Informer().GetIndexer().Update(o)
		}
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// observe puts the VM as the API has it now into the controller's cache,
// as the informer would.
func (f *fixture) observe() *virtv1.VirtualMachine {
	f.t.Helper()
	vm := f.vm()
	if err := f.vms.Update(vm); err != nil {
		f.t.Fatal(err)
	}
	return vm
}

func (f *fixture) revisions() []virtv1.VirtualMachineInstancetypeRevision {
	f.t.Helper()
	list, err := f.virt.VirtualizationV1().VirtualMachineInstancetypeRevisions("ns").List(f.t.Context(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return list.Items
}

// TestRevisionKeepsTheInstanceSize: the first sync pins the VM to copies of
// its instancetype and preference; an edit of the instancetype afterwards
// changes none of the VM's instances.
func TestRevisionKeepsTheInstanceSize(t *testing.T) {
	f := newFixture(t, newVM(virtv1.RunStrategyAlways, sized), nil)
	f.add(clusterInstancetype("2Gi", 1), namespacedPreference())

	if err := f.sync(f.vm()); err != nil {
		t.Fatalf("first sync: %v", err)
	}
	if f.vmi() != nil {
		t.Fatal("an instance was created before the VM was pinned")
	}
	vm := f.observe()
	if vm.Spec.Instancetype.RevisionName != "vm1-u1.small-it-uid-1" || vm.Spec.Preference.RevisionName != "vm1-fedora-pref-uid-1" {
		t.Fatalf("revision names %q, %q", vm.Spec.Instancetype.RevisionName, vm.Spec.Preference.RevisionName)
	}
	revs := f.revisions()
	if len(revs) != 2 {
		t.Fatalf("%d revisions, want 2", len(revs))
	}
	for _, r := range revs {
		if !metav1.IsControlledBy(&r, vm) {
			t.Errorf("revision %s not controlled by the VM: it would outlive it", r.Name)
		}
	}

	// The instancetype grows after the capture.
	f.add(clusterInstancetype("8Gi", 2))
	if err := f.sync(vm); err != nil {
		t.Fatalf("second sync: %v", err)
	}
	vmi := f.vmi()
	if vmi == nil {
		t.Fatal("no instance created")
	}
	d := vmi.Spec.Domain
	if d.Memory == nil || d.Memory.Guest.String() != "2Gi" {
		t.Errorf("instance memory %v, want the captured 2Gi, not the edited 8Gi", d.Memory)
	}
	if d.CPU == nil || d.CPU.Cores != 2 || d.CPU.Sockets != 1 || d.Machine == nil || d.Machine.Type != "pc-q35-9.2" {
		t.Errorf("instance cpu %+v machine %+v, want 2 cores (preferred) and pc-q35-9.2", d.CPU, d.Machine)
	}
	if vmi.Annotations[virtv1.ClusterInstancetypeAnnotation] != "u1.small" || vmi.Annotations[virtv1.PreferenceAnnotation] != "fedora" {
		t.Errorf("instance annotations %v", vmi.Annotations)
	}
	status := f.vm().Status
	if r := status.InstancetypeRef; r == nil || r.Kind != virtv1.ClusterInstancetypeKind || r.ControllerRevisionRef == nil ||
		r.ControllerRevisionRef.Name != vm.Spec.Instancetype.RevisionName {
		t.Errorf("status.instancetypeRef %+v", r)
	}
}

// TestMissingInstancetype: a VM whose instancetype does not exist (yet)
// gets no instance, says why, and goes on once it appears.
func TestMissingInstancetype(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways, sized)
	vm.Spec.Preference = nil
	f := newFixture(t, vm, nil)
	err := f.sync(vm)
	if err == nil || !strings.Contains(err.Error(), "u1.small") {
		t.Fatalf("sync: %v, want an error naming the instancetype", err)
	}
	if f.vmi() != nil || len(f.revisions()) != 0 {
		t.Error("instance or revision created without an instancetype")
	}
	c := f.vm().Status.Condition(virtv1.VirtualMachineFailure)
	if c == nil || c.Status != corev1.ConditionTrue || c.Reason != ReasonInstancetypeError {
		t.Fatalf("Failure condition %+v", c)
	}

	f.add(clusterInstancetype("2Gi", 1))
	if err := f.sync(f.observe()); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(f.observe()); err != nil {
		t.Fatal(err)
	}
	if f.vmi() == nil {
		t.Error("no instance once the instancetype exists")
	}
	if c := f.vm().Status.Condition(virtv1.VirtualMachineFailure); c != nil {
		t.Errorf("Failure condition kept: %+v", c)
	}
}

// TestConflictIsNotCaptured: a template that conflicts with the
// instancetype as it is now is not pinned to it.
func TestConflictIsNotCaptured(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways, sized, func(vm *virtv1.VirtualMachine) {
		vm.Spec.Preference = nil
		vm.Spec.Template.Spec.Domain.CPU = &virtv1.CPU{Sockets: 4}
	})
	f := newFixture(t, vm, nil)
	f.add(clusterInstancetype("2Gi", 1))
	err := f.sync(vm)
	if err == nil || !strings.Contains(err.Error(), "spec.template.spec.domain.cpu.sockets") {
		t.Fatalf("sync: %v, want the conflicting field", err)
	}
	if len(f.revisions()) != 0 || f.vm().Spec.Instancetype.RevisionName != "" {
		t.Error("conflicting VM pinned")
	}
}

// TestForeignRevision: a revision of the expected name with another
// content is never adopted.
func TestForeignRevision(t *testing.T) {
	vm := newVM(virtv1.RunStrategyHalted, sized)
	vm.Spec.Preference = nil
	f := newFixture(t, vm, nil)
	f.add(clusterInstancetype("2Gi", 1))
	foreign := &virtv1.VirtualMachineInstancetypeRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "vm1-u1.small-it-uid-1", Namespace: "ns"},
		Data: runtime.RawExtension{Raw: []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineClusterInstancetype",` +
			`"metadata":{"name":"u1.small"},"spec":{"cpu":{"guest":64},"memory":{"guest":"256Gi"}}}`)},
	}
	if _, err := f.virt.VirtualizationV1().VirtualMachineInstancetypeRevisions("ns").Create(t.Context(), foreign, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(vm); err == nil || !strings.Contains(err.Error(), "does not hold this VM's copy") {
		t.Fatalf("sync: %v", err)
	}
	if f.vm().Spec.Instancetype.RevisionName != "" {
		t.Error("VM pinned to a foreign revision")
	}
}

// TestRevisionOutlivesItsObject: a VM pinned to a revision is created
// from the revision alone, with the instancetype deleted (or, after a
// restore, never recreated): the store that holds the VM holds its size.
func TestRevisionOutlivesItsObject(t *testing.T) {
	vm := newVM(virtv1.RunStrategyAlways, sized)
	vm.Spec.Preference = nil
	rev, err := instancetype.NewRevision(vm, clusterInstancetype("3Gi", 4))
	if err != nil {
		t.Fatal(err)
	}
	vm.Spec.Instancetype.RevisionName = rev.Name
	f := newFixture(t, vm, nil)
	if _, err := f.virt.VirtualizationV1().VirtualMachineInstancetypeRevisions("ns").Create(t.Context(), rev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.sync(vm); err != nil {
		t.Fatalf("sync: %v", err)
	}
	vmi := f.vmi()
	if vmi == nil {
		t.Fatal("no instance from the revision")
	}
	if d := vmi.Spec.Domain; d.Memory == nil || d.Memory.Guest.String() != "3Gi" {
		t.Errorf("instance memory %v, want the revision's 3Gi", d.Memory)
	}
	if len(f.revisions()) != 1 {
		t.Errorf("revisions %d, want the one it was pinned to", len(f.revisions()))
	}
}
