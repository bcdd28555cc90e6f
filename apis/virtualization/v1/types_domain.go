package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of a guest.
type DomainSpec struct {
	// Resources are the compute resources of the launcher pod. When
	// memory.guest is not set, requests.memory is the guest's memory.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,1,opt,name=resources"`
	// CPU topology and model. Defaults to one core.
	// +optional
	CPU *CPU `json:"cpu,omitempty" protobuf:"bytes,2,opt,name=cpu"`
	// Memory of the guest.
	// +optional
	Memory *Memory `json:"memory,omitempty" protobuf:"bytes,3,opt,name=memory"`
	// Machine type. Defaults to q35.
	// +optional
	Machine *Machine `json:"machine,omitempty" protobuf:"bytes,4,opt,name=machine"`
	// Firmware: identity, boot loader, direct kernel boot.
	// +optional
	Firmware *Firmware `json:"firmware,omitempty" protobuf:"bytes,5,opt,name=firmware"`
	// Devices attached to the guest.
	Devices Devices `json:"devices" protobuf:"bytes,6,opt,name=devices"`
	// Clock is the guest's real-time clock: its offset from UTC (utc or
	// timezone) and the timers the guest sees. Defaults to UTC with the
	// machine type's timers.
	// +optional
	Clock *Clock `json:"clock,omitempty" protobuf:"bytes,7,opt,name=clock"`
	// Features are platform features of the guest: ACPI, APIC, SMM, the
	// Hyper-V enlightenments, how KVM shows itself, paravirtual spinlocks.
	// ACPI and APIC are on unless disabled here.
	// +optional
	Features *Features `json:"features,omitempty" protobuf:"bytes,8,opt,name=features"`
	// IOThreadsPolicy gives virtio disks QEMU I/O threads: shared (one for
	// all), auto (up to two per vCPU, shared round-robin) or
	// supplementalPool (refused: the launcher maps no disk queues to a pool of I/O threads). A disk with
	// dedicatedIOThread gets one of its own whatever the policy.
	// +optional
	IOThreadsPolicy *IOThreadsPolicy `json:"ioThreadsPolicy,omitempty" protobuf:"bytes,9,opt,name=ioThreadsPolicy,casttype=IOThreadsPolicy"`
	// IOThreads sizes the supplementalPool I/O threads policy. Refused, as
	// supplementalPool is.
	// +optional
	IOThreads *DiskIOThreads `json:"ioThreads,omitempty" protobuf:"bytes,10,opt,name=ioThreads"`
	// Chassis is the SMBIOS chassis information (type 3) the guest reads.
	// +optional
	Chassis *Chassis `json:"chassis,omitempty" protobuf:"bytes,11,opt,name=chassis"`
	// LaunchSecurity runs the guest encrypted (AMD SEV, SEV-SNP, Intel
	// TDX). Refused: the launcher sets up no confidential guests.
	// +optional
	LaunchSecurity *LaunchSecurity `json:"launchSecurity,omitempty" protobuf:"bytes,12,opt,name=launchSecurity"`
	// RebootPolicy is what a reboot from inside the guest does: Reboot (the
	// default) reboots the same domain; Terminate ends the VMI (Succeeded)
	// so that its VirtualMachine starts a new one from the current template.
	// +optional
	RebootPolicy *RebootPolicy `json:"rebootPolicy,omitempty" protobuf:"bytes,13,opt,name=rebootPolicy,casttype=RebootPolicy"`
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
	// +optional
	SupplementalPoolThreadCount *uint32 `json:"supplementalPoolThreadCount,omitempty" protobuf:"varint,1,opt,name=supplementalPoolThreadCount"`
}

// ResourceRequirements are the compute resources of the launcher pod.
type ResourceRequirements struct {
	// Requests of the launcher pod. The platform adds its own overhead on top.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty" protobuf:"bytes,1,rep,name=requests,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// Limits of the launcher pod.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty" protobuf:"bytes,2,rep,name=limits,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// OvercommitGuestOverhead leaves the platform's overhead out of the pod's
	// memory request (it is still added to the limit).
	// +optional
	OvercommitGuestOverhead bool `json:"overcommitGuestOverhead,omitempty" protobuf:"varint,3,opt,name=overcommitGuestOverhead"`
}

