package validation

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation"

	"kubevirt.dev/virt/apis/virtualization"
)

// VirtualMachineInstanceWarnings returns what is legal but probably not what
// the user wants, in the words kubectl prints after "Warning:".
func VirtualMachineInstanceWarnings(spec *virtualization.VirtualMachineInstanceSpec, prefix string) []string {
	var warnings []string
	warn := func(format string, args ...any) { warnings = append(warnings, prefix+fmt.Sprintf(format, args...)) }

	if g := spec.TerminationGracePeriodSeconds; g != nil && *g == 0 {
		warn("spec.terminationGracePeriodSeconds: 0 destroys the guest on delete without a graceful shutdown; its disks may be left inconsistent")
	}
	if m := spec.Domain.Memory; m != nil && m.Guest != nil && m.Guest.Cmp(WarnGuestMemory) < 0 {
		warn("spec.domain.memory.guest: %s is less than a stock Linux kernel needs to boot (%s)", m.Guest.String(), WarnGuestMemory.String())
	}
	if len(spec.Domain.Devices.Disks) == 0 && (spec.Domain.Firmware == nil || spec.Domain.Firmware.KernelBoot == nil) {
		warn("spec.domain.devices.disks: the guest has no disk and no kernelBoot, so it has nothing to boot from")
	}
	if cpu := spec.Domain.CPU; cpu != nil && cpu.Model == "host-passthrough" {
		warn("spec.domain.cpu.model: host-passthrough ties the guest to the CPU of its node (under software emulation it is QEMU's max CPU)")
	}
	// The launcher leaves these out of a domain that runs under software
	// emulation (QEMU refuses them there): say so rather than drop them
	// silently.
	if f := spec.Domain.Features; f != nil {
		if f.Hyperv != nil {
			warn("spec.domain.features.hyperv: the Hyper-V enlightenments apply on nodes with KVM only; under software emulation the guest runs without them")
		}
		if p := f.Pvspinlock; p != nil && (p.Enabled == nil || *p.Enabled) {
			warn("spec.domain.features.pvspinlock: paravirtual spinlocks apply on nodes with KVM only; under software emulation the guest runs without them")
		}
	}
	for i, d := range spec.Domain.Devices.Disks {
		if d.CDRom != nil && d.CDRom.ReadOnly != nil && !*d.CDRom.ReadOnly {
			warn("spec.domain.devices.disks[%d].cdrom.readonly: a CD-ROM's medium is read-only whatever readonly says (libvirt's, as under KubeVirt); use a disk for a volume the guest writes to", i)
		}
	}
	for i, v := range spec.Volumes {
		if pvc := v.PersistentVolumeClaim; pvc != nil && len(validation.IsDNS1123Subdomain(pvc.ClaimName)) > 0 {
			warn("spec.volumes[%d].persistentVolumeClaim.claimName: no PersistentVolumeClaim can be named %q (claim names are lower case DNS subdomains): the guest cannot start with it", i, pvc.ClaimName)
		}
	}
	if spec.Domain.Resources.OvercommitGuestOverhead {
		warn("spec.domain.resources.overcommitGuestOverhead: the launcher pod requests less memory than it uses and may be evicted under memory pressure")
	}
	return warnings
}

// VirtualMachineWarnings returns the warnings of a VM and its template.
func VirtualMachineWarnings(vm *virtualization.VirtualMachine) []string {
	var warnings []string
	if vm.Spec.Running != nil {
		warnings = append(warnings, "spec.running is deprecated: use spec.runStrategy (Always or Halted)")
	}
	if vm.Spec.Template != nil {
		warnings = append(warnings, VirtualMachineInstanceWarnings(&vm.Spec.Template.Spec, "spec.template.")...)
	}
	return warnings
}
