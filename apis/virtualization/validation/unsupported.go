package validation

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	"kubevirt.dev/virt/apis/virtualization"
)

// The KubeVirt fields this platform accepts in its schema and refuses here,
// because the platform lacks what they need (a device plugin, CDI, live
// migration, ...). Each refusal is a 422 at the field's path saying what is
// missing, so that a KubeVirt manifest fails with a reason, never with
// "unknown field". What the platform could do but does not do yet is in
// notimplemented.go. What only some nodes can run (KVM, a newer QEMU) is no
// literal here: the nodes report it and virt-apiserver checks a VMI against
// their reports (internal/capability).

// unsupported refuses a field: what names the feature with its verb ("GPUs
// are"), why says what the platform lacks for it.
func unsupported(p *field.Path, what, why string) *field.Error {
	return field.Forbidden(p, what+" not supported: "+why)
}

// Reasons shared by several fields.
const (
	whyNoDevicePlugin    = "this platform has no device plugin or DRA driver for them"
	whyNoDRA             = "this platform has no Dynamic Resource Allocation (DRA) drivers"
	whyNoCPUManager      = "the launcher pins no vCPUs to host CPUs (it would need the kubelet's static CPU manager policy and exclusive CPUs for the pod)"
	whyNoVolumeMigration = "this platform does not migrate a running guest's volumes to other storage"
	whyNoHotplug         = "this platform does not hotplug devices, CPUs or memory into a running guest"
	whyNoCDI             = "the Containerized Data Importer (CDI) is not installed with this platform; create a PersistentVolumeClaim and use a persistentVolumeClaim volume"
	whyLibvirtAddresses  = "libvirt places the devices of a guest here; remove the address"
	whyRemovedBinding    = "KubeVirt removed this binding in v1.3; use masquerade or bridge"
	whyNoHugepages       = "the launcher pod requests no huge pages and the launcher backs no guest memory with them"
	whyNoLaunchSecurity  = "the launcher sets up no confidential guests"
	whyNoIOThreadsPool   = "the launcher maps no disk queues to a pool of I/O threads"
)

// validateUnsupportedSpec refuses the VMI spec's fields the platform cannot
// run.
func validateUnsupportedSpec(spec *virtualization.VirtualMachineInstanceSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if a := spec.Architecture; a != "" && a != ArchitectureAMD64 {
		add(unsupported(fldPath.Child("architecture"), "architecture "+a+" is", "the launcher image has QEMU's x86_64 emulator only; use amd64 or leave it empty"))
	}
	if len(spec.ResourceClaims) > 0 {
		add(unsupported(fldPath.Child("resourceClaims"), "resource claims are", whyNoDRA))
	}
	if len(spec.UtilityVolumes) > 0 {
		add(unsupported(fldPath.Child("utilityVolumes"), "utility volumes are", "they serve memory dumps and backups, which this platform does not take"))
	}
	errs = append(errs, validateUnsupportedDomain(&spec.Domain, fldPath.Child("domain"))...)
	for i := range spec.Volumes {
		errs = append(errs, validateUnsupportedVolume(&spec.Volumes[i].VolumeSource, fldPath.Child("volumes").Index(i))...)
	}
	for i, n := range spec.Networks {
		p := fldPath.Child("networks").Index(i)
		if n.Multus != nil {
			add(unsupported(p.Child("multus"), "Multus networks are", "Multus is not installed with this platform; a guest has the pod network only"))
		}
		if n.ResourceClaim != nil {
			add(unsupported(p.Child("resourceClaim"), "network devices from resource claims are", whyNoDRA))
		}
		if n.Pod != nil && n.Pod.VMIPv6NetworkCIDR != "" {
			add(unsupported(p.Child("pod", "vmIPv6NetworkCIDR"), "an IPv6 guest network is", "the pod network of this platform is IPv4-only"))
		}
	}
	return errs
}

