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
	}
	// The pod network the defaults would add is added first, so that the
	// preferred NIC model applies to it too (the defaults would make it
	// virtio); with autoattachPodInterface false, as preferred or as set,
	// none is added.
	virtv1.SetDefaultPodNetwork(spec)

	if d := p.Devices; d != nil {
		for i := range devices.Disks {
			disk := &devices.Disks[i]
			if disk.Disk == nil && disk.CDRom == nil {
				disk.Disk = &virtv1.DiskTarget{}
			}
			if disk.Disk != nil && disk.Disk.Bus == "" {
				disk.Disk.Bus = d.PreferredDiskBus
			}
			if disk.CDRom != nil && disk.CDRom.Bus == "" {
				disk.CDRom.Bus = d.PreferredCdromBus
			}
		}
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
	if fw := p.Firmware; fw != nil {
		applyFirmware(fw, &spec.Domain)
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
