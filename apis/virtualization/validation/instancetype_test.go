package validation

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

func fields(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Field)
	}
	return out
}

func TestValidateInstancetypeSpec(t *testing.T) {
	valid := func() *virtualization.VirtualMachineInstancetypeSpec {
		return &virtualization.VirtualMachineInstancetypeSpec{
			CPU:    virtualization.CPUInstancetype{Guest: 2, Model: ptr.To("host-model"), DedicatedCPUPlacement: ptr.To(false)},
			Memory: virtualization.MemoryInstancetype{Guest: resource.MustParse("4Gi"), OvercommitPercent: 10},
		}
	}
	for _, tc := range []struct {
		name   string
		mutate func(*virtualization.VirtualMachineInstancetypeSpec)
		want   []string
	}{
		{"valid", func(*virtualization.VirtualMachineInstancetypeSpec) {}, nil},
		{"256 vCPUs", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.Guest = 256 }, []string{"spec.cpu.guest"}},
		{"bad model", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.Model = ptr.To("-x") }, []string{"spec.cpu.model"}},
		{"isolated emulator thread", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.IsolateEmulatorThread = ptr.To(true) },
			[]string{"spec.cpu.isolateEmulatorThread"}},
		{"CPU hotplug", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.MaxSockets = ptr.To(uint32(4)) }, []string{"spec.cpu.maxSockets"}},
		{"negative overcommit", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.Memory.OvercommitPercent = -1 },
			[]string{"spec.memory.overcommitPercent"}},
		{"too much memory", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.Memory.Guest = resource.MustParse("1Pi") },
			[]string{"spec.memory.guest"}},
		{"io threads", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.IOThreadsPolicy = ptr.To("auto") }, []string{"spec.ioThreadsPolicy"}},
		{"bad node selector", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.NodeSelector = map[string]string{"a b": "c"} },
			[]string{"spec.nodeSelector"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := valid()
			tc.mutate(s)
			if got := fields(ValidateInstancetypeSpec(s, field.NewPath("spec"))); !equalStrings(got, tc.want) {
				t.Errorf("errors at %v, want %v", got, tc.want)
			}
		})
	}
}

func TestValidatePreferenceSpec(t *testing.T) {
	for _, tc := range []struct {
		name string
		spec virtualization.VirtualMachinePreferenceSpec
		want []string
	}{
		{"empty", virtualization.VirtualMachinePreferenceSpec{}, nil},
		{"cdrom on virtio", virtualization.VirtualMachinePreferenceSpec{Devices: &virtualization.DevicePreferences{PreferredCdromBus: virtualization.DiskBusVirtio}},
			[]string{"spec.devices.preferredCdromBus"}},
		{"CoresThreads ratio 3", virtualization.VirtualMachinePreferenceSpec{CPU: &virtualization.CPUPreferences{SpreadOptions: &virtualization.SpreadOptions{
			Across: ptr.To(virtualization.SpreadAcrossCoresThreads), Ratio: ptr.To(uint32(3))}}}, []string{"spec.cpu.spreadOptions.ratio"}},
		{"unknown across", virtualization.VirtualMachinePreferenceSpec{CPU: &virtualization.CPUPreferences{SpreadOptions: &virtualization.SpreadOptions{
			Across: ptr.To(virtualization.SpreadAcross("Dies"))}}}, []string{"spec.cpu.spreadOptions.across"}},
		{"machine", virtualization.VirtualMachinePreferenceSpec{Machine: &virtualization.MachinePreferences{PreferredMachineType: "virt"}},
			[]string{"spec.machine.preferredMachineType"}},
		{"negative grace", virtualization.VirtualMachinePreferenceSpec{PreferredTerminationGracePeriodSeconds: ptr.To(int64(-1))},
			[]string{"spec.preferredTerminationGracePeriodSeconds"}},
		{"zero vCPUs required", virtualization.VirtualMachinePreferenceSpec{Requirements: &virtualization.PreferenceRequirements{
			CPU: &virtualization.CPUPreferenceRequirement{}}}, []string{"spec.requirements.cpu.guest"}},
		{"amd64", virtualization.VirtualMachinePreferenceSpec{PreferredArchitecture: ptr.To("amd64")}, nil},
		{"s390x", virtualization.VirtualMachinePreferenceSpec{PreferredArchitecture: ptr.To("s390x")}, []string{"spec.preferredArchitecture"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fields(ValidatePreferenceSpec(&tc.spec, field.NewPath("spec"))); !equalStrings(got, tc.want) {
				t.Errorf("errors at %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMatchers: a VM with references is checked for the references here
// and for its template only once expanded (by the API server).
func TestMatchers(t *testing.T) {
	vm := validVM()
	vm.Spec.Template.Spec.Domain.CPU = nil // the instancetype's to give
	vm.Spec.Instancetype = &virtualization.InstancetypeMatcher{Name: "u1.small", Kind: "virtualmachineinstancetype"}
	if errs := ValidateVirtualMachine(vm); len(errs) > 0 {
		t.Errorf("VM with an instancetype and no CPU: %v", errs)
	}
	vm.Spec.Preference = &virtualization.PreferenceMatcher{Name: "Fedora", InferFromVolumeFailurePolicy: ptr.To("Reject")}
	if got := fields(ValidateVirtualMachine(vm)); !equalStrings(got, []string{"spec.preference.inferFromVolumeFailurePolicy", "spec.preference.name"}) {
		t.Errorf("errors at %v", got)
	}

	old := validVM()
	old.ResourceVersion = "1"
	old.Spec.Template.Spec.Domain.CPU = nil
	old.Spec.Instancetype = &virtualization.InstancetypeMatcher{Name: "u1.small", RevisionName: "vm-u1.small-uid-1"}
	renamed := old.DeepCopy()
	renamed.Spec.Instancetype.Name = "u1.large"
	if got := fields(ValidateVirtualMachineUpdate(renamed, old)); !equalStrings(got, []string{"spec.instancetype.revisionName"}) {
		t.Errorf("renaming with the old revision: errors at %v", got)
	}
	renamed.Spec.Instancetype.RevisionName = ""
	if errs := ValidateVirtualMachineUpdate(renamed, old); len(errs) > 0 {
		t.Errorf("renaming and clearing the revision: %v", errs)
	}
	sameKind := old.DeepCopy()
	sameKind.Spec.Instancetype.Kind = "VirtualMachineClusterInstancetype"
	if errs := ValidateVirtualMachineUpdate(sameKind, old); len(errs) > 0 {
		t.Errorf("spelling out the default kind: %v", errs)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
