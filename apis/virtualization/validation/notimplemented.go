package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// The KubeVirt fields this platform could run but does not yet. Each is
// accepted by the schema and refused here with a 422 at its path; the
// refusal is the one line to delete when the feature lands (together with
// the launcher's conversion and a test).

// notImplemented refuses a field the platform does not run yet: what names
// the feature with its verb ("ConfigMap volumes are"); instead, if not
// empty, says what to use meanwhile.
func notImplemented(p *field.Path, what, instead string) *field.Error {
	msg := what + " not implemented yet on this platform"
	if instead != "" {
		msg += "; " + instead
	}
	return field.Forbidden(p, msg)
}

// validateNotImplementedSpec refuses the VMI spec's fields that are not
// implemented yet.
func validateNotImplementedSpec(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if spec.ServiceAccountName != "" {
		add(notImplemented(fldPath.Child("serviceAccountName"), "a service account for the launcher pod is", ""))
	}
	if len(spec.TopologySpreadConstraints) > 0 {
		add(notImplemented(fldPath.Child("topologySpreadConstraints"), "topology spread constraints are", "use affinity"))
	}
	if p := spec.DNSPolicy; p != "" && p != "ClusterFirst" {
		add(notImplemented(fldPath.Child("dnsPolicy"), "dnsPolicy "+string(p)+" is", "the guest gets the cluster's DNS (ClusterFirst)"))
	}
	if spec.DNSConfig != nil {
		add(notImplemented(fldPath.Child("dnsConfig"), "a DNS configuration is", "the guest gets the cluster's DNS"))
	}
	d := &spec.Domain
	dp := fldPath.Child("domain")
	if d.RebootPolicy != nil && *d.RebootPolicy == virtualization.RebootPolicyTerminate {
		add(notImplemented(dp.Child("rebootPolicy"), "rebootPolicy Terminate is", "a guest reboot reboots the domain (Reboot)"))
	}
	if m := d.Memory; m != nil && m.ReservedOverhead != nil && m.ReservedOverhead.AddedOverhead != nil {
		add(notImplemented(dp.Child("memory", "reservedOverhead", "addedOverhead"), "added memory overhead is", "raise resources.limits.memory instead"))
	}
	if fw := d.Firmware; fw != nil {
		if fw.ACPI != nil {
			add(notImplemented(dp.Child("firmware", "acpi"), "ACPI tables from secret volumes (SLIC, MSDM) are", ""))
		}
		if bl := fw.Bootloader; bl != nil && bl.EFI != nil && bl.EFI.Persistent != nil && *bl.EFI.Persistent {
			add(notImplemented(dp.Child("firmware", "bootloader", "efi", "persistent"), "a persistent EFI variable store is", "the variables are reset at each start"))
		}
	}
	// A TPM's state lives in the launcher's embedded libvirt root and ends
	// with it; KubeVirt keeps a persistent one on a backend-storage PVC.
	if tpm := d.Devices.TPM; tpm != nil && (tpm.Enabled == nil || *tpm.Enabled) && tpm.Persistent != nil && *tpm.Persistent {
		add(notImplemented(dp.Child("devices", "tpm", "persistent"), "a persistent TPM is", "without persistent the guest gets a TPM whose state is reset at each start"))
	}
	if len(d.Devices.Filesystems) > 0 {
		add(notImplemented(dp.Child("devices", "filesystems"), "virtiofs file systems are", "the launcher runs no virtiofsd; attach the volume as a disk"))
	}
	for i, disk := range d.Devices.Disks {
		if bs := disk.BlockSize; bs != nil && bs.MatchVolume != nil && (bs.MatchVolume.Enabled == nil || *bs.MatchVolume.Enabled) {
			add(notImplemented(dp.Child("devices", "disks").Index(i).Child("blockSize", "matchVolume"), "block sizes matched to the volume are", "give them in blockSize.custom"))
		}
	}
	for i, iface := range d.Devices.Interfaces {
		p := dp.Child("devices", "interfaces").Index(i)
		if len(iface.PortRanges) > 0 {
			add(notImplemented(p.Child("portRanges"), "port ranges are", "list the ports in ports"))
		}
		if iface.DHCPOptions != nil {
			add(notImplemented(p.Child("dhcpOptions"), "extra DHCP options are", ""))
		}
	}
	for i := range spec.Volumes {
		errs = append(errs, validateNotImplementedVolume(&spec.Volumes[i].VolumeSource, fldPath.Child("volumes").Index(i))...)
	}
	return errs
}

func validateNotImplementedVolume(src *virtualization.VolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if src.Ephemeral != nil {
		add(notImplemented(fldPath.Child("ephemeral"), "ephemeral volumes are", "use a persistentVolumeClaim or a containerDisk volume"))
	}
	if src.ContainerPath != nil {
		add(notImplemented(fldPath.Child("containerPath"), "container path volumes are", "the launcher runs no virtiofsd"))
	}
	return errs
}
