package virtualization

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetype is the size of a VirtualMachine, shared by many:
// its vCPUs and memory, and where it may run. A VM that references one
// (spec.instancetype) takes these from it and must not set them itself.
// KubeVirt's instancetype.kubevirt.io/v1beta1 kind, same JSON.
type VirtualMachineInstancetype struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the size the VMs referencing this instancetype get.
	Spec VirtualMachineInstancetypeSpec
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeList is a list of VirtualMachineInstancetypes.
type VirtualMachineInstancetypeList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstancetype
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterInstancetype is a VirtualMachineInstancetype every
// namespace can use; a VM's spec.instancetype refers to this kind unless it
// names another.
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the size the VMs referencing this instancetype get.
	Spec VirtualMachineInstancetypeSpec
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterInstancetypeList is a list of
// VirtualMachineClusterInstancetypes.
type VirtualMachineClusterInstancetypeList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineClusterInstancetype
}

// VirtualMachineInstancetypeSpec is what an instancetype gives the VMs that
// reference it. cpu.guest and memory.guest are required: every instancetype
// says how many vCPUs and how much memory.
type VirtualMachineInstancetypeSpec struct {
	// NodeSelector must match a node's labels for the VM's instances to be
	// scheduled there. A VM that sets its own nodeSelector conflicts.
	NodeSelector map[string]string
	// SchedulerName of the instances' launcher pods. A VM that sets its own
	// schedulerName conflicts.
	SchedulerName string
	// CPU is the guest's vCPUs. Required.
	CPU CPUInstancetype
	// Memory is the guest's memory. Required.
	Memory MemoryInstancetype
	// IOThreadsPolicy is the instances' domain.ioThreadsPolicy: shared or
	// auto (supplementalPool is refused, as on a VMI). A VM that sets its
	// own conflicts.
	IOThreadsPolicy *IOThreadsPolicy
	// Annotations are added to the VM's instances. An annotation the VM's
	// template sets to another value conflicts.
	Annotations map[string]string
	// GPUs are passed through to the guest. Not supported, as on a VMI
	// (no device plugin): setting them is refused.
	GPUs []GPU
	// HostDevices are passed through to the guest. Not supported, as on a
	// VMI (no device plugin): setting them is refused.
	HostDevices []HostDevice
	// IOThreads sizes the supplementalPool I/O threads policy. Not
	// supported, as on a VMI (no pool of I/O threads): setting it is refused.
	IOThreads *DiskIOThreads
	// LaunchSecurity is SEV, SEV-SNP or TDX. Not supported, as on a VMI
	// (no KVM): setting it is refused.
	LaunchSecurity *LaunchSecurity
}

// CPUInstancetype is the CPU of an instancetype.
type CPUInstancetype struct {
	// Guest is the number of vCPUs the guest sees, laid out as sockets,
	// cores or threads as the VM's preference says (sockets by default).
	Guest uint32
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// A VM that sets its own model conflicts.
	Model *string
	// DedicatedCPUPlacement pins each vCPU to a dedicated host CPU. Not
	// supported: this platform does not pin vCPUs, so true is refused.
	DedicatedCPUPlacement *bool
	// IsolateEmulatorThread gives QEMU's emulator thread a host CPU of its
	// own. Not supported (it needs dedicatedCPUPlacement): true is refused.
	IsolateEmulatorThread *bool
	// MaxSockets is the most sockets CPU hotplug may grow the guest to. Not
	// supported: this platform has no CPU hotplug, so setting it is refused.
	MaxSockets *uint32
	// NUMA maps the guest's NUMA topology onto the host's. Not supported,
	// as on a VMI (no vCPU pinning): setting it is refused.
	NUMA *NUMA
	// Realtime tunes the vCPUs for real-time workloads. Not supported, as
	// on a VMI (no vCPU pinning): setting it is refused.
	Realtime *Realtime
}