// CPU is the vCPU topology and model. vCPUs = sockets * cores * threads.
type CPU struct {
	// Cores per socket. Defaults to 1.
	// +optional
	Cores uint32 `json:"cores,omitempty" protobuf:"varint,1,opt,name=cores"`
	// Sockets. Defaults to 1.
	// +optional
	Sockets uint32 `json:"sockets,omitempty" protobuf:"varint,2,opt,name=sockets"`
	// Threads per core. Defaults to 1.
	// +optional
	Threads uint32 `json:"threads,omitempty" protobuf:"varint,3,opt,name=threads"`
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// Empty lets the hypervisor choose. Guests here run under software
	// emulation (QEMU TCG), where there is no host CPU to pass through:
	// host-model and host-passthrough become QEMU's "max" CPU, every feature
	// TCG can emulate.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,4,opt,name=model"`
	// MaxSockets is the most sockets CPU hotplug may grow the guest to.
	// Refused: this platform does not hotplug CPUs.
	// +optional
	MaxSockets uint32 `json:"maxSockets,omitempty" protobuf:"varint,5,opt,name=maxSockets"`
	// Features adds or removes single CPU features on top of the model.
	// +optional
	// +listType=map
	// +listMapKey=name
	Features []CPUFeature `json:"features,omitempty" protobuf:"bytes,6,rep,name=features"`
	// DedicatedCPUPlacement pins each vCPU to a host CPU of its own.
	// Refused: the launcher pins no vCPUs to host CPUs, so there are no
	// CPUs to give a guest exclusively.
	// +optional
	DedicatedCPUPlacement bool `json:"dedicatedCpuPlacement,omitempty" protobuf:"varint,7,opt,name=dedicatedCpuPlacement"`
	// NUMA shapes the guest's NUMA topology after the pinned host CPUs.
	// Refused with dedicatedCpuPlacement.
	// +optional
	NUMA *NUMA `json:"numa,omitempty" protobuf:"bytes,8,opt,name=numa"`
	// IsolateEmulatorThread gives QEMU's emulator thread a dedicated host
	// CPU of its own. Refused with dedicatedCpuPlacement.
	// +optional
	IsolateEmulatorThread bool `json:"isolateEmulatorThread,omitempty" protobuf:"varint,9,opt,name=isolateEmulatorThread"`
	// Realtime tunes pinned vCPUs for low latency. Refused with
	// dedicatedCpuPlacement.
	// +optional
	Realtime *Realtime `json:"realtime,omitempty" protobuf:"bytes,10,opt,name=realtime"`
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
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Policy: force, require, optional, disable or forbid. Defaults to
	// require.
	// +optional
	Policy string `json:"policy,omitempty" protobuf:"bytes,2,opt,name=policy"`
}

// NUMA is the guest's NUMA topology.
type NUMA struct {
	// GuestMappingPassthrough mirrors the host NUMA nodes of the pinned CPUs.
	// +optional
	GuestMappingPassthrough *NUMAGuestMappingPassthrough `json:"guestMappingPassthrough,omitempty" protobuf:"bytes,1,opt,name=guestMappingPassthrough"`
}

// NUMAGuestMappingPassthrough mirrors the host NUMA nodes of the pinned CPUs.
type NUMAGuestMappingPassthrough struct{}

// Realtime tunes pinned vCPUs for real-time work.
type Realtime struct {
	// Mask selects the real-time vCPUs in libvirt's syntax, such as "0-3,^1".
	// +optional
	Mask string `json:"mask,omitempty" protobuf:"bytes,1,opt,name=mask"`
}

