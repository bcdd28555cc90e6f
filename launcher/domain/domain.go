package domain

import (
	"fmt"

	"libvirt.org/go/libvirtxml"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Convert returns the libvirt domain of a defaulted VMI on host: the API's
// defaults (virtv1.SetObjectDefaults_VirtualMachineInstance) are not applied
// again here, a field they would have set is an error.
func Convert(vmi *virtv1.VirtualMachineInstance, host Host) (*libvirtxml.Domain, error) {
	switch host.Type {
	case TypeKVM, TypeQEMU, TypeTest:
	default:
		return nil, fmt.Errorf("unknown domain type %q", host.Type)
	}
	spec := &vmi.Spec.Domain
	uuid := string(vmi.UID)
	if spec.Firmware != nil && spec.Firmware.UUID != "" {
		uuid = string(spec.Firmware.UUID)
	}
	d := &libvirtxml.Domain{
		Type:        host.Type,
		Name:        Name(vmi.Namespace, vmi.Name, vmi.UID),
		UUID:        uuid,
		Description: fmt.Sprintf("VirtualMachineInstance %s/%s (uid %s)", vmi.Namespace, vmi.Name, vmi.UID),
		OnPoweroff:  "destroy",
		OnReboot:    "restart",
		// A crashed guest ends the VMI; its launcher then exits non-zero.
		OnCrash: "destroy",
		Devices: &libvirtxml.DomainDeviceList{},
	}
	// Features first: EFI Secure Boot turns SMM on in them.
	setFeatures(d, spec.Features, host)
	if err := setClock(d, spec.Clock); err != nil {
		return nil, err
	}
	if err := setMemory(d, spec); err != nil {
		return nil, err
	}
	if err := setCPU(d, spec.CPU, host); err != nil {
		return nil, err
	}
	if err := setOS(d, vmi, host); err != nil {
		return nil, err
	}
	setChassis(d, spec.Chassis)
	if err := setDisks(d, vmi, host); err != nil {
		return nil, err
	}
	if err := setInterfaces(d, vmi, host); err != nil {
		return nil, err
	}
	if err := setSerial(d, spec, host); err != nil {
		return nil, err
	}
	if err := setGraphics(d, spec, host); err != nil {
		return nil, err
	}
	setRNG(d, &spec.Devices)
	setGuestAgentChannel(d)
	if err := setWatchdog(d, spec.Devices.Watchdog); err != nil {
		return nil, err
	}
	if err := setInputs(d, spec.Devices.Inputs); err != nil {
		return nil, err
	}
	if err := setSound(d, spec.Devices.Sound); err != nil {
		return nil, err
	}
	setPanicDevices(d, spec.Devices.PanicDevices)
	setTPM(d, spec.Devices.TPM)
	setMemBalloon(d, &spec.Devices)
	return d, nil
}

func setMemory(d *libvirtxml.Domain, spec *virtv1.DomainSpec) error {
	if spec.Memory == nil || spec.Memory.Guest == nil {
		return fmt.Errorf("spec.domain.memory.guest is not set (nor resources.requests.memory)")
	}
	bytes := spec.Memory.Guest.Value()
	if bytes < 1<<20 {
		return fmt.Errorf("spec.domain.memory.guest %s is less than 1Mi", spec.Memory.Guest)
	}
	// libvirt rounds to KiB anyway; saying so keeps the XML stable.
	d.Memory = &libvirtxml.DomainMemory{Value: uint(bytes >> 10), Unit: "KiB"}
	return nil
}

// setCPU converts the topology, model and features. Under software
// emulation there is no host CPU to pass through: host-passthrough becomes
// QEMU's "max" CPU (libvirt's mode maximum), every feature TCG emulates.
func setCPU(d *libvirtxml.Domain, cpu *virtv1.CPU, host Host) error {
	if cpu == nil || cpu.Sockets == 0 || cpu.Cores == 0 || cpu.Threads == 0 {
		return fmt.Errorf("spec.domain.cpu: sockets, cores and threads are not set")
	}
	sockets, cores, threads, model := cpu.Sockets, cpu.Cores, cpu.Threads, cpu.Model
	d.VCPU = &libvirtxml.DomainVCPU{Placement: "static", Value: uint(sockets * cores * threads)}
	c := &libvirtxml.DomainCPU{
		Topology: &libvirtxml.DomainCPUTopology{Sockets: int(sockets), Dies: 1, Cores: int(cores), Threads: int(threads)},
	}
	switch model {
	case "":
		// The hypervisor's default model (qemu64 under TCG).
	case virtv1.CPUModelHostPassthrough:
		c.Mode = model
		if host.Type != TypeKVM {
			c.Mode = "maximum"
		}
	case virtv1.CPUModelHostModel:
		c.Mode = model
	default:
		c.Mode = "custom"
		c.Match = "exact"
		c.Model = &libvirtxml.DomainCPUModel{Value: model, Fallback: "forbid"}
	}
	for _, f := range cpu.Features {
		policy := f.Policy
		if policy == "" {
			policy = virtv1.CPUFeaturePolicyRequire
		}
		c.Features = append(c.Features, libvirtxml.DomainCPUFeature{Name: f.Name, Policy: policy})
	}
	if len(c.Features) > 0 && c.Mode == "" {
		// libvirt takes features only on top of a model: name the one the
		// hypervisor would have chosen.
		c.Mode, c.Match = "custom", "exact"
		c.Model = &libvirtxml.DomainCPUModel{Value: DefaultCPUModel, Fallback: "forbid"}
	}
	d.CPU = c
	return nil
}

// DefaultCPUModel is the CPU model QEMU gives an x86 guest that names none.
const DefaultCPUModel = "qemu64"

func setOS(d *libvirtxml.Domain, vmi *virtv1.VirtualMachineInstance, host Host) error {
	spec := &vmi.Spec.Domain
	os := &libvirtxml.DomainOS{Type: &libvirtxml.DomainOSType{Type: "hvm", Arch: "x86_64"}}
	if host.Type != TypeTest {
		// The test driver knows no machine types.
		if spec.Machine == nil || spec.Machine.Type == "" {
			return fmt.Errorf("spec.domain.machine.type is not set")
		}
		os.Type.Machine = spec.Machine.Type
	}
	d.OS = os
	fw := spec.Firmware
	if fw == nil {
		return nil
	}
	if fw.Serial != "" {
		// The SMBIOS system table carries the serial; the UUID is the
		// domain's own.
		smbios(d).System = &libvirtxml.DomainSysInfoSystem{Entry: []libvirtxml.DomainSysInfoEntry{{Name: "serial", Value: fw.Serial}}}
	}
	if bl := fw.Bootloader; bl != nil {
		switch {
		case bl.BIOS != nil && bl.EFI != nil:
			return fmt.Errorf("spec.domain.firmware.bootloader: bios and efi are exclusive")
		case bl.BIOS != nil:
			if bl.BIOS.UseSerial != nil && *bl.BIOS.UseSerial {
				os.BIOS = &libvirtxml.DomainBIOS{UseSerial: "yes"}
			}
		case bl.EFI != nil:
			if err := setEFI(d, bl.EFI, host.EFI); err != nil {
				return err
			}
		}
	}
	if kb := fw.KernelBoot; kb != nil {
		if host.Kernel == "" {
			return fmt.Errorf("spec.domain.firmware.kernelBoot: no kernel file on the host")
		}
		os.Kernel = host.Kernel
		os.Initrd = host.Initrd
		os.Cmdline = kb.KernelArgs
	}
	return nil
}

func setEFI(d *libvirtxml.Domain, efi *virtv1.EFI, fw EFIFirmware) error {
	code, vars, secure := fw.Code, fw.Vars, efi.SecureBoot != nil && *efi.SecureBoot
	if secure {
		code, vars = fw.SecureCode, fw.SecureVars
		if d.OS.Type.Machine != "" && !isQ35(d.OS.Type.Machine) {
			return fmt.Errorf("spec.domain.firmware.bootloader.efi.secureBoot needs a q35 machine, not %q", d.OS.Type.Machine)
		}
		// Secure Boot is enforced by OVMF code running in SMM.
		d.Features.SMM = &libvirtxml.DomainFeatureSMM{State: "on"}
	}
	if code == "" || vars == "" {
		return fmt.Errorf("spec.domain.firmware.bootloader.efi: no OVMF firmware on the host")
	}
	d.OS.Loader = &libvirtxml.DomainLoader{Path: code, Readonly: "yes", Type: "pflash", Secure: yesNo(secure)}
	// libvirt copies the template into its own state directory per domain.
	d.OS.NVRam = &libvirtxml.DomainNVRam{Template: vars}
	return nil
}

func isQ35(machine string) bool {
	return machine == "q35" || len(machine) > 7 && machine[:7] == "pc-q35-"
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}