// MemoryInstancetype is the memory of an instancetype.
type MemoryInstancetype struct {
	// Guest is the memory the guest sees.
	Guest resource.Quantity
	// OvercommitPercent lets the launcher pod request that much less memory
	// than the guest has (0 to 100; 10 requests 90% of guest): more guests
	// fit on a node, and a node that runs out of memory kills some. A VM
	// that sets resources.requests.memory conflicts.
	OvercommitPercent int32
	// MaxGuest is the most memory hotplug may grow the guest to. Not
	// supported: this platform has no memory hotplug, so setting it is
	// refused.
	MaxGuest *resource.Quantity
	// Hugepages backs the guest's memory with huge pages. Not supported, as
	// on a VMI (no huge-page backing): setting it is refused.
	Hugepages *Hugepages
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachinePreference is how a guest operating system likes its
// virtual hardware: disk and NIC models, firmware, machine type, CPU
// layout. A VM that references one (spec.preference) gets each preferred
// value only where its own template leaves the field empty.
// KubeVirt's instancetype.kubevirt.io/v1beta1 kind, same JSON.
type VirtualMachinePreference struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is what the VMs referencing this preference prefer.
	Spec VirtualMachinePreferenceSpec
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachinePreferenceList is a list of VirtualMachinePreferences.
type VirtualMachinePreferenceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachinePreference
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterPreference is a VirtualMachinePreference every
// namespace can use; a VM's spec.preference refers to this kind unless it
// names another.
type VirtualMachineClusterPreference struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is what the VMs referencing this preference prefer.
	Spec VirtualMachinePreferenceSpec
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterPreferenceList is a list of
// VirtualMachineClusterPreferences.
type VirtualMachineClusterPreferenceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineClusterPreference
}

// VirtualMachinePreferenceSpec is what a preference prefers. Every member
// is optional and fills only what the VM's template leaves empty.
type VirtualMachinePreferenceSpec struct {
	// CPU is the preferred layout of an instancetype's vCPUs.
	CPU *CPUPreferences
	// Devices are the preferred device models and buses.
	Devices *DevicePreferences
	// Firmware is the preferred boot firmware.
	Firmware *FirmwarePreferences
	// Machine is the preferred machine type.
	Machine *MachinePreferences
	// PreferredSubdomain is the instances' subdomain when the VM sets none.
	PreferredSubdomain *string
	// PreferredTerminationGracePeriodSeconds is the instances' grace period
	// when the VM sets none.
	PreferredTerminationGracePeriodSeconds *int64
	// Requirements are the least vCPUs and memory the guest needs: a VM
	// (with its instancetype) that offers less is refused.
	Requirements *PreferenceRequirements
	// Annotations are added to the VM's instances unless the template sets
	// them.
	Annotations map[string]string
	// PreferSpreadSocketToCoreRatio is the cores per socket of the spread
	// topology. Defaults to 2.
	PreferSpreadSocketToCoreRatio uint32
	// PreferredArchitecture is the guest's CPU architecture. This platform
	// runs amd64 guests only: any other value is refused.
	PreferredArchitecture *string
	// Clock is the preferred guest clock.
	Clock *ClockPreferences
	// Features are the preferred hypervisor features.
	Features *FeaturePreferences
	// Volumes are the preferred volume settings.
	Volumes *VolumePreferences
	// PreferredLaunchSecurity is domain.launchSecurity when the VM sets
	// none. A VMI refuses launch security, so a VM using a preference with
	// it is refused at spec.template.spec.domain.launchSecurity.
	PreferredLaunchSecurity *LaunchSecurity
}

// ClockPreferences are the preferred guest clock.
type ClockPreferences struct {
	// PreferredClockOffset is the clock's offset (utc or timezone) when the
	// VM sets neither.
	PreferredClockOffset *ClockOffset
	// PreferredTimer is the clock's timers when the VM sets none.
	PreferredTimer *Timer
}