// Memory is the memory of the guest.
type Memory struct {
	// Guest is the memory the guest sees. Defaults to resources.requests.memory.
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty" protobuf:"bytes,1,opt,name=guest"`
	// Hugepages backs the guest's memory with huge pages. Refused: the
	// launcher backs no guest memory with huge pages.
	// +optional
	Hugepages *Hugepages `json:"hugepages,omitempty" protobuf:"bytes,2,opt,name=hugepages"`
	// MaxGuest is the most memory hotplug may grow the guest to. Refused:
	// this platform does not hotplug memory.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty" protobuf:"bytes,3,opt,name=maxGuest"`
	// ReservedOverhead adds to the memory the launcher pod reserves beyond
	// the guest's.
	// +optional
	ReservedOverhead *ReservedOverhead `json:"reservedOverhead,omitempty" protobuf:"bytes,4,opt,name=reservedOverhead"`
}

// Hugepages backs the guest's memory with huge pages.
type Hugepages struct {
	// PageSize, such as 2Mi or 1Gi.
	// +optional
	PageSize string `json:"pageSize,omitempty" protobuf:"bytes,1,opt,name=pageSize"`
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
	// +optional
	AddedOverhead *resource.Quantity `json:"addedOverhead,omitempty" protobuf:"bytes,1,opt,name=addedOverhead"`
	// MemLock: Required locks the guest's memory in RAM (for devices that
	// DMA into it), NotRequired (the default) does not. Required is
	// refused: no device here needs it.
	// +optional
	MemLock *MemLockRequirement `json:"memLock,omitempty" protobuf:"bytes,2,opt,name=memLock,casttype=MemLockRequirement"`
}

// Machine is the emulated chipset.
type Machine struct {
	// Type is a QEMU machine type, such as q35 or pc-q35-7.2.
	// +optional
	Type string `json:"type" protobuf:"bytes,1,opt,name=type"`
}

// Firmware is the identity and boot path of the guest.
type Firmware struct {
	// UUID is the SMBIOS system UUID the guest sees. When empty the VMI's
	// UID is used; a VirtualMachine sets one derived from its own UID so its
	// guests keep their identity across restarts.
	// +optional
	UUID types.UID `json:"uuid,omitempty" protobuf:"bytes,1,opt,name=uuid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// Serial is the SMBIOS system serial number.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,2,opt,name=serial"`
	// Bootloader selects BIOS or EFI. Defaults to BIOS.
	// +optional
	Bootloader *Bootloader `json:"bootloader,omitempty" protobuf:"bytes,3,opt,name=bootloader"`
	// KernelBoot boots a kernel and initrd directly, bypassing the boot loader.
	// +optional
	KernelBoot *KernelBoot `json:"kernelBoot,omitempty" protobuf:"bytes,4,opt,name=kernelBoot"`
	// ACPI adds Windows licensing tables (SLIC, MSDM) from secret volumes.
	// Refused: secret volumes are not served by this platform yet.
	// +optional
	ACPI *ACPI `json:"acpi,omitempty" protobuf:"bytes,5,opt,name=acpi"`
}

// ACPI names the volumes whose content becomes ACPI tables.
type ACPI struct {
	// SlicNameRef is the secret volume holding the SLIC table.
	// +optional
	SlicNameRef string `json:"slicNameRef,omitempty" protobuf:"bytes,1,opt,name=slicNameRef"`
	// MsdmNameRef is the secret volume holding the MSDM table.
	// +optional
	MsdmNameRef string `json:"msdmNameRef,omitempty" protobuf:"bytes,2,opt,name=msdmNameRef"`
}

// Bootloader selects the firmware. Exactly one member may be set.
type Bootloader struct {
	// BIOS boots with SeaBIOS.
	// +optional
	BIOS *BIOS `json:"bios,omitempty" protobuf:"bytes,1,opt,name=bios"`
	// EFI boots with OVMF.
	// +optional
	EFI *EFI `json:"efi,omitempty" protobuf:"bytes,2,opt,name=efi"`
}

// BIOS is legacy BIOS firmware.
type BIOS struct {
	// UseSerial sends the BIOS's output to the serial console.
	// +optional
	UseSerial *bool `json:"useSerial,omitempty" protobuf:"varint,1,opt,name=useSerial"`
}

// EFI is UEFI firmware.
type EFI struct {
	// SecureBoot enables UEFI Secure Boot. Defaults to false.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty" protobuf:"varint,1,opt,name=secureBoot"`
	// Persistent keeps the EFI variable store (NVRAM) across restarts of
	// the VM. Refused: this platform keeps no per-VM state outside its
	// volumes yet.
	// +optional
	Persistent *bool `json:"persistent,omitempty" protobuf:"varint,2,opt,name=persistent"`
}

