package domain

import (
	"fmt"

	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// setInputs adds the spec's input devices. A USB device needs a USB
// controller, which libvirt adds to every PC machine by itself.
func setInputs(d *libvirtxml.Domain, inputs []virtv1.Input) error {
	for _, in := range inputs {
		switch in.Type {
		case virtv1.InputTypeTablet, virtv1.InputTypeKeyboard:
		default:
			return fmt.Errorf("input %q: unknown type %q", in.Name, in.Type)
		}
		switch in.Bus {
		case virtv1.InputBusUSB, virtv1.InputBusVirtio:
		default:
			return fmt.Errorf("input %q: unknown bus %q", in.Name, in.Bus)
		}
		d.Devices.Inputs = append(d.Devices.Inputs, libvirtxml.DomainInput{
			Type: string(in.Type), Bus: string(in.Bus), Alias: &libvirtxml.DomainAlias{Name: AliasPrefix + in.Name},
		})
	}
	return nil
}

// setSound adds the spec's sound card. The launcher has no audio backend:
// libvirt gives QEMU its "none" audio driver, so the guest sees a working
// card whose output goes nowhere.
func setSound(d *libvirtxml.Domain, s *virtv1.SoundDevice) error {
	if s == nil {
		return nil
	}
	switch s.Model {
	case virtv1.SoundModelICH9, virtv1.SoundModelAC97:
	default:
		return fmt.Errorf("sound %q: unknown model %q", s.Name, s.Model)
	}
	d.Devices.Sounds = append(d.Devices.Sounds, libvirtxml.DomainSound{Model: s.Model, Alias: &libvirtxml.DomainAlias{Name: AliasPrefix + s.Name}})
	return nil
}

// setPanicDevices adds the spec's panic devices; a model left out is isa,
// the x86 default. pvpanic (the PCI pvpanic device) becomes isa, the same
// device on the ISA bus with the same guest driver: the nodes' libvirt
// (9.0) does not know the PCI one.
func setPanicDevices(d *libvirtxml.Domain, panics []virtv1.PanicDevice) {
	for _, p := range panics {
		model := virtv1.PanicDeviceIsa
		if p.Model != nil && *p.Model != virtv1.PanicDevicePvpanic {
			model = *p.Model
		}
		d.Devices.Panics = append(d.Devices.Panics, libvirtxml.DomainPanic{Model: string(model)})
	}
}

// setMemBalloon adds a virtio balloon when the spec asks for one, which
// reports the guest's memory statistics every 10 seconds (KubeVirt's
// period); otherwise the guest has none.
func setMemBalloon(d *libvirtxml.Domain, dev *virtv1.Devices) {
	if dev.AutoattachMemBalloon == nil || !*dev.AutoattachMemBalloon {
		d.Devices.MemBalloon = &libvirtxml.DomainMemBalloon{Model: "none"}
		return
	}
	d.Devices.MemBalloon = &libvirtxml.DomainMemBalloon{
		Model: virtioModel(dev), Stats: &libvirtxml.DomainMemBalloonStats{Period: 10},
	}
}

// setChassis writes the SMBIOS chassis table (type 3).
func setChassis(d *libvirtxml.Domain, c *virtv1.Chassis) {
	if c == nil {
		return
	}
	var entries []libvirtxml.DomainSysInfoEntry
	for _, e := range []libvirtxml.DomainSysInfoEntry{
		{Name: "manufacturer", Value: c.Manufacturer}, {Name: "version", Value: c.Version},
		{Name: "serial", Value: c.Serial}, {Name: "asset", Value: c.Asset}, {Name: "sku", Value: c.Sku},
	} {
		if e.Value != "" {
			entries = append(entries, e)
		}
	}
	if len(entries) == 0 {
		return
	}
	smbios(d).Chassis = &libvirtxml.DomainSysInfoChassis{Entry: entries}
}

// smbios is the domain's SMBIOS sysinfo, added (and the OS told to use it)
// on first use.
func smbios(d *libvirtxml.Domain) *libvirtxml.DomainSysInfoSMBIOS {
	for i := range d.SysInfo {
		if d.SysInfo[i].SMBIOS != nil {
			return d.SysInfo[i].SMBIOS
		}
	}
	d.SysInfo = append(d.SysInfo, libvirtxml.DomainSysInfo{SMBIOS: &libvirtxml.DomainSysInfoSMBIOS{}})
	d.OS.SMBios = &libvirtxml.DomainSMBios{Mode: "sysinfo"}
	return d.SysInfo[len(d.SysInfo)-1].SMBIOS
}

// virtioModel is the model of a virtio device: transitional (virtio 0.9 and
// 1.0, for old guests) when the spec asks for it.
func virtioModel(dev *virtv1.Devices) string {
	if dev.UseVirtioTransitional != nil && *dev.UseVirtioTransitional {
		return "virtio-transitional"
	}
	return "virtio"
}

// setTPM adds an emulated TPM 2.0 when the spec asks for one: libvirt
// starts a swtpm process for it, whose state lives in the embedded
// driver's root and so ends with the launcher (a persistent TPM is refused
// by the API). The model is tpm-tis, the one KubeVirt gives a TPM that is
// not persistent: a guest moved over from KubeVirt sees the same device.
func setTPM(d *libvirtxml.Domain, tpm *virtv1.TPMDevice) {
	if tpm == nil || (tpm.Enabled != nil && !*tpm.Enabled) {
		return
	}
	d.Devices.TPMs = append(d.Devices.TPMs, libvirtxml.DomainTPM{
		Model:   "tpm-tis",
		Backend: &libvirtxml.DomainTPMBackend{Emulator: &libvirtxml.DomainTPMBackendEmulator{Version: "2.0"}},
	})
}