// FeaturePreferences are the preferred hypervisor features; each fills the
// VM's feature of that name when the VM leaves it empty.
type FeaturePreferences struct {
	// PreferredAcpi is features.acpi. As in KubeVirt it replaces the VM's
	// (whose acpi cannot be told unset from enabled).
	PreferredAcpi *FeatureState
	// PreferredApic is features.apic when the VM sets none.
	PreferredApic *FeatureAPIC
	// PreferredHyperv fills each Hyper-V enlightenment the VM leaves unset.
	PreferredHyperv *FeatureHyperv
	// PreferredKvm is features.kvm when the VM sets none.
	PreferredKvm *FeatureKVM
	// PreferredPvspinlock is features.pvspinlock when the VM sets none.
	PreferredPvspinlock *FeatureState
	// PreferredSmm is features.smm when the VM sets none.
	PreferredSmm *FeatureState
}

// VolumePreferences are the preferred volume settings.
type VolumePreferences struct {
	// PreferredStorageClassName is the storage class of the VM's
	// DataVolume templates that name none. This platform has no DataVolume
	// templates (they are refused), so it never applies.
	PreferredStorageClassName string
}

// PreferredCPUTopology is how an instancetype's vCPUs are shown to the guest.
type PreferredCPUTopology string

const (
	// PreferSockets shows each vCPU as a socket of one core (the default).
	PreferSockets PreferredCPUTopology = "sockets"
	// PreferCores shows the vCPUs as cores of one socket.
	PreferCores PreferredCPUTopology = "cores"
	// PreferThreads shows the vCPUs as threads of one core.
	PreferThreads PreferredCPUTopology = "threads"
	// PreferSpread spreads the vCPUs over sockets and cores (and threads),
	// as spreadOptions says.
	PreferSpread PreferredCPUTopology = "spread"
	// PreferAny takes the template's own topology when it has one; with an
	// instancetype it is sockets.
	PreferAny PreferredCPUTopology = "any"

	// The v1alpha spellings KubeVirt still accepts.
	DeprecatedPreferSockets PreferredCPUTopology = "preferSockets"
	DeprecatedPreferCores   PreferredCPUTopology = "preferCores"
	DeprecatedPreferThreads PreferredCPUTopology = "preferThreads"
	DeprecatedPreferSpread  PreferredCPUTopology = "preferSpread"
	DeprecatedPreferAny     PreferredCPUTopology = "preferAny"
)

// CPUPreferences is the preferred layout of the vCPUs.
type CPUPreferences struct {
	// PreferredCPUTopology: sockets (default), cores, threads, spread or any.
	PreferredCPUTopology *PreferredCPUTopology
	// SpreadOptions shape the spread topology.
	SpreadOptions *SpreadOptions
	// PreferredCPUFeatures are added to cpu.features, each unless the VM
	// lists a feature of that name.
	PreferredCPUFeatures []CPUFeature
}

// SpreadAcross is what the spread topology spreads vCPUs over.
type SpreadAcross string

const (
	// SpreadAcrossSocketsCores: ratio cores per socket (the default).
	SpreadAcrossSocketsCores SpreadAcross = "SocketsCores"
	// SpreadAcrossCoresThreads: ratio (2) threads per core, one socket.
	SpreadAcrossCoresThreads SpreadAcross = "CoresThreads"
	// SpreadAcrossSocketsCoresThreads: ratio cores per socket, 2 threads
	// per core.
	SpreadAcrossSocketsCoresThreads SpreadAcross = "SocketsCoresThreads"
)

// SpreadOptions shape the spread topology.
type SpreadOptions struct {
	// Across: SocketsCores (default), CoresThreads or SocketsCoresThreads.
	Across *SpreadAcross
	// Ratio is the cores per socket (SocketsCores, SocketsCoresThreads) or
	// the threads per core (CoresThreads, where only 2 is accepted).
	// Defaults to preferSpreadSocketToCoreRatio, else 2.
	Ratio *uint32
}