func validateUnsupportedDomain(d *virtualization.DomainSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if cpu := d.CPU; cpu != nil {
		p := fldPath.Child("cpu")
		if cpu.DedicatedCPUPlacement {
			add(unsupported(p.Child("dedicatedCpuPlacement"), "dedicated CPU placement is", whyNoCPUManager))
		}
		if cpu.IsolateEmulatorThread {
			add(unsupported(p.Child("isolateEmulatorThread"), "an isolated emulator thread is", whyNoCPUManager))
		}
		if cpu.NUMA != nil {
			add(unsupported(p.Child("numa"), "a guest NUMA topology mapped onto the host is", whyNoCPUManager))
		}
		if cpu.Realtime != nil {
			add(unsupported(p.Child("realtime"), "real-time vCPUs are", whyNoCPUManager))
		}
		if cpu.MaxSockets != 0 {
			add(unsupported(p.Child("maxSockets"), "CPU hotplug is", whyNoHotplug))
		}
	}
	if m := d.Memory; m != nil {
		p := fldPath.Child("memory")
		if m.Hugepages != nil {
			add(unsupported(p.Child("hugepages"), "huge pages are", whyNoHugepages))
		}
		if m.MaxGuest != nil {
			add(unsupported(p.Child("maxGuest"), "memory hotplug is", whyNoHotplug))
		}
		if ro := m.ReservedOverhead; ro != nil && ro.MemLock != nil && *ro.MemLock == virtualization.MemLockRequired {
			add(unsupported(p.Child("reservedOverhead", "memLock"), "locking the guest's memory is", "no device of this platform needs it, and the unprivileged launcher may not lock that much memory"))
		}
	}
	if ls := d.LaunchSecurity; ls != nil {
		add(unsupported(fldPath.Child("launchSecurity"), "launch security (SEV, SEV-SNP, TDX) is", whyNoLaunchSecurity))
	}
	if p := d.IOThreadsPolicy; p != nil && *p == virtualization.IOThreadsPolicySupplementalPool {
		add(unsupported(fldPath.Child("ioThreadsPolicy"), "the supplementalPool I/O threads policy is", whyNoIOThreadsPool+"; use shared or auto"))
	}
	if d.IOThreads != nil {
		add(unsupported(fldPath.Child("ioThreads"), "ioThreads is", "it sizes the supplementalPool policy: "+whyNoIOThreadsPool))
	}
	errs = append(errs, validateUnsupportedDevices(&d.Devices, fldPath.Child("devices"))...)
	return errs
}

