package instancetype

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// TestInstancetypeIOThreadsPolicy: the instancetype's policy becomes the
// instances', and a template with its own conflicts.
func TestInstancetypeIOThreadsPolicy(t *testing.T) {
	it := u1(2, "2Gi")
	it.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyShared)
	tmpl := template()
	if errs := withInstancetype(it).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	if p := tmpl.Spec.Domain.IOThreadsPolicy; p == nil || *p != virtv1.IOThreadsPolicyShared {
		t.Errorf("ioThreadsPolicy %v, want shared", p)
	}
	if *it.IOThreadsPolicy != virtv1.IOThreadsPolicyShared || tmpl.Spec.Domain.IOThreadsPolicy == it.IOThreadsPolicy {
		t.Error("the expanded template shares the instancetype's value")
	}

	tmpl = template()
	tmpl.Spec.Domain.IOThreadsPolicy = ptr.To(virtv1.IOThreadsPolicyAuto)
	if got := paths(withInstancetype(it).Apply(field.NewPath("spec"), tmpl)); !slices.Equal(got, []string{"spec.template.spec.domain.ioThreadsPolicy"}) {
		t.Errorf("conflicts at %v", got)
	}
}

// TestInstancetypeRefusedHardware: hardware validation refuses in an
// instancetype is still given to the template (a revision written
// elsewhere may carry it), so that the VMI's validation refuses the VM
// rather than the guest silently running without it; a template that
// sets it too conflicts.
func TestInstancetypeRefusedHardware(t *testing.T) {
	it := u1(2, "2Gi")
	it.GPUs = []virtv1.GPU{{Name: "gpu1", DeviceName: "nvidia.com/GP102GL_Tesla_P40"}}
	it.HostDevices = []virtv1.HostDevice{{Name: "dev1", DeviceName: "example.com/nic"}}
	it.LaunchSecurity = &virtv1.LaunchSecurity{SEV: &virtv1.SEV{}}
	it.IOThreads = &virtv1.DiskIOThreads{SupplementalPoolThreadCount: ptr.To(uint32(2))}
	it.CPU.NUMA = &virtv1.NUMA{GuestMappingPassthrough: &virtv1.NUMAGuestMappingPassthrough{}}
	it.CPU.Realtime = &virtv1.Realtime{Mask: "0"}
	it.Memory.Hugepages = &virtv1.Hugepages{PageSize: "2Mi"}

	tmpl := template()
	if errs := withInstancetype(it).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	d := tmpl.Spec.Domain
	if len(d.Devices.GPUs) != 1 || len(d.Devices.HostDevices) != 1 || d.LaunchSecurity == nil || d.IOThreads == nil ||
		d.CPU.NUMA == nil || d.CPU.Realtime == nil || d.Memory.Hugepages == nil {
		t.Errorf("not applied: %+v", d)
	}

	tmpl = template()
	tmpl.Spec.Domain.Devices.GPUs = []virtv1.GPU{{Name: "mine"}}
	tmpl.Spec.Domain.Devices.HostDevices = []virtv1.HostDevice{{Name: "mine"}}
	tmpl.Spec.Domain.LaunchSecurity = &virtv1.LaunchSecurity{}
	tmpl.Spec.Domain.IOThreads = &virtv1.DiskIOThreads{}
	tmpl.Spec.Domain.CPU = &virtv1.CPU{NUMA: &virtv1.NUMA{}, Realtime: &virtv1.Realtime{}}
	tmpl.Spec.Domain.Memory = &virtv1.Memory{Hugepages: &virtv1.Hugepages{}}
	got := paths(withInstancetype(it).Apply(field.NewPath("spec"), tmpl))
	want := []string{
		"spec.template.spec.domain.ioThreads",
		"spec.template.spec.domain.launchSecurity",
		"spec.template.spec.domain.devices.gpus",
		"spec.template.spec.domain.devices.hostDevices",
		"spec.template.spec.domain.cpu.numa",
		"spec.template.spec.domain.cpu.realtime",
		"spec.template.spec.domain.memory.hugepages",
	}
	if !slices.Equal(got, want) {
		t.Errorf("conflicts at %v, want %v", got, want)
	}
}