// DevicePreferences are the preferred device models and buses.
type DevicePreferences struct {
	// PreferredAutoattachGraphicsDevice is autoattachGraphicsDevice when the
	// VM does not set it.
	PreferredAutoattachGraphicsDevice *bool
	// PreferredAutoattachPodInterface is autoattachPodInterface when the VM
	// does not set it.
	PreferredAutoattachPodInterface *bool
	// PreferredAutoattachSerialConsole is autoattachSerialConsole when the
	// VM does not set it.
	PreferredAutoattachSerialConsole *bool
	// PreferredDiskBus is the bus of each disk that names none.
	PreferredDiskBus DiskBus
	// PreferredCdromBus is the bus of each CD-ROM that names none.
	PreferredCdromBus DiskBus
	// PreferredLunBus is the bus of each LUN that names none. This
	// platform has no LUN disks, so it never applies.
	PreferredLunBus DiskBus
	// PreferredInterfaceModel is the model of each NIC that names none.
	PreferredInterfaceModel string
	// PreferredRng adds a virtio random number generator when the VM has
	// none.
	PreferredRng *Rng
	// PreferredInterfaceMasquerade makes each NIC without a binding a
	// masquerade NIC.
	PreferredInterfaceMasquerade *InterfaceMasquerade
	// PreferredAutoattachMemBalloon is autoattachMemBalloon when the VM
	// does not set it.
	PreferredAutoattachMemBalloon *bool
	// PreferredAutoattachInputDevice is autoattachInputDevice when the VM
	// does not set it.
	PreferredAutoattachInputDevice *bool
	// PreferredDisableHotplug is disableHotplug. As in KubeVirt it
	// replaces the VM's (a plain bool, unset cannot be told from false).
	PreferredDisableHotplug *bool
	// PreferredVirtualGPUOptions are the virtualGPUOptions of each GPU
	// that has none. GPUs are refused on this platform, so it never
	// applies to an accepted VM.
	PreferredVirtualGPUOptions *VGPUOptions
	// PreferredSoundModel is the model of the VM's sound device when it
	// names none; it adds no sound device.
	PreferredSoundModel string
	// PreferredUseVirtioTransitional is useVirtioTransitional when the VM
	// does not set it.
	PreferredUseVirtioTransitional *bool
	// PreferredInputBus is the bus of each input device that names none.
	PreferredInputBus InputBus
	// PreferredInputType is the type of each input device that names none.
	PreferredInputType InputType
	// PreferredDiskDedicatedIoThread is dedicatedIOThread of each virtio
	// disk that does not set it.
	PreferredDiskDedicatedIoThread *bool
	// PreferredDiskCache is the cache mode of each disk that names none.
	PreferredDiskCache DriverCache
	// PreferredDiskIO is the I/O mode of each disk that names none.
	PreferredDiskIO DriverIO
	// PreferredDiskBlockSize is the block size of each disk that has none.
	PreferredDiskBlockSize *BlockSize
	// PreferredBlockMultiQueue is blockMultiQueue when the VM does not set
	// it.
	PreferredBlockMultiQueue *bool
	// PreferredNetworkInterfaceMultiQueue is networkInterfaceMultiqueue
	// when the VM does not set it. A VMI refuses true (single-queue taps),
	// so a VM using a preference with true is refused there.
	PreferredNetworkInterfaceMultiQueue *bool
	// PreferredTPM is the VM's TPM when it has none (an emulated TPM 2.0,
	// swtpm). A VMI refuses a persistent one (not implemented yet), so a VM
	// using a preference with one is refused at
	// spec.template.spec.domain.devices.tpm.persistent.
	PreferredTPM *TPMDevice
	// PreferredPanicDeviceModel is the model of each panic device that
	// names none; a VM without panic devices gets one of this model.
	PreferredPanicDeviceModel *PanicDeviceModel
	// PreferredVideoType is the type of the VM's video device when it
	// names none.
	PreferredVideoType *string
}