func validateUnsupportedDevices(dev *virtualization.Devices, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if len(dev.GPUs) > 0 {
		add(unsupported(fldPath.Child("gpus"), "GPUs are", whyNoDevicePlugin))
	}
	if len(dev.HostDevices) > 0 {
		add(unsupported(fldPath.Child("hostDevices"), "host devices are", whyNoDevicePlugin))
	}
	if dev.DownwardMetrics != nil {
		add(unsupported(fldPath.Child("downwardMetrics"), "downward metrics are", "no node component of this platform serves them"))
	}
	if dev.ClientPassthrough != nil {
		add(unsupported(fldPath.Child("clientPassthrough"), "USB redirection is", "no client connection of this platform carries it"))
	}
	if b := dev.AutoattachVSOCK; b != nil && *b {
		add(unsupported(fldPath.Child("autoattachVSOCK"), "VSOCK is", "virt-handler allocates no VSOCK context IDs"))
	}
	if b := dev.NetworkInterfaceMultiQueue; b != nil && *b {
		add(unsupported(fldPath.Child("networkInterfaceMultiqueue"), "multi-queue NICs are", "the taps virt-handler prepares in the launcher pod are single-queue"))
	}
	if w := dev.Watchdog; w != nil && w.Diag288 != nil {
		add(unsupported(fldPath.Child("watchdog", "diag288"), "the diag288 watchdog is", "it is an s390x device and the launcher runs x86_64 guests; use i6300esb"))
	}
	for i, d := range dev.Disks {
		p := fldPath.Child("disks").Index(i)
		if d.LUN != nil {
			add(unsupported(p.Child("lun"), "LUN passthrough is", "it needs the raw SCSI device of a Block-mode claim and the privilege to send it SCSI commands, which the unprivileged launcher lacks; use disk"))
		}
		if d.Disk != nil && d.Disk.PciAddress != "" {
			add(unsupported(p.Child("disk", "pciAddress"), "a disk's PCI address is", whyLibvirtAddresses))
		}
		if d.ChangedBlockTracking != nil && *d.ChangedBlockTracking {
			add(unsupported(p.Child("changedBlockTracking"), "changed block tracking is", "this platform takes no backups"))
		}
	}
	for i, iface := range dev.Interfaces {
		p := fldPath.Child("interfaces").Index(i)
		if iface.Binding != nil {
			add(unsupported(p.Child("binding"), "network binding plugins are", "this platform has none; use masquerade or bridge"))
		}
		if iface.PciAddress != "" {
			add(unsupported(p.Child("pciAddress"), "an interface's PCI address is", whyLibvirtAddresses))
		}
		if iface.State == virtualization.InterfaceStateAbsent {
			add(unsupported(p.Child("state"), "state absent (hot-unplug) is", whyNoHotplug))
		}
		if iface.DeprecatedSlirp != nil {
			add(unsupported(p.Child("slirp"), "the slirp binding is", whyRemovedBinding))
		}
		if iface.DeprecatedMacvtap != nil {
			add(unsupported(p.Child("macvtap"), "the macvtap binding is", whyRemovedBinding))
		}
		if iface.DeprecatedPasst != nil {
			add(unsupported(p.Child("passt"), "the passt binding is", whyRemovedBinding))
		}
		if iface.SRIOV != nil {
			add(unsupported(p.Child("sriov"), "SR-IOV is", "this platform has no SR-IOV device plugin and no Multus"))
		}
		if iface.PasstBinding != nil {
			add(unsupported(p.Child("passtBinding"), "the passt binding is", "the launcher image has no passt; use masquerade"))
		}
	}
	return errs
}

func validateUnsupportedVolume(src *virtualization.VolumeSource, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	add := func(e *field.Error) { errs = append(errs, e) }
	if src.HostDisk != nil {
		add(unsupported(fldPath.Child("hostDisk"), "host disks are", "the launcher is unprivileged and sees no path of the node; use a persistentVolumeClaim"))
	}
	if src.DataVolume != nil {
		add(unsupported(fldPath.Child("dataVolume"), "DataVolume volumes are", whyNoCDI))
	}
	if src.DownwardMetrics != nil {
		add(unsupported(fldPath.Child("downwardMetrics"), "downward metrics volumes are", "no node component of this platform serves the metrics"))
	}
	if src.MemoryDump != nil {
		add(unsupported(fldPath.Child("memoryDump"), "memory dump volumes are", "this platform takes no memory dumps"))
	}
	if pvc := src.PersistentVolumeClaim; pvc != nil && pvc.Hotpluggable {
		add(unsupported(fldPath.Child("persistentVolumeClaim", "hotpluggable"), "hotpluggable volumes are", whyNoHotplug))
	}
	return errs
}

// validateUnsupportedVirtualMachineSpec refuses the VM spec's fields the
// platform cannot run.
func validateUnsupportedVirtualMachineSpec(spec *virtualization.VirtualMachineSpec, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(spec.DataVolumeTemplates) > 0 {
		errs = append(errs, unsupported(fldPath.Child("dataVolumeTemplates"), "DataVolume templates are", whyNoCDI))
	}
	if s := spec.UpdateVolumesStrategy; s != nil && *s == virtualization.UpdateVolumesStrategyMigration {
		errs = append(errs, unsupported(fldPath.Child("updateVolumesStrategy"), "updateVolumesStrategy Migration is", whyNoVolumeMigration+"; use Replacement"))
	}
	return errs
}