// windows is a preference with the hardware preferences of KubeVirt's
// Windows ones.
func windows() *virtv1.VirtualMachinePreferenceSpec {
	return &virtv1.VirtualMachinePreferenceSpec{
		Clock: &virtv1.ClockPreferences{
			PreferredClockOffset: &virtv1.ClockOffset{UTC: &virtv1.ClockOffsetUTC{}},
			PreferredTimer:       &virtv1.Timer{HPET: &virtv1.HPETTimer{Enabled: ptr.To(false)}, Hyperv: &virtv1.HypervTimer{}},
		},
		CPU: &virtv1.CPUPreferences{PreferredCPUFeatures: []virtv1.CPUFeature{{Name: "vmx", Policy: "disable"}, {Name: "svm", Policy: "disable"}}},
		Features: &virtv1.FeaturePreferences{
			PreferredAcpi:       &virtv1.FeatureState{Enabled: ptr.To(true)},
			PreferredApic:       &virtv1.FeatureAPIC{Enabled: ptr.To(true)},
			PreferredHyperv:     &virtv1.FeatureHyperv{Relaxed: &virtv1.FeatureState{}, VAPIC: &virtv1.FeatureState{}, HypervReset: &virtv1.FeatureState{}},
			PreferredKvm:        &virtv1.FeatureKVM{Hidden: true},
			PreferredPvspinlock: &virtv1.FeatureState{Enabled: ptr.To(false)},
			PreferredSmm:        &virtv1.FeatureState{},
		},
		Devices: &virtv1.DevicePreferences{
			PreferredDiskBus:                    virtv1.DiskBusVirtio,
			PreferredDiskCache:                  virtv1.CacheWriteBack,
			PreferredDiskIO:                     virtv1.IOThreads,
			PreferredDiskBlockSize:              &virtv1.BlockSize{Custom: &virtv1.CustomBlockSize{Logical: 512, Physical: 4096}},
			PreferredDiskDedicatedIoThread:      ptr.To(true),
			PreferredInputBus:                   virtv1.InputBusUSB,
			PreferredInputType:                  virtv1.InputTypeTablet,
			PreferredSoundModel:                 "ich9",
			PreferredVideoType:                  ptr.To("vga"),
			PreferredPanicDeviceModel:           ptr.To(virtv1.PanicDeviceHyperv),
			PreferredAutoattachMemBalloon:       ptr.To(false),
			PreferredAutoattachInputDevice:      ptr.To(true),
			PreferredUseVirtioTransitional:      ptr.To(true),
			PreferredBlockMultiQueue:            ptr.To(true),
			PreferredDisableHotplug:             ptr.To(true),
			PreferredNetworkInterfaceMultiQueue: ptr.To(false),
			PreferredTPM:                        &virtv1.TPMDevice{Enabled: ptr.To(false)},
			PreferredVirtualGPUOptions:          &virtv1.VGPUOptions{Display: &virtv1.VGPUDisplayOptions{Enabled: ptr.To(false)}},
		},
		PreferredArchitecture: ptr.To("amd64"),
	}
}

