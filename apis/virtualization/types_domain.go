package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of a guest.
type DomainSpec struct {
	// Resources are the compute resources of the launcher pod. When
	// memory.guest is not set, requests.memory is the guest's memory.
	Resources ResourceRequirements
	// CPU topology and model. Defaults to one core.
	CPU *CPU
	// Memory of the guest.
	Memory *Memory
	// Machine type. Defaults to q35.
	Machine *Machine
	// Firmware: identity, boot loader, direct kernel boot.
	Firmware *Firmware
	// Devices attached to the guest.
	Devices Devices
	// Clock is the guest's real-time clock: its offset from UTC (utc or
	// timezone) and the timers the guest sees. Defaults to UTC with the
	// machine type's timers.
	Clock *Clock
	// Features are platform features of the guest: ACPI, APIC, SMM, the
	// Hyper-V enlightenments, how KVM shows itself, paravirtual spinlocks.
	// ACPI and APIC are on unless disabled here.
	Features *Features
	// IOThreadsPolicy gives virtio disks QEMU I/O threads: shared (one for
	// all), auto (up to two per vCPU, shared round-robin) or
	// supplementalPool (refused: the launcher maps no disk queues to a pool of I/O threads). A disk with
	// dedicatedIOThread gets one of its own whatever the policy.
	IOThreadsPolicy *IOThreadsPolicy
	// IOThreads sizes the supplementalPool I/O threads policy. Refused, as
	// supplementalPool is.
	IOThreads *DiskIOThreads
	// Chassis is the SMBIOS chassis information (type 3) the guest reads.
	Chassis *Chassis
	// LaunchSecurity runs the guest encrypted (AMD SEV, SEV-SNP, Intel
	// TDX). Refused: the launcher sets up no confidential guests.
	LaunchSecurity *LaunchSecurity
	// RebootPolicy is what a reboot from inside the guest does: Reboot (the
	// default) reboots the same domain; Terminate ends the VMI (Succeeded)
	// so that its VirtualMachine starts a new one from the current template.
	RebootPolicy *RebootPolicy
}

// IOThreadsPolicy is how disks share QEMU I/O threads.
// +enum
type IOThreadsPolicy string

// I/O thread policies.
const (
	IOThreadsPolicyShared           IOThreadsPolicy = "shared"
	IOThreadsPolicyAuto             IOThreadsPolicy = "auto"
	IOThreadsPolicySupplementalPool IOThreadsPolicy = "supplementalPool"
)

// RebootPolicy is what a reboot from inside the guest does.
// +enum
type RebootPolicy string

// Reboot policies.
const (
	// RebootPolicyReboot reboots the domain in place.
	RebootPolicyReboot RebootPolicy = "Reboot"
	// RebootPolicyTerminate ends the VMI when the guest reboots.
	RebootPolicyTerminate RebootPolicy = "Terminate"
)

// DiskIOThreads sizes the supplementalPool I/O thread pool.
type DiskIOThreads struct {
	// SupplementalPoolThreadCount is the number of I/O threads in the pool.
	SupplementalPoolThreadCount *uint32
}

// ResourceRequirements are the compute resources of the launcher pod.
type ResourceRequirements struct {
	// Requests of the launcher pod. The platform adds its own overhead on top.
	Requests corev1.ResourceList
	// Limits of the launcher pod.
	Limits corev1.ResourceList
	// OvercommitGuestOverhead leaves the platform's overhead out of the pod's
	// memory request (it is still added to the limit).
	OvercommitGuestOverhead bool
}