// KernelBoot boots a kernel directly.
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	// +optional
	KernelArgs string `json:"kernelArgs,omitempty" protobuf:"bytes,1,opt,name=kernelArgs"`
	// Container is the image the kernel and initrd are taken from.
	// +optional
	Container *KernelBootContainer `json:"container,omitempty" protobuf:"bytes,2,opt,name=container"`
}

// KernelBootContainer is an image holding a kernel and an initrd.
type KernelBootContainer struct {
	// Image reference.
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
	// ImagePullSecret names a secret in the VMI's namespace.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty" protobuf:"bytes,2,opt,name=imagePullSecret"`
	// KernelPath is the absolute path of the kernel inside the image.
	// +optional
	KernelPath string `json:"kernelPath,omitempty" protobuf:"bytes,3,opt,name=kernelPath"`
	// InitrdPath is the absolute path of the initrd inside the image.
	// +optional
	InitrdPath string `json:"initrdPath,omitempty" protobuf:"bytes,4,opt,name=initrdPath"`
	// ImagePullPolicy, as for containers.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty" protobuf:"bytes,5,opt,name=imagePullPolicy,casttype=k8s.io/api/core/v1.PullPolicy"`
}

// Chassis is the SMBIOS chassis information the guest reads.
type Chassis struct {
	// Manufacturer of the chassis.
	// +optional
	Manufacturer string `json:"manufacturer,omitempty" protobuf:"bytes,1,opt,name=manufacturer"`
	// Version of the chassis.
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,2,opt,name=version"`
	// Serial number of the chassis.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,3,opt,name=serial"`
	// Asset tag of the chassis.
	// +optional
	Asset string `json:"asset,omitempty" protobuf:"bytes,4,opt,name=asset"`
	// Sku number of the chassis.
	// +optional
	Sku string `json:"sku,omitempty" protobuf:"bytes,5,opt,name=sku"`
}

// LaunchSecurity runs the guest with encrypted memory. At most one member may
// be set.
type LaunchSecurity struct {
	// SEV is AMD Secure Encrypted Virtualization.
	// +optional
	SEV *SEV `json:"sev,omitempty" protobuf:"bytes,1,opt,name=sev"`
	// SNP is AMD SEV with Secure Nested Paging.
	// +optional
	SNP *SEVSNP `json:"snp,omitempty" protobuf:"bytes,2,opt,name=snp"`
	// TDX is Intel Trust Domain Extensions.
	// +optional
	TDX *TDX `json:"tdx,omitempty" protobuf:"bytes,3,opt,name=tdx"`
}

// SEV is AMD Secure Encrypted Virtualization.
type SEV struct {
	// Policy of the guest.
	// +optional
	Policy *SEVPolicy `json:"policy,omitempty" protobuf:"bytes,1,opt,name=policy"`
	// Attestation, when set, makes the guest wait for its owner's attestation.
	// +optional
	Attestation *SEVAttestation `json:"attestation,omitempty" protobuf:"bytes,2,opt,name=attestation"`
	// Session is the guest owner's session blob, base64 encoded.
	// +optional
	Session string `json:"session,omitempty" protobuf:"bytes,3,opt,name=session"`
	// DHCert is the guest owner's Diffie-Hellman key, base64 encoded.
	// +optional
	DHCert string `json:"dhCert,omitempty" protobuf:"bytes,4,opt,name=dhCert"`
}

// SEVPolicy is the SEV guest policy.
type SEVPolicy struct {
	// EncryptedState requires SEV-ES (encrypted register state).
	// +optional
	EncryptedState *bool `json:"encryptedState,omitempty" protobuf:"varint,1,opt,name=encryptedState"`
}

// SEVSNP is AMD SEV-SNP.
type SEVSNP struct{}

// SEVAttestation asks for SEV attestation.
type SEVAttestation struct{}

// TDX is Intel Trust Domain Extensions.
type TDX struct{}