// TestHardwarePreferencesFillEmpty: each of the clock, CPU feature,
// hypervisor feature and device preferences lands where the template says
// nothing.
func TestHardwarePreferencesFillEmpty(t *testing.T) {
	e := &Expansion{Preference: windows(), PreferenceKind: virtv1.ClusterPreferenceKind, PreferenceName: "windows.11"}
	tmpl := template()
	tmpl.Spec.Domain.Devices.Inputs = []virtv1.Input{{Name: "tablet"}}
	tmpl.Spec.Domain.Devices.Sound = &virtv1.SoundDevice{Name: "audio"}
	if errs := e.Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	d := tmpl.Spec.Domain
	if d.Clock == nil || d.Clock.UTC == nil || d.Clock.Timer == nil || d.Clock.Timer.HPET == nil || d.Clock.Timer.Hyperv == nil {
		t.Errorf("clock %+v", d.Clock)
	}
	if d.CPU == nil || len(d.CPU.Features) != 2 {
		t.Errorf("cpu features %+v", d.CPU)
	}
	f := d.Features
	if f == nil || f.ACPI.Enabled == nil || f.APIC == nil || f.KVM == nil || !f.KVM.Hidden || f.Pvspinlock == nil || f.SMM == nil ||
		f.Hyperv == nil || f.Hyperv.Relaxed == nil || f.Hyperv.VAPIC == nil || f.Hyperv.HypervReset == nil || f.Hyperv.Spinlocks != nil {
		t.Errorf("features %+v", f)
	}
	root := d.Devices.Disks[0]
	if root.Disk == nil || root.Disk.Bus != virtv1.DiskBusVirtio || root.Cache != virtv1.CacheWriteBack || root.IO != virtv1.IOThreads ||
		root.BlockSize == nil || root.BlockSize.Custom.Physical != 4096 || root.DedicatedIOThread == nil || !*root.DedicatedIOThread {
		t.Errorf("disk %+v", root)
	}
	if cd := d.Devices.Disks[1]; cd.Cache != "" || cd.BlockSize != nil || cd.DedicatedIOThread != nil {
		t.Errorf("the CD-ROM got disk preferences: %+v", cd)
	}
	dev := d.Devices
	if dev.Inputs[0].Bus != virtv1.InputBusUSB || dev.Inputs[0].Type != virtv1.InputTypeTablet {
		t.Errorf("input %+v", dev.Inputs[0])
	}
	if dev.Sound.Model != "ich9" || dev.Video == nil || dev.Video.Type != "vga" {
		t.Errorf("sound %+v video %+v", dev.Sound, dev.Video)
	}
	if len(dev.PanicDevices) != 1 || *dev.PanicDevices[0].Model != virtv1.PanicDeviceHyperv {
		t.Errorf("panic devices %+v", dev.PanicDevices)
	}
	for name, b := range map[string]*bool{
		"autoattachMemBalloon": dev.AutoattachMemBalloon, "autoattachInputDevice": dev.AutoattachInputDevice,
		"useVirtioTransitional": dev.UseVirtioTransitional, "blockMultiQueue": dev.BlockMultiQueue,
		"networkInterfaceMultiqueue": dev.NetworkInterfaceMultiQueue,
	} {
		if b == nil {
			t.Errorf("%s not filled", name)
		}
	}
	if !dev.DisableHotplug || dev.TPM == nil || *dev.TPM.Enabled {
		t.Errorf("disableHotplug %v tpm %+v", dev.DisableHotplug, dev.TPM)
	}
	if tmpl.Spec.Architecture != "amd64" {
		t.Errorf("architecture %q", tmpl.Spec.Architecture)
	}
}