// CPU is the vCPU topology and model. vCPUs = sockets * cores * threads.
type CPU struct {
	// Cores per socket. Defaults to 1.
	Cores uint32
	// Sockets. Defaults to 1.
	Sockets uint32
	// Threads per core. Defaults to 1.
	Threads uint32
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// Empty lets the hypervisor choose. Guests here run under software
	// emulation (QEMU TCG), where there is no host CPU to pass through:
	// host-model and host-passthrough become QEMU's "max" CPU, every feature
	// TCG can emulate.
	Model string
	// MaxSockets is the most sockets CPU hotplug may grow the guest to.
	// Refused: this platform does not hotplug CPUs.
	MaxSockets uint32
	// Features adds or removes single CPU features on top of the model.
	Features []CPUFeature
	// DedicatedCPUPlacement pins each vCPU to a host CPU of its own.
	// Refused: the launcher pins no vCPUs to host CPUs, so there are no
	// CPUs to give a guest exclusively.
	DedicatedCPUPlacement bool
	// NUMA shapes the guest's NUMA topology after the pinned host CPUs.
	// Refused with dedicatedCpuPlacement.
	NUMA *NUMA
	// IsolateEmulatorThread gives QEMU's emulator thread a dedicated host
	// CPU of its own. Refused with dedicatedCpuPlacement.
	IsolateEmulatorThread bool
	// Realtime tunes pinned vCPUs for low latency. Refused with
	// dedicatedCpuPlacement.
	Realtime *Realtime
}

// CPU feature policies, as libvirt names them.
const (
	CPUFeaturePolicyForce    = "force"
	CPUFeaturePolicyRequire  = "require"
	CPUFeaturePolicyOptional = "optional"
	CPUFeaturePolicyDisable  = "disable"
	CPUFeaturePolicyForbid   = "forbid"
)

// CPU models with a special meaning.
const (
	CPUModelHostModel       = "host-model"
	CPUModelHostPassthrough = "host-passthrough"
)

// CPUFeature turns one CPU feature on or off.
type CPUFeature struct {
	// Name of the feature as libvirt knows it, such as vmx or pcid.
	Name string
	// Policy: force, require, optional, disable or forbid. Defaults to
	// require.
	Policy string
}

// NUMA is the guest's NUMA topology.
type NUMA struct {
	// GuestMappingPassthrough mirrors the host NUMA nodes of the pinned CPUs.
	GuestMappingPassthrough *NUMAGuestMappingPassthrough
}

// NUMAGuestMappingPassthrough mirrors the host NUMA nodes of the pinned CPUs.
type NUMAGuestMappingPassthrough struct{}

// Realtime tunes pinned vCPUs for real-time work.
type Realtime struct {
	// Mask selects the real-time vCPUs in libvirt's syntax, such as "0-3,^1".
	Mask string
}

// Memory is the memory of the guest.
type Memory struct {
	// Guest is the memory the guest sees. Defaults to resources.requests.memory.
	Guest *resource.Quantity
	// Hugepages backs the guest's memory with huge pages. Refused: the
	// launcher backs no guest memory with huge pages.
	Hugepages *Hugepages
	// MaxGuest is the most memory hotplug may grow the guest to. Refused:
	// this platform does not hotplug memory.
	MaxGuest *resource.Quantity
	// ReservedOverhead adds to the memory the launcher pod reserves beyond
	// the guest's.
	ReservedOverhead *ReservedOverhead
}

// Hugepages backs the guest's memory with huge pages.
type Hugepages struct {
	// PageSize, such as 2Mi or 1Gi.
	PageSize string
}

// MemLockRequirement says whether the guest's memory must be locked.
// +enum
type MemLockRequirement string

// Memory lock requirements.
const (
	MemLockRequired    MemLockRequirement = "Required"
	MemLockNotRequired MemLockRequirement = "NotRequired"
)

// ReservedOverhead is memory the launcher pod reserves beyond the guest's.
type ReservedOverhead struct {
	// AddedOverhead is added to the launcher pod's memory.
	AddedOverhead *resource.Quantity
	// MemLock: Required locks the guest's memory in RAM (for devices that
	// DMA into it), NotRequired (the default) does not. Required is
	// refused: no device here needs it.
	MemLock *MemLockRequirement
}

// Machine is the emulated chipset.
type Machine struct {
	// Type is a QEMU machine type, such as q35 or pc-q35-7.2.
	Type string
}

