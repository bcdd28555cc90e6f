package instancetype

import (
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// applyPreference fills what spec leaves empty with what the preference
// prefers; a field the template sets is never touched.
func (e *Expansion) applyPreference(spec *virtv1.VirtualMachineInstanceSpec) {
	p := e.Preference
	devices := &spec.Domain.Devices
	if d := p.Devices; d != nil {
		fillBool(&devices.AutoattachGraphicsDevice, d.PreferredAutoattachGraphicsDevice)
		fillBool(&devices.AutoattachPodInterface, d.PreferredAutoattachPodInterface)
		fillBool(&devices.AutoattachSerialConsole, d.PreferredAutoattachSerialConsole)
		fillBool(&devices.AutoattachMemBalloon, d.PreferredAutoattachMemBalloon)
		fillBool(&devices.AutoattachInputDevice, d.PreferredAutoattachInputDevice)
	}
	// The pod network the defaults would add is added first, so that the
	// preferred NIC model applies to it too (the defaults would make it
	// virtio); with autoattachPodInterface false, as preferred or as set,
	// none is added.
	virtv1.SetDefaultPodNetwork(spec)

	if d := p.Devices; d != nil {
		applyDevices(d, devices)
		for i := range devices.Interfaces {
			iface := &devices.Interfaces[i]
			if iface.Model == "" {
				iface.Model = d.PreferredInterfaceModel
			}
			if d.PreferredInterfaceMasquerade != nil && iface.Bridge == nil && iface.Masquerade == nil {
				iface.Masquerade = d.PreferredInterfaceMasquerade.DeepCopy()
			}
		}
		if devices.Rng == nil && d.PreferredRng != nil {
			devices.Rng = d.PreferredRng.DeepCopy()
		}
	}
	if cpu := p.CPU; cpu != nil && len(cpu.PreferredCPUFeatures) > 0 {
		applyCPUFeatures(cpu.PreferredCPUFeatures, &spec.Domain)
	}
	if f := p.Features; f != nil {
		applyFeatures(f, &spec.Domain)
	}
	if fw := p.Firmware; fw != nil {
		applyFirmware(fw, &spec.Domain)
	}
	if c := p.Clock; c != nil {
		applyClock(c, &spec.Domain)
	}
	if m := p.Machine; m != nil && m.PreferredMachineType != "" && (spec.Domain.Machine == nil || spec.Domain.Machine.Type == "") {
		spec.Domain.Machine = &virtv1.Machine{Type: m.PreferredMachineType}
	}
	if spec.Subdomain == "" && p.PreferredSubdomain != nil {
		spec.Subdomain = *p.PreferredSubdomain
	}
	if spec.TerminationGracePeriodSeconds == nil && p.PreferredTerminationGracePeriodSeconds != nil {
		spec.TerminationGracePeriodSeconds = ptr.To(*p.PreferredTerminationGracePeriodSeconds)
	}
	if spec.Architecture == "" && p.PreferredArchitecture != nil {
		spec.Architecture = *p.PreferredArchitecture
	}
	// Launch security is refused on a VMI: filling it in makes a VM using
	// this preference fail at spec.template.spec.domain.launchSecurity
	// rather than run without what its preference asked for.
	if spec.Domain.LaunchSecurity == nil && p.PreferredLaunchSecurity != nil {
		spec.Domain.LaunchSecurity = p.PreferredLaunchSecurity.DeepCopy()
	}
}

// applyDevices fills the device settings and each disk's, input's and
// panic device's empty fields. What a VMI refuses (an enabled TPM,
// multi-queue NICs, vGPU options of GPUs) is filled in all the same: the
// VM is then refused at that field of its template instead of silently
// running without what its preference asked for.
func applyDevices(d *virtv1.DevicePreferences, devices *virtv1.Devices) {
	fillBool(&devices.UseVirtioTransitional, d.PreferredUseVirtioTransitional)
	fillBool(&devices.BlockMultiQueue, d.PreferredBlockMultiQueue)
	fillBool(&devices.NetworkInterfaceMultiQueue, d.PreferredNetworkInterfaceMultiQueue)
	// disableHotplug is a plain bool: unset cannot be told from false, so
	// the preference decides, as in KubeVirt.
	if d.PreferredDisableHotplug != nil {
		devices.DisableHotplug = *d.PreferredDisableHotplug
	}
	if d.PreferredSoundModel != "" && devices.Sound != nil && devices.Sound.Model == "" {
		devices.Sound.Model = d.PreferredSoundModel
	}
	if devices.TPM == nil && d.PreferredTPM != nil {
		devices.TPM = d.PreferredTPM.DeepCopy()
	}
	if d.PreferredVideoType != nil {
		if devices.Video == nil {
			devices.Video = &virtv1.VideoDevice{}
		}
		if devices.Video.Type == "" {
			devices.Video.Type = *d.PreferredVideoType
		}
	}
	for i := range devices.Disks {
		applyDisk(d, &devices.Disks[i])
	}
	for i := range devices.Inputs {
		in := &devices.Inputs[i]
		if in.Bus == "" {
			in.Bus = d.PreferredInputBus
		}
		if in.Type == "" {
			in.Type = d.PreferredInputType
		}
	}
	for i := range devices.GPUs {
		if gpu := &devices.GPUs[i]; gpu.VirtualGPUOptions == nil && d.PreferredVirtualGPUOptions != nil {
			gpu.VirtualGPUOptions = d.PreferredVirtualGPUOptions.DeepCopy()
		}
	}
	if m := d.PreferredPanicDeviceModel; m != nil {
		if len(devices.PanicDevices) == 0 {
			devices.PanicDevices = []virtv1.PanicDevice{{}}
		}
		for i := range devices.PanicDevices {
			if devices.PanicDevices[i].Model == nil {
				devices.PanicDevices[i].Model = ptr.To(*m)
			}
		}
	}
}

// applyDisk fills a disk's bus and driver settings; a disk without a
// device becomes a disk so that they apply.
func applyDisk(d *virtv1.DevicePreferences, disk *virtv1.Disk) {
	if disk.Disk == nil && disk.CDRom == nil && disk.LUN == nil {
		disk.Disk = &virtv1.DiskTarget{}
	}
	switch {
	case disk.Disk != nil:
		if disk.Disk.Bus == "" {
			disk.Disk.Bus = d.PreferredDiskBus
		}
		if disk.BlockSize == nil && d.PreferredDiskBlockSize != nil {
			disk.BlockSize = d.PreferredDiskBlockSize.DeepCopy()
		}
		if disk.Cache == "" {
			disk.Cache = d.PreferredDiskCache
		}
		if disk.IO == "" {
			disk.IO = d.PreferredDiskIO
		}
		// A dedicated I/O thread is a virtio disk's only; the bus is the
		// template's or the preferred one (KubeVirt checks it the same
		// way, before the defaults make an empty bus virtio).
		if disk.Disk.Bus == virtv1.DiskBusVirtio {
			fillBool(&disk.DedicatedIOThread, d.PreferredDiskDedicatedIoThread)
		}
	case disk.CDRom != nil:
		if disk.CDRom.Bus == "" {
			disk.CDRom.Bus = d.PreferredCdromBus
		}
	case disk.LUN != nil:
		if disk.LUN.Bus == "" {
			disk.LUN.Bus = d.PreferredLunBus
		}
	}
}

// applyCPUFeatures adds each preferred CPU feature the template does not
// name (with whatever policy).
func applyCPUFeatures(features []virtv1.CPUFeature, d *virtv1.DomainSpec) {
	if d.CPU == nil {
		d.CPU = &virtv1.CPU{}
	}
	named := make(map[string]bool, len(d.CPU.Features))
	for _, f := range d.CPU.Features {
		named[f.Name] = true
	}
	for _, f := range features {
		if !named[f.Name] {
			d.CPU.Features = append(d.CPU.Features, f)
		}
	}
}

// applyFeatures fills each hypervisor feature the template leaves unset.
func applyFeatures(f *virtv1.FeaturePreferences, d *virtv1.DomainSpec) {
	if d.Features == nil {
		d.Features = &virtv1.Features{}
	}
	fs := d.Features
	// acpi is not a pointer: unset cannot be told from enabled, so the
	// preference decides, as in KubeVirt.
	if f.PreferredAcpi != nil {
		fs.ACPI = *f.PreferredAcpi.DeepCopy()
	}
	if fs.APIC == nil && f.PreferredApic != nil {
		fs.APIC = f.PreferredApic.DeepCopy()
	}
	if fs.KVM == nil && f.PreferredKvm != nil {
		fs.KVM = f.PreferredKvm.DeepCopy()
	}
	if fs.Pvspinlock == nil && f.PreferredPvspinlock != nil {
		fs.Pvspinlock = f.PreferredPvspinlock.DeepCopy()
	}
	if fs.SMM == nil && f.PreferredSmm != nil {
		fs.SMM = f.PreferredSmm.DeepCopy()
	}
	if f.PreferredHyperv != nil {
		if fs.Hyperv == nil {
			fs.Hyperv = &virtv1.FeatureHyperv{}
		}
		fillHyperv(fs.Hyperv, f.PreferredHyperv)
	}
}

// fillHyperv fills each enlightenment of have that is unset with
// preferred's.
func fillHyperv(have, preferred *virtv1.FeatureHyperv) {
	fillPtr(&have.Relaxed, preferred.Relaxed)
	fillPtr(&have.VAPIC, preferred.VAPIC)
	fillPtr(&have.Spinlocks, preferred.Spinlocks)
	fillPtr(&have.VPIndex, preferred.VPIndex)
	fillPtr(&have.Runtime, preferred.Runtime)
	fillPtr(&have.SyNIC, preferred.SyNIC)
	fillPtr(&have.SyNICTimer, preferred.SyNICTimer)
	fillPtr(&have.HypervReset, preferred.HypervReset)
	fillPtr(&have.VendorID, preferred.VendorID)
	fillPtr(&have.Frequencies, preferred.Frequencies)
	fillPtr(&have.Reenlightenment, preferred.Reenlightenment)
	fillPtr(&have.TLBFlush, preferred.TLBFlush)
	fillPtr(&have.IPI, preferred.IPI)
	fillPtr(&have.EVMCS, preferred.EVMCS)
}

// fillPtr sets *field to a deep copy of preferred when it is unset: the
// expanded VM must share nothing with the preference it was expanded with.
func fillPtr[T any, P interface {
	*T
	DeepCopy() *T
}](field **T, preferred P) {
	if *field == nil && preferred != nil {
		*field = preferred.DeepCopy()
	}
}

// applyClock fills the clock's offset when the template sets neither utc
// nor timezone (a partial offset is never merged), and its timers when
// the template sets none.
func applyClock(c *virtv1.ClockPreferences, d *virtv1.DomainSpec) {
	if d.Clock == nil {
		d.Clock = &virtv1.Clock{}
	}
	if o := c.PreferredClockOffset; o != nil && d.Clock.UTC == nil && d.Clock.Timezone == nil {
		d.Clock.ClockOffset = *o.DeepCopy()
	}
	if t := c.PreferredTimer; t != nil && d.Clock.Timer == nil {
		d.Clock.Timer = t.DeepCopy()
	}
}

func fillBool(field **bool, preferred *bool) {
	if *field == nil && preferred != nil {
		*field = ptr.To(*preferred)
	}
}

// applyFirmware chooses the boot loader the preference prefers when the
// template chooses none, and its settings when the template leaves them.
func applyFirmware(fw *virtv1.FirmwarePreferences, d *virtv1.DomainSpec) {
	bootloader := func() *virtv1.Bootloader {
		if d.Firmware == nil {
			d.Firmware = &virtv1.Firmware{}
		}
		if d.Firmware.Bootloader == nil {
			d.Firmware.Bootloader = &virtv1.Bootloader{}
		}
		return d.Firmware.Bootloader
	}
	chosen := d.Firmware != nil && d.Firmware.Bootloader != nil && (d.Firmware.Bootloader.BIOS != nil || d.Firmware.Bootloader.EFI != nil)
	// preferredEfi is a whole EFI setting: the deprecated secure boot
	// preference does not amend it.
	wholeEFI := false
	switch {
	case chosen:
	case fw.PreferredUseBios != nil && *fw.PreferredUseBios:
		bootloader().BIOS = &virtv1.BIOS{}
	case fw.PreferredEfi != nil:
		bootloader().EFI = fw.PreferredEfi.DeepCopy()
		wholeEFI = true
	case fw.PreferredUseEfi != nil && *fw.PreferredUseEfi:
		bootloader().EFI = &virtv1.EFI{}
	}
	if d.Firmware == nil || d.Firmware.Bootloader == nil {
		return
	}
	if bios := d.Firmware.Bootloader.BIOS; bios != nil {
		fillBool(&bios.UseSerial, fw.PreferredUseBiosSerial)
	}
	if efi := d.Firmware.Bootloader.EFI; efi != nil && !wholeEFI {
		fillBool(&efi.SecureBoot, fw.PreferredUseSecureBoot)
	}
}
