package validation

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/apis/virtualization"
)

// The checks of the KubeVirt hardware fields the launcher converts: what
// QEMU or libvirt would refuse at start is refused at create instead.
func TestValidateHardware(t *testing.T) {
	on := func() *virtualization.FeatureState { return &virtualization.FeatureState{Enabled: ptr.To(true)} }
	disk := func(mutate func(*virtualization.Disk)) func(*virtualization.VirtualMachineInstance) {
		return func(v *virtualization.VirtualMachineInstance) { mutate(&v.Spec.Domain.Devices.Disks[0]) }
	}
	tests := []struct {
		name      string
		mutate    func(*virtualization.VirtualMachineInstance)
		wantPaths []string
	}{
		{name: "Hyper-V with its dependencies", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtualization.Features{Hyperv: &virtualization.FeatureHyperv{
				VPIndex: on(), SyNIC: on(), SyNICTimer: &virtualization.SyNICTimer{Enabled: ptr.To(true)}, VAPIC: on(), EVMCS: on(),
				Spinlocks: &virtualization.FeatureSpinlocks{Enabled: ptr.To(true), Retries: ptr.To(uint32(4096))},
			}}
		}},
		{name: "Hyper-V synic without vpindex, evmcs without vapic, too few spinlock retries", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtualization.Features{Hyperv: &virtualization.FeatureHyperv{
				SyNIC: on(), EVMCS: on(), Spinlocks: &virtualization.FeatureSpinlocks{Enabled: ptr.To(true), Retries: ptr.To(uint32(100))},
			}}
		}, wantPaths: []string{"spec.domain.features.hyperv.synic", "spec.domain.features.hyperv.evmcs", "spec.domain.features.hyperv.spinlocks.spinlocks"}},
		{name: "vendor ID too long", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtualization.Features{Hyperv: &virtualization.FeatureHyperv{
				VendorID: &virtualization.FeatureVendorID{Enabled: ptr.To(true), VendorID: "ThirteenChars"}}}
		}, wantPaths: []string{"spec.domain.features.hyperv.vendorid.vendorid"}},
		{name: "unknown time zone and tick policy", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Clock = &virtualization.Clock{
				ClockOffset: virtualization.ClockOffset{Timezone: ptr.To(virtualization.ClockOffsetTimezone("Mars/Olympus"))},
				Timer:       &virtualization.Timer{PIT: &virtualization.PITTimer{TickPolicy: "merge"}},
			}
		}, wantPaths: []string{"spec.domain.clock.timezone", "spec.domain.clock.timer.pit.tickPolicy"}},
		{name: "a time zone from the built-in tz database", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Clock = &virtualization.Clock{ClockOffset: virtualization.ClockOffset{Timezone: ptr.To(virtualization.ClockOffsetTimezone("Europe/Berlin"))}}
		}},
		{name: "Secure Boot with SMM on", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtualization.Features{SMM: on()}
			v.Spec.Domain.Firmware = &virtualization.Firmware{Bootloader: &virtualization.Bootloader{EFI: &virtualization.EFI{SecureBoot: ptr.To(true)}}}
		}},
		{name: "Secure Boot with SMM off, on an i440fx machine", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Features = &virtualization.Features{SMM: &virtualization.FeatureState{Enabled: ptr.To(false)}}
			v.Spec.Domain.Machine = &virtualization.Machine{Type: "pc-i440fx-7.2"}
			v.Spec.Domain.Firmware = &virtualization.Firmware{Bootloader: &virtualization.Bootloader{EFI: &virtualization.EFI{SecureBoot: ptr.To(true)}}}
		}, wantPaths: []string{"spec.domain.features.smm.enabled", "spec.domain.machine.type"}},
		{name: "257 disks and volumes: refused before anything else is checked", mutate: func(v *virtualization.VirtualMachineInstance) {
			for i := range 257 {
				name := fmt.Sprintf("d%d", i)
				v.Spec.Domain.Devices.Disks = append(v.Spec.Domain.Devices.Disks, virtualization.Disk{Name: name, BootOrder: ptr.To(uint32(1))})
				v.Spec.Volumes = append(v.Spec.Volumes, virtualization.Volume{Name: name})
			}
		}, wantPaths: []string{"spec.domain.devices.disks", "spec.volumes"}},
		{name: "utc and timezone", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Clock = &virtualization.Clock{ClockOffset: virtualization.ClockOffset{
				UTC: &virtualization.ClockOffsetUTC{}, Timezone: ptr.To(virtualization.ClockOffsetTimezone("UTC"))}}
		}, wantPaths: []string{"spec.domain.clock"}},
		{name: "CPU feature with an unknown policy, twice", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.CPU.Features = []virtualization.CPUFeature{{Name: "pcid", Policy: "maybe"}, {Name: "pcid"}}
		}, wantPaths: []string{"spec.domain.cpu.features[0].policy", "spec.domain.cpu.features[1].name"}},
		{name: "native I/O with a host cache", mutate: disk(func(d *virtualization.Disk) { d.IO, d.Cache = "native", "writeback" }),
			wantPaths: []string{"spec.domain.devices.disks[0].io"}},
		{name: "shareable disk with a host cache", mutate: disk(func(d *virtualization.Disk) { d.Shareable, d.Cache = ptr.To(true), "writethrough" }),
			wantPaths: []string{"spec.domain.devices.disks[0].cache"}},
		{name: "block size not a power of two", mutate: disk(func(d *virtualization.Disk) {
			d.BlockSize = &virtualization.BlockSize{Custom: &virtualization.CustomBlockSize{Logical: 1000, Physical: 4096}}
		}), wantPaths: []string{"spec.domain.devices.disks[0].blockSize.custom.logical"}},
		{name: "dedicated I/O thread on a SATA disk", mutate: disk(func(d *virtualization.Disk) {
			d.Disk.Bus, d.DedicatedIOThread = "sata", ptr.To(true)
		}), wantPaths: []string{"spec.domain.devices.disks[0].dedicatedIOThread"}},
		{name: "unknown error policy and cache", mutate: disk(func(d *virtualization.Disk) {
			d.ErrorPolicy, d.Cache = ptr.To(virtualization.DiskErrorPolicy("panic")), "unsafe"
		}), wantPaths: []string{"spec.domain.devices.disks[0].cache", "spec.domain.devices.disks[0].errorPolicy"}},
		{name: "ACPI index out of range, link state unknown", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Interfaces[0].ACPIIndex = 16384
			v.Spec.Domain.Devices.Interfaces[0].State = "sideways"
		}, wantPaths: []string{"spec.domain.devices.interfaces[0].acpiIndex", "spec.domain.devices.interfaces[0].state"}},
		{name: "inputs, sound and video of unknown kinds", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Inputs = []virtualization.Input{{Name: "m", Bus: "ps2", Type: "mouse"}}
			v.Spec.Domain.Devices.Sound = &virtualization.SoundDevice{Name: "s", Model: "sb16"}
			v.Spec.Domain.Devices.Video = &virtualization.VideoDevice{Type: "qxl"}
		}, wantPaths: []string{"spec.domain.devices.inputs[0].bus", "spec.domain.devices.inputs[0].type", "spec.domain.devices.sound.model", "spec.domain.devices.video.type"}},
		{name: "video without a graphics device", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.Video = &virtualization.VideoDevice{Type: "virtio"}
			v.Spec.Domain.Devices.AutoattachGraphicsDevice = ptr.To(false)
		}, wantPaths: []string{"spec.domain.devices.video"}},
		{name: "start strategy not Paused", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.StartStrategy = ptr.To(virtualization.StartStrategy("Running"))
		}, wantPaths: []string{"spec.startStrategy"}},
		{name: "a TPM turned off is no TPM", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.TPM = &virtualization.TPMDevice{Enabled: ptr.To(false), Persistent: ptr.To(true)}
		}},
		{name: "a TPM whose state is reset at each start", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.TPM = &virtualization.TPMDevice{Persistent: ptr.To(false)}
		}},
		{name: "a persistent TPM", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Domain.Devices.TPM = &virtualization.TPMDevice{Enabled: ptr.To(true), Persistent: ptr.To(true)}
		}, wantPaths: []string{"spec.domain.devices.tpm.persistent"}},
		{name: "a volume has one source, refused or not", mutate: func(v *virtualization.VirtualMachineInstance) {
			v.Spec.Volumes[0].Ephemeral = &virtualization.EphemeralVolumeSource{}
		}, wantPaths: []string{"spec.volumes[0]", "spec.volumes[0].ephemeral"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vmi := validVMI()
			tc.mutate(vmi)
			errs := ValidateVirtualMachineInstance(vmi)
			var got []string
			for _, e := range errs {
				got = append(got, e.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantPaths, ",") {
				t.Errorf("error paths = %v, want %v; errors: %v", got, tc.wantPaths, errs.ToAggregate())
			}
		})
	}
}