// FirmwarePreferences are the preferred boot firmware.
type FirmwarePreferences struct {
	// PreferredUseBios boots with BIOS when the VM chooses no boot loader.
	PreferredUseBios *bool
	// PreferredUseBiosSerial sends the BIOS's output to the serial console
	// when the VM boots with BIOS and does not say.
	PreferredUseBiosSerial *bool
	// PreferredUseEfi boots with EFI when the VM chooses no boot loader.
	// Deprecated by KubeVirt in favour of preferredEfi.
	PreferredUseEfi *bool
	// PreferredUseSecureBoot turns Secure Boot on when the VM boots with EFI
	// and does not say. Deprecated by KubeVirt in favour of preferredEfi.
	PreferredUseSecureBoot *bool
	// PreferredEfi is the EFI boot loader when the VM chooses none.
	PreferredEfi *EFI
}

// MachinePreferences are the preferred machine.
type MachinePreferences struct {
	// PreferredMachineType is the machine type when the VM sets none.
	PreferredMachineType string
}

// PreferenceRequirements are the least a guest needs.
type PreferenceRequirements struct {
	// CPU is the least vCPUs.
	CPU *CPUPreferenceRequirement
	// Memory is the least memory.
	Memory *MemoryPreferenceRequirement
	// Architecture is the guest architecture the VM must have. This
	// platform runs amd64 guests only: any other value is refused.
	Architecture *string
}

// CPUPreferenceRequirement is the least vCPUs a guest needs.
type CPUPreferenceRequirement struct {
	// Guest is the least number of vCPUs.
	Guest uint32
}

// MemoryPreferenceRequirement is the least memory a guest needs.
type MemoryPreferenceRequirement struct {
	// Guest is the least memory.
	Guest resource.Quantity
}

// InstancetypeMatcher is a VM's reference to the instancetype it takes its
// size from.
type InstancetypeMatcher struct {
	// Name of the instancetype.
	Name string
	// Kind is VirtualMachineClusterInstancetype (the default) or
	// VirtualMachineInstancetype (in the VM's namespace); the lower-case
	// singular and plural resource names are accepted too.
	Kind string
	// RevisionName is the VirtualMachineInstancetypeRevision, in the VM's
	// namespace, holding the copy of the instancetype the VM uses (where
	// KubeVirt names an apps/v1 ControllerRevision). The VM controller
	// captures it the first time it sees the VM, so later edits of the
	// instancetype do not change the VM; clear it (with the name, or alone)
	// to take the instancetype as it is now.
	RevisionName string
	// InferFromVolume is KubeVirt's inference of the instancetype from a
	// volume's labels. Not supported: setting it is refused.
	InferFromVolume string
	// InferFromVolumeFailurePolicy belongs to inferFromVolume. Not
	// supported: setting it is refused.
	InferFromVolumeFailurePolicy *string
}

// PreferenceMatcher is a VM's reference to the preference it takes its
// defaults from.
type PreferenceMatcher struct {
	// Name of the preference.
	Name string
	// Kind is VirtualMachineClusterPreference (the default) or
	// VirtualMachinePreference (in the VM's namespace); the lower-case
	// singular and plural resource names are accepted too.
	Kind string
	// RevisionName is the VirtualMachineInstancetypeRevision, in the VM's
	// namespace, holding the copy of the preference the VM uses (see
	// InstancetypeMatcher).
	RevisionName string
	// InferFromVolume is not supported: setting it is refused.
	InferFromVolume string
	// InferFromVolumeFailurePolicy is not supported: setting it is refused.
	InferFromVolumeFailurePolicy *string
}

// InstancetypeStatusRef is the instancetype or preference a VM's instances
// were last expanded with, and the revision of it.
type InstancetypeStatusRef struct {
	// Name of the instancetype or preference.
	Name string
	// Kind of the instancetype or preference.
	Kind string
	// ControllerRevisionRef names the revision holding the copy (KubeVirt's
	// field name; here a VirtualMachineInstancetypeRevision).
	ControllerRevisionRef *ControllerRevisionRef
}

// ControllerRevisionRef names a VirtualMachineInstancetypeRevision in the
// VM's namespace.
type ControllerRevisionRef struct {
	// Name of the revision.
	Name string
}
