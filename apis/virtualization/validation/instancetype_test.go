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
		{"io threads shared", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.IOThreadsPolicy = ptr.To(virtualization.IOThreadsPolicyShared)
		}, nil},
		{"io threads auto", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.IOThreadsPolicy = ptr.To(virtualization.IOThreadsPolicyAuto)
		}, nil},
		{"io threads supplementalPool", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.IOThreadsPolicy = ptr.To(virtualization.IOThreadsPolicySupplementalPool)
		}, []string{"spec.ioThreadsPolicy"}},
		{"io threads unknown", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.IOThreadsPolicy = ptr.To(virtualization.IOThreadsPolicy("all"))
		},
			[]string{"spec.ioThreadsPolicy"}},
		{"io thread pool", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.IOThreads = &virtualization.DiskIOThreads{SupplementalPoolThreadCount: ptr.To(uint32(4))}
		}, []string{"spec.ioThreads"}},
		{"gpus", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.GPUs = []virtualization.GPU{{Name: "gpu1", DeviceName: "nvidia.com/GP102GL_Tesla_P40"}}
		}, []string{"spec.gpus"}},
		{"host devices", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.HostDevices = []virtualization.HostDevice{{Name: "dev1", DeviceName: "example.com/nic"}}
		}, []string{"spec.hostDevices"}},
		{"launch security", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.LaunchSecurity = &virtualization.LaunchSecurity{}
		},
			[]string{"spec.launchSecurity"}},
		{"numa", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.NUMA = &virtualization.NUMA{} }, []string{"spec.cpu.numa"}},
		{"realtime", func(s *virtualization.VirtualMachineInstancetypeSpec) { s.CPU.Realtime = &virtualization.Realtime{} }, []string{"spec.cpu.realtime"}},
		{"hugepages", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.Memory.Hugepages = &virtualization.Hugepages{PageSize: "2Mi"}
		},
			[]string{"spec.memory.hugepages"}},
		{"memory hotplug", func(s *virtualization.VirtualMachineInstancetypeSpec) {
			s.Memory.MaxGuest = ptr.To(resource.MustParse("8Gi"))
		},
			[]string{"spec.memory.maxGuest"}},
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
		{"required s390x", virtualization.VirtualMachinePreferenceSpec{Requirements: &virtualization.PreferenceRequirements{Architecture: ptr.To("s390x")}},
			[]string{"spec.requirements.architecture"}},
		{"required amd64", virtualization.VirtualMachinePreferenceSpec{Requirements: &virtualization.PreferenceRequirements{Architecture: ptr.To("amd64")}}, nil},
		{"device enums", virtualization.VirtualMachinePreferenceSpec{Devices: &virtualization.DevicePreferences{
			PreferredInputBus: "ps2", PreferredInputType: "mouse", PreferredSoundModel: "sb16", PreferredVideoType: ptr.To("qxl"),
			PreferredPanicDeviceModel: ptr.To(virtualization.PanicDeviceModel("s390")), PreferredDiskCache: "unsafe", PreferredDiskIO: "uring",
		}}, []string{"spec.devices.preferredInputBus", "spec.devices.preferredInputType", "spec.devices.preferredSoundModel",
			"spec.devices.preferredVideoType", "spec.devices.preferredPanicDeviceModel", "spec.devices.preferredDiskCache", "spec.devices.preferredDiskIO"}},
		// Accepted although a VMI refuses what they fill in: the refusal is
		// the VM's, at the template's field, when it uses the preference.
		{"refused on the VMI", virtualization.VirtualMachinePreferenceSpec{
			Devices: &virtualization.DevicePreferences{PreferredTPM: &virtualization.TPMDevice{}, PreferredNetworkInterfaceMultiQueue: ptr.To(true),
				PreferredInputBus: virtualization.InputBusVirtio, PreferredInputType: virtualization.InputTypeTablet, PreferredDiskCache: virtualization.CacheNone},
			PreferredLaunchSecurity: &virtualization.LaunchSecurity{},
		}, nil},
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
