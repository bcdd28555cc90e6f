package apiserver

import (
	"context"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// u1Small is KubeVirt's common u1.small: one vCPU, 2Gi.
func u1Small() *virtv1.VirtualMachineClusterInstancetype {
	return &virtv1.VirtualMachineClusterInstancetype{
		ObjectMeta: metav1.ObjectMeta{Name: "u1.small"},
		Spec: virtv1.VirtualMachineInstancetypeSpec{
			CPU:    virtv1.CPUInstancetype{Guest: 1},
			Memory: virtv1.MemoryInstancetype{Guest: resource.MustParse("2Gi")},
		},
	}
}

// sizedVM is vmFor's VM without a size of its own, taking it from the
// cluster instancetype u1.small and the preference fedora in ns.
func sizedVM(name string) *virtv1.VirtualMachine {
	vm := vmFor(name)
	vm.Spec.RunStrategy = ptr.To(virtv1.RunStrategyHalted)
	vm.Spec.Template.Spec.Domain.Resources = virtv1.ResourceRequirements{}
	vm.Spec.Instancetype = &virtv1.InstancetypeMatcher{Name: "u1.small"}
	vm.Spec.Preference = &virtv1.PreferenceMatcher{Name: "fedora", Kind: "VirtualMachinePreference"}
	return vm
}

func expandSpec(ctx context.Context, client virtclient.Interface, name string) (*virtv1.VirtualMachine, error) {
	out := &virtv1.VirtualMachine{}
	err := client.VirtualizationV1().RESTClient().Get().Namespace(ns).Resource("virtualmachines").
		Name(name).SubResource("expand-spec").Do(ctx).Into(out)
	return out, err
}

// TestInstancetypes: instancetypes and preferences are served like any
// resource, a VM referencing them is stored as written and expanded on
// GET expand-spec, and what conflicts or cannot be resolved is a 422 at
// the field that is wrong.
func TestInstancetypes(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	v1 := client.VirtualizationV1()

	if _, err := v1.VirtualMachineClusterInstancetypes().Create(ctx, u1Small(), metav1.CreateOptions{}); err != nil {
		t.Fatalf("create cluster instancetype: %v", err)
	}
	pref := &virtv1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: ns},
		Spec: virtv1.VirtualMachinePreferenceSpec{
			Devices:  &virtv1.DevicePreferences{PreferredDiskBus: virtv1.DiskBusSATA, PreferredInterfaceModel: "e1000"},
			Machine:  &virtv1.MachinePreferences{PreferredMachineType: "pc-q35-9.2"},
			Clock:    &virtv1.ClockPreferences{PreferredClockOffset: &virtv1.ClockOffset{UTC: &virtv1.ClockOffsetUTC{}}},
			Features: &virtv1.FeaturePreferences{PreferredSmm: &virtv1.FeatureState{}},
		},
	}
	if _, err := v1.VirtualMachinePreferences(ns).Create(ctx, pref, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create preference: %v", err)
	}

	created, err := v1.VirtualMachines(ns).Create(ctx, sizedVM("sized"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create VM with instancetype and preference: %v", err)
	}
	// Stored as written: a defaulted template would already say one vCPU
	// and q35, leaving nothing for the instancetype and preference.
	if d := created.Spec.Template.Spec.Domain; d.CPU != nil || d.Machine != nil || d.Memory != nil {
		t.Errorf("template defaulted on create: cpu %+v machine %+v memory %+v", d.CPU, d.Machine, d.Memory)
	}

	expanded, err := expandSpec(ctx, client, "sized")
	if err != nil {
		t.Fatalf("GET expand-spec: %v", err)
	}
	d := expanded.Spec.Template.Spec.Domain
	if expanded.Spec.Instancetype != nil || expanded.Spec.Preference != nil {
		t.Error("expand-spec kept the references")
	}
	if d.CPU == nil || d.CPU.Sockets*d.CPU.Cores*d.CPU.Threads != 1 || d.Memory == nil || d.Memory.Guest.String() != "2Gi" {
		t.Errorf("expanded size: cpu %+v memory %+v, want u1.small's 1 vCPU and 2Gi", d.CPU, d.Memory)
	}
	if d.Machine == nil || d.Machine.Type != "pc-q35-9.2" {
		t.Errorf("machine %+v, want the preferred pc-q35-9.2", d.Machine)
	}
	if len(d.Devices.Interfaces) != 1 || d.Devices.Interfaces[0].Model != "e1000" {
		t.Errorf("interfaces %+v, want the default pod NIC with the preferred e1000", d.Devices.Interfaces)
	}
	if d.Clock == nil || d.Clock.UTC == nil || d.Features == nil || d.Features.SMM == nil {
		t.Errorf("clock %+v features %+v, want the preferred UTC clock and SMM", d.Clock, d.Features)
	}
	if expanded.Spec.Template.Spec.TerminationGracePeriodSeconds == nil {
		t.Error("expanded template not defaulted (terminationGracePeriodSeconds)")
	}
	if expanded.Name != "sized" || expanded.UID != created.UID {
		t.Errorf("expand-spec answered %s (%s), want the VM", expanded.Name, expanded.UID)
	}

	// An edit of the instancetype shows in the next expansion of a VM
	// that captured no revision (no VM controller runs here).
	it, err := v1.VirtualMachineClusterInstancetypes().Get(ctx, "u1.small", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	it.Spec.Memory.Guest = resource.MustParse("3Gi")
	it.Spec.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyShared)
	if it, err = v1.VirtualMachineClusterInstancetypes().Update(ctx, it, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update instancetype: %v", err)
	}
	if it.Generation != 2 {
		t.Errorf("instancetype generation %d after a spec change, want 2 (revisions record it)", it.Generation)
	}
	if expanded, err = expandSpec(ctx, client, "sized"); err != nil || expanded.Spec.Template.Spec.Domain.Memory.Guest.String() != "3Gi" {
		t.Errorf("expand-spec after the edit: %v, %v", err, expanded.Spec.Template.Spec.Domain.Memory)
	} else if p := expanded.Spec.Template.Spec.Domain.IOThreadsPolicy; p == nil || *p != virtv1.IOThreadsPolicyShared {
		t.Errorf("ioThreadsPolicy %v after the edit, want the instancetype's shared", p)
	}

	// A revision that does not exist is refused, not ignored.
	withRevision := sizedVM("pinned")
	withRevision.Spec.Instancetype.RevisionName = "pinned-u1.small-1"
	expect422(t, func() error {
		_, err := v1.VirtualMachines(ns).Create(ctx, withRevision, metav1.CreateOptions{})
		return err
	}, "spec.instancetype.revisionName")

	// A plain VM is answered as stored.
	if _, err := v1.VirtualMachines(ns).Create(ctx, vmFor("plain"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if plain, err := expandSpec(ctx, client, "plain"); err != nil || plain.Spec.Template.Spec.Domain.CPU == nil {
		t.Errorf("expand-spec of a VM without references: %v %+v", err, plain)
	}
	if _, err := expandSpec(ctx, client, "absent"); !apierrors.IsNotFound(err) {
		t.Errorf("expand-spec of a missing VM: %v, want 404", err)
	}
}

// TestInstancetypeRevisions: the revisions VMs are pinned to are served
// and stored by this server (a standalone one, no kube-apiserver behind
// it): a KubeVirt ControllerRevision moves over by changing its apiVersion
// and kind, a VM naming it is validated and expanded with it, what it
// holds is validated once when it is created and never changes after.
func TestInstancetypeRevisions(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	v1 := client.VirtualizationV1()
	revisions := v1.VirtualMachineInstancetypeRevisions(ns)
	if _, err := v1.VirtualMachineClusterInstancetypes().Create(ctx, u1Small(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := v1.VirtualMachinePreferences(ns).Create(ctx, &virtv1.VirtualMachinePreference{
		ObjectMeta: metav1.ObjectMeta{Name: "fedora", Namespace: ns},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// What KubeVirt wrote into a ControllerRevision: u1.small when it had
	// 1Gi, in KubeVirt's group, with KubeVirt's metadata.
	kubevirt := &virtv1.VirtualMachineInstancetypeRevision{
		ObjectMeta: metav1.ObjectMeta{Name: "vm-u1.small-old-1"},
		Data: runtime.RawExtension{Raw: []byte(`{"apiVersion":"instancetype.kubevirt.io/v1beta1","kind":"VirtualMachineClusterInstancetype",` +
			`"metadata":{"name":"u1.small","uid":"old","generation":1,"annotations":{"instancetype.kubevirt.io/description":"x"}},` +
			`"spec":{"cpu":{"guest":1},"memory":{"guest":"1Gi"}}}`)},
		Revision: 1,
	}
	created, err := revisions.Create(ctx, kubevirt, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create a KubeVirt revision: %v", err)
	}
	pinned := sizedVM("pinned")
	pinned.Spec.Instancetype.RevisionName = created.Name
	if _, err := v1.VirtualMachines(ns).Create(ctx, pinned, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create a VM pinned to it: %v", err)
	}
	if expanded, err := expandSpec(ctx, client, "pinned"); err != nil || expanded.Spec.Template.Spec.Domain.Memory.Guest.String() != "1Gi" {
		t.Errorf("expand-spec of the pinned VM: %v, memory %v, want the revision's 1Gi", err, expanded.Spec.Template.Spec.Domain.Memory)
	}

	// Immutable: the copy cannot be edited; labels can (the generated
	// client has neither verb: nothing of the platform updates a revision).
	rest := v1.RESTClient()
	created.Data.Raw = []byte(`{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineClusterInstancetype",` +
		`"metadata":{"name":"u1.small"},"spec":{"cpu":{"guest":64},"memory":{"guest":"256Gi"}}}`)
	expect422(t, func() error {
		return rest.Put().Namespace(ns).Resource("virtualmachineinstancetyperevisions").Name(created.Name).Body(created).Do(ctx).Error()
	}, "data")
	err = rest.Patch(types.MergePatchType).Namespace(ns).Resource("virtualmachineinstancetyperevisions").Name(created.Name).
		Body([]byte(`{"metadata":{"labels":{"kept":"yes"}}}`)).Do(ctx).Error()
	if err != nil {
		t.Errorf("label a revision: %v", err)
	}

	// Validated once, as the object it copies: refused hardware, a field
	// no preference has, something that is no instancetype at all.
	for _, tc := range []struct{ name, data, path string }{
		{"dedicated", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachineInstancetype",` +
			`"spec":{"cpu":{"guest":1,"dedicatedCPUPlacement":true},"memory":{"guest":"1Gi"}}}`, "data.spec.cpu.dedicatedCPUPlacement"},
		{"typo", `{"apiVersion":"virtualization.kubevirt.io/v1","kind":"VirtualMachinePreference","spec":{"preferredDiskBuss":"virtio"}}`, "data.spec"},
		{"deployment", `{"apiVersion":"apps/v1","kind":"Deployment","spec":{}}`, "data"},
	} {
		expect422(t, func() error {
			_, err := revisions.Create(ctx, &virtv1.VirtualMachineInstancetypeRevision{
				ObjectMeta: metav1.ObjectMeta{Name: tc.name}, Data: runtime.RawExtension{Raw: []byte(tc.data)},
			}, metav1.CreateOptions{})
			return err
		}, tc.path)
	}
}

// TestInstancetypeRefusals: every way a VM or an instancetype can be wrong
// is a 422 naming the field.
func TestInstancetypeRefusals(t *testing.T) {
	_, client := start(t)
	ctx := t.Context()
	v1 := client.VirtualizationV1()
	if _, err := v1.VirtualMachineClusterInstancetypes().Create(ctx, u1Small(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	needs4 := &virtv1.VirtualMachineClusterPreference{
		ObjectMeta: metav1.ObjectMeta{Name: "windows"},
		Spec: virtv1.VirtualMachinePreferenceSpec{Requirements: &virtv1.PreferenceRequirements{
			CPU: &virtv1.CPUPreferenceRequirement{Guest: 4},
		}},
	}
	if _, err := v1.VirtualMachineClusterPreferences().Create(ctx, needs4, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// KubeVirt's Windows preferences prefer a TPM: the preference is
	// accepted, a VM using it is refused where the TPM lands.
	tpm := &virtv1.VirtualMachineClusterPreference{
		ObjectMeta: metav1.ObjectMeta{Name: "windows.11"},
		Spec: virtv1.VirtualMachinePreferenceSpec{
			Devices:                 &virtv1.DevicePreferences{PreferredTPM: &virtv1.TPMDevice{Persistent: ptr.To(true)}},
			PreferredLaunchSecurity: &virtv1.LaunchSecurity{SEV: &virtv1.SEV{}},
		},
	}
	if _, err := v1.VirtualMachineClusterPreferences().Create(ctx, tpm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	vmCases := []struct {
		name   string
		mutate func(*virtv1.VirtualMachine)
		path   string
	}{
		{"template sets sockets", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.CPU = &virtv1.CPU{Sockets: 2}
		}, "spec.template.spec.domain.cpu.sockets"},
		{"template sets guest memory", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Memory = &virtv1.Memory{Guest: ptr.To(resource.MustParse("1Gi"))}
		}, "spec.template.spec.domain.memory.guest"},
		{"template requests memory", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Resources.Requests = corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}
		}, "spec.template.spec.domain.resources.requests[memory]"},
		{"missing instancetype", func(vm *virtv1.VirtualMachine) { vm.Spec.Instancetype.Name = "u1.huge" }, "spec.instancetype.name"},
		{"unknown kind", func(vm *virtv1.VirtualMachine) { vm.Spec.Instancetype.Kind = "Flavor" }, "spec.instancetype.kind"},
		{"infer from volume", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Instancetype = &virtv1.InstancetypeMatcher{InferFromVolume: "root"}
		}, "spec.instancetype.inferFromVolume"},
		{"no name", func(vm *virtv1.VirtualMachine) { vm.Spec.Preference = &virtv1.PreferenceMatcher{} }, "spec.preference.name"},
		{"preference requires more vCPUs", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Preference = &virtv1.PreferenceMatcher{Name: "windows"}
		}, "spec.instancetype.name"},
		{"preferred persistent TPM", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Preference = &virtv1.PreferenceMatcher{Name: "windows.11"}
		}, "spec.template.spec.domain.devices.tpm.persistent"},
		{"preferred launch security", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Preference = &virtv1.PreferenceMatcher{Name: "windows.11"}
		}, "spec.template.spec.domain.launchSecurity"},
		{"expanded template still invalid", func(vm *virtv1.VirtualMachine) {
			vm.Spec.Template.Spec.Domain.Machine = &virtv1.Machine{Type: "virt"}
		}, "spec.template.spec.domain.machine.type"},
	}
	for _, tc := range vmCases {
		t.Run(tc.name, func(t *testing.T) {
			vm := sizedVM("refused")
			vm.Spec.Preference = nil
			tc.mutate(vm)
			expect422(t, func() error {
				_, err := v1.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
				return err
			}, tc.path)
		})
	}

	t.Run("a conflict added by an update", func(t *testing.T) {
		vm := sizedVM("update")
		vm.Spec.Preference = nil
		created, err := v1.VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		created.Spec.Template.Spec.Domain.CPU = &virtv1.CPU{Cores: 4}
		expect422(t, func() error {
			_, err := v1.VirtualMachines(ns).Update(ctx, created, metav1.UpdateOptions{})
			return err
		}, "spec.template.spec.domain.cpu.cores")
	})

	itCases := []struct {
		name   string
		mutate func(*virtv1.VirtualMachineClusterInstancetype)
		path   string
	}{
		{"no vCPUs", func(it *virtv1.VirtualMachineClusterInstancetype) { it.Spec.CPU.Guest = 0 }, "spec.cpu.guest"},
		{"no memory", func(it *virtv1.VirtualMachineClusterInstancetype) { it.Spec.Memory.Guest = resource.Quantity{} }, "spec.memory.guest"},
		{"dedicated CPUs", func(it *virtv1.VirtualMachineClusterInstancetype) {
			it.Spec.CPU.DedicatedCPUPlacement = ptr.To(true)
		}, "spec.cpu.dedicatedCPUPlacement"},
		{"memory hotplug", func(it *virtv1.VirtualMachineClusterInstancetype) {
			it.Spec.Memory.MaxGuest = ptr.To(resource.MustParse("8Gi"))
		}, "spec.memory.maxGuest"},
		{"overcommit above 100", func(it *virtv1.VirtualMachineClusterInstancetype) { it.Spec.Memory.OvercommitPercent = 150 }, "spec.memory.overcommitPercent"},
		{"name with capitals", func(it *virtv1.VirtualMachineClusterInstancetype) { it.Name = "U1.Small" }, "metadata.name"},
	}
	for _, tc := range itCases {
		t.Run(tc.name, func(t *testing.T) {
			it := u1Small()
			it.Name = "u1.other"
			tc.mutate(it)
			expect422(t, func() error {
				_, err := v1.VirtualMachineClusterInstancetypes().Create(ctx, it, metav1.CreateOptions{})
				return err
			}, tc.path)
		})
	}
}

// expect422 asserts create answers 422 with a cause at path.
func expect422(t *testing.T, create func() error, path string) {
	t.Helper()
	err := create()
	status, ok := err.(apierrors.APIStatus)
	if !ok {
		t.Fatalf("err = %v, want a 422 from the server", err)
	}
	if code := status.Status().Code; code != http.StatusUnprocessableEntity {
		t.Fatalf("code = %d (%v), want 422", code, err)
	}
	var paths []string
	for _, c := range status.Status().Details.Causes {
		paths = append(paths, c.Field)
	}
	if !contains(paths, path) {
		t.Errorf("causes name %v, want %s; message: %v", paths, path, err)
	}
}