// TestHardwarePreferencesKeepTemplate: what the template sets stays,
// except acpi and disableHotplug, plain values KubeVirt's preferences
// decide.
func TestHardwarePreferencesKeepTemplate(t *testing.T) {
	e := &Expansion{Preference: windows()}
	tmpl := template()
	d := &tmpl.Spec.Domain
	d.Clock = &virtv1.Clock{ClockOffset: virtv1.ClockOffset{Timezone: ptr.To(virtv1.ClockOffsetTimezone("Europe/Paris"))}, Timer: &virtv1.Timer{RTC: &virtv1.RTCTimer{}}}
	d.CPU = &virtv1.CPU{Features: []virtv1.CPUFeature{{Name: "vmx", Policy: "require"}}}
	d.Features = &virtv1.Features{APIC: &virtv1.FeatureAPIC{Enabled: ptr.To(false)}, Hyperv: &virtv1.FeatureHyperv{Relaxed: &virtv1.FeatureState{Enabled: ptr.To(false)}}}
	d.Devices.Disks[0].DiskDevice.Disk = &virtv1.DiskTarget{Bus: virtv1.DiskBusSATA}
	d.Devices.Disks[0].Cache = virtv1.CacheNone
	d.Devices.Video = &virtv1.VideoDevice{Type: "virtio"}
	d.Devices.PanicDevices = []virtv1.PanicDevice{{Model: ptr.To(virtv1.PanicDeviceIsa)}}
	d.Devices.BlockMultiQueue = ptr.To(false)
	d.Devices.TPM = &virtv1.TPMDevice{Persistent: ptr.To(true)}
	if errs := e.Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	if d.Clock.UTC != nil || d.Clock.Timezone == nil || d.Clock.Timer.HPET != nil {
		t.Errorf("clock %+v: a partial offset or timers must not be merged", d.Clock)
	}
	if len(d.CPU.Features) != 2 || d.CPU.Features[0].Policy != "require" || d.CPU.Features[1].Name != "svm" {
		t.Errorf("cpu features %+v: the template's vmx stays, svm is added", d.CPU.Features)
	}
	if *d.Features.APIC.Enabled || *d.Features.Hyperv.Relaxed.Enabled || d.Features.Hyperv.VAPIC == nil {
		t.Errorf("features %+v: the template's apic and relaxed stay, vapic is added", d.Features)
	}
	disk := d.Devices.Disks[0]
	if disk.Disk.Bus != virtv1.DiskBusSATA || disk.Cache != virtv1.CacheNone || disk.IO != virtv1.IOThreads || disk.DedicatedIOThread != nil {
		t.Errorf("disk %+v: a SATA disk keeps its cache and gets no dedicated I/O thread", disk)
	}
	dev := d.Devices
	if dev.Video.Type != "virtio" || *dev.PanicDevices[0].Model != virtv1.PanicDeviceIsa || *dev.BlockMultiQueue || dev.TPM.Enabled != nil {
		t.Errorf("devices %+v", dev)
	}
	if d.Features.ACPI.Enabled == nil || !dev.DisableHotplug {
		t.Errorf("acpi %+v disableHotplug %v: the preference decides these", d.Features.ACPI, dev.DisableHotplug)
	}
}

// TestExpandedPreferenceSharesNothing: editing the expanded VM does not
// reach the preference it was expanded with (the preference may be a
// cached object).
func TestExpandedPreferenceSharesNothing(t *testing.T) {
	p := windows()
	tmpl := template()
	if errs := (&Expansion{Preference: p}).Apply(field.NewPath("spec"), tmpl); len(errs) > 0 {
		t.Fatal(errs)
	}
	*tmpl.Spec.Domain.Features.Pvspinlock.Enabled = true
	*tmpl.Spec.Domain.Features.Hyperv.Relaxed = virtv1.FeatureState{Enabled: ptr.To(false)}
	tmpl.Spec.Domain.CPU.Features[0].Policy = "require"
	*tmpl.Spec.Domain.Devices.PanicDevices[0].Model = virtv1.PanicDeviceIsa
	if *p.Features.PreferredPvspinlock.Enabled || p.Features.PreferredHyperv.Relaxed.Enabled != nil ||
		p.CPU.PreferredCPUFeatures[0].Policy != "disable" || *p.Devices.PreferredPanicDeviceModel != virtv1.PanicDeviceHyperv {
		t.Errorf("the preference changed with the expanded VM: %+v %+v", p.Features, p.CPU)
	}
}

// TestRequiredArchitecture: a preference requiring amd64 takes a VM that
// names none (amd64 is the nodes'); any other is refused at the
// template's architecture.
func TestRequiredArchitecture(t *testing.T) {
	needs := &virtv1.VirtualMachinePreferenceSpec{Requirements: &virtv1.PreferenceRequirements{Architecture: ptr.To("amd64")}}
	e := &Expansion{Preference: needs, PreferenceKind: virtv1.ClusterPreferenceKind, PreferenceName: "fedora"}
	if errs := e.Apply(field.NewPath("spec"), template()); len(errs) > 0 {
		t.Error(errs)
	}
	tmpl := template()
	tmpl.Spec.Architecture = "arm64"
	if got := paths(e.Apply(field.NewPath("spec"), tmpl)); !slices.Equal(got, []string{"spec.template.spec.architecture"}) {
		t.Errorf("errors at %v", got)
	}
}