// Firmware is the identity and boot path of the guest.
type Firmware struct {
	// UUID is the SMBIOS system UUID the guest sees. When empty the VMI's
	// UID is used; a VirtualMachine sets one derived from its own UID so its
	// guests keep their identity across restarts.
	UUID types.UID
	// Serial is the SMBIOS system serial number.
	Serial string
	// Bootloader selects BIOS or EFI. Defaults to BIOS.
	Bootloader *Bootloader
	// KernelBoot boots a kernel and initrd directly, bypassing the boot loader.
	KernelBoot *KernelBoot
	// ACPI adds Windows licensing tables (SLIC, MSDM) from secret volumes.
	// Refused: secret volumes are not served by this platform yet.
	ACPI *ACPI
}

// ACPI names the volumes whose content becomes ACPI tables.
type ACPI struct {
	// SlicNameRef is the secret volume holding the SLIC table.
	SlicNameRef string
	// MsdmNameRef is the secret volume holding the MSDM table.
	MsdmNameRef string
}

// Bootloader selects the firmware. Exactly one member may be set.
type Bootloader struct {
	// BIOS boots with SeaBIOS.
	BIOS *BIOS
	// EFI boots with OVMF.
	EFI *EFI
}

// BIOS is legacy BIOS firmware.
type BIOS struct {
	// UseSerial sends the BIOS's output to the serial console.
	UseSerial *bool
}

// EFI is UEFI firmware.
type EFI struct {
	// SecureBoot enables UEFI Secure Boot. Defaults to false.
	SecureBoot *bool
	// Persistent keeps the EFI variable store (NVRAM) across restarts of
	// the VM. Refused: this platform keeps no per-VM state outside its
	// volumes yet.
	Persistent *bool
}

// KernelBoot boots a kernel directly.
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	KernelArgs string
	// Container is the image the kernel and initrd are taken from.
	Container *KernelBootContainer
}

// KernelBootContainer is an image holding a kernel and an initrd.
type KernelBootContainer struct {
	// Image reference.
	Image string
	// ImagePullSecret names a secret in the VMI's namespace.
	ImagePullSecret string
	// KernelPath is the absolute path of the kernel inside the image.
	KernelPath string
	// InitrdPath is the absolute path of the initrd inside the image.
	InitrdPath string
	// ImagePullPolicy, as for containers.
	ImagePullPolicy corev1.PullPolicy
}

// Chassis is the SMBIOS chassis information the guest reads.
type Chassis struct {
	// Manufacturer of the chassis.
	Manufacturer string
	// Version of the chassis.
	Version string
	// Serial number of the chassis.
	Serial string
	// Asset tag of the chassis.
	Asset string
	// Sku number of the chassis.
	Sku string
}

// LaunchSecurity runs the guest with encrypted memory. At most one member may
// be set.
type LaunchSecurity struct {
	// SEV is AMD Secure Encrypted Virtualization.
	SEV *SEV
	// SNP is AMD SEV with Secure Nested Paging.
	SNP *SEVSNP
	// TDX is Intel Trust Domain Extensions.
	TDX *TDX
}

// SEV is AMD Secure Encrypted Virtualization.
type SEV struct {
	// Policy of the guest.
	Policy *SEVPolicy
	// Attestation, when set, makes the guest wait for its owner's attestation.
	Attestation *SEVAttestation
	// Session is the guest owner's session blob, base64 encoded.
	Session string
	// DHCert is the guest owner's Diffie-Hellman key, base64 encoded.
	DHCert string
}

// SEVPolicy is the SEV guest policy.
type SEVPolicy struct {
	// EncryptedState requires SEV-ES (encrypted register state).
	EncryptedState *bool
}

// SEVSNP is AMD SEV-SNP.
type SEVSNP struct{}

// SEVAttestation asks for SEV attestation.
type SEVAttestation struct{}

// TDX is Intel Trust Domain Extensions.
type TDX struct{}
