package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetype is the size of a VirtualMachine, shared by many:
// its vCPUs and memory, and where it may run. A VM that references one
// (spec.instancetype) takes these from it and must not set them itself.
// KubeVirt's instancetype.kubevirt.io/v1beta1 kind, same JSON.
type VirtualMachineInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the size the VMs referencing this instancetype get.
	Spec VirtualMachineInstancetypeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeList is a list of VirtualMachineInstancetypes.
type VirtualMachineInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstancetype `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterInstancetype is a VirtualMachineInstancetype every
// namespace can use; a VM's spec.instancetype refers to this kind unless it
// names another.
type VirtualMachineClusterInstancetype struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the size the VMs referencing this instancetype get.
	Spec VirtualMachineInstancetypeSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterInstancetypeList is a list of
// VirtualMachineClusterInstancetypes.
type VirtualMachineClusterInstancetypeList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineClusterInstancetype `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstancetypeSpec is what an instancetype gives the VMs that
// reference it. cpu.guest and memory.guest are required: every instancetype
// says how many vCPUs and how much memory.
type VirtualMachineInstancetypeSpec struct {
	// NodeSelector must match a node's labels for the VM's instances to be
	// scheduled there. A VM that sets its own nodeSelector conflicts.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,1,rep,name=nodeSelector"`
	// SchedulerName of the instances' launcher pods. A VM that sets its own
	// schedulerName conflicts.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,2,opt,name=schedulerName"`
	// CPU is the guest's vCPUs. Required.
	CPU CPUInstancetype `json:"cpu" protobuf:"bytes,3,opt,name=cpu"`
	// Memory is the guest's memory. Required.
	Memory MemoryInstancetype `json:"memory" protobuf:"bytes,4,opt,name=memory"`
	// IOThreadsPolicy is the instances' domain.ioThreadsPolicy: shared or
	// auto (supplementalPool is refused, as on a VMI). A VM that sets its
	// own conflicts.
	// +optional
	IOThreadsPolicy *IOThreadsPolicy `json:"ioThreadsPolicy,omitempty" protobuf:"bytes,5,opt,name=ioThreadsPolicy,casttype=IOThreadsPolicy"`
	// Annotations are added to the VM's instances. An annotation the VM's
	// template sets to another value conflicts.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,6,rep,name=annotations"`
	// GPUs are passed through to the guest. Not supported, as on a VMI
	// (no device plugin): setting them is refused.
	// +optional
	// +listType=atomic
	GPUs []GPU `json:"gpus,omitempty" protobuf:"bytes,7,rep,name=gpus"`
	// HostDevices are passed through to the guest. Not supported, as on a
	// VMI (no device plugin): setting them is refused.
	// +optional
	// +listType=atomic
	HostDevices []HostDevice `json:"hostDevices,omitempty" protobuf:"bytes,8,rep,name=hostDevices"`
	// IOThreads sizes the supplementalPool I/O threads policy. Not
	// supported, as on a VMI (no pool of I/O threads): setting it is refused.
	// +optional
	IOThreads *DiskIOThreads `json:"ioThreads,omitempty" protobuf:"bytes,9,opt,name=ioThreads"`
	// LaunchSecurity is SEV, SEV-SNP or TDX. Not supported, as on a VMI
	// (no KVM): setting it is refused.
	// +optional
	LaunchSecurity *LaunchSecurity `json:"launchSecurity,omitempty" protobuf:"bytes,10,opt,name=launchSecurity"`
}

// CPUInstancetype is the CPU of an instancetype.
type CPUInstancetype struct {
	// Guest is the number of vCPUs the guest sees, laid out as sockets,
	// cores or threads as the VM's preference says (sockets by default).
	Guest uint32 `json:"guest" protobuf:"varint,1,opt,name=guest"`
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// A VM that sets its own model conflicts.
	// +optional
	Model *string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
	// DedicatedCPUPlacement pins each vCPU to a dedicated host CPU. Not
	// supported: this platform does not pin vCPUs, so true is refused.
	// +optional
	DedicatedCPUPlacement *bool `json:"dedicatedCPUPlacement,omitempty" protobuf:"varint,3,opt,name=dedicatedCPUPlacement"`
	// IsolateEmulatorThread gives QEMU's emulator thread a host CPU of its
	// own. Not supported (it needs dedicatedCPUPlacement): true is refused.
	// +optional
	IsolateEmulatorThread *bool `json:"isolateEmulatorThread,omitempty" protobuf:"varint,4,opt,name=isolateEmulatorThread"`
	// MaxSockets is the most sockets CPU hotplug may grow the guest to. Not
	// supported: this platform has no CPU hotplug, so setting it is refused.
	// +optional
	MaxSockets *uint32 `json:"maxSockets,omitempty" protobuf:"varint,5,opt,name=maxSockets"`
	// NUMA maps the guest's NUMA topology onto the host's. Not supported,
	// as on a VMI (no vCPU pinning): setting it is refused.
	// +optional
	NUMA *NUMA `json:"numa,omitempty" protobuf:"bytes,6,opt,name=numa"`
	// Realtime tunes the vCPUs for real-time workloads. Not supported, as
	// on a VMI (no vCPU pinning): setting it is refused.
	// +optional
	Realtime *Realtime `json:"realtime,omitempty" protobuf:"bytes,7,opt,name=realtime"`
}

// MemoryInstancetype is the memory of an instancetype.
type MemoryInstancetype struct {
	// Guest is the memory the guest sees.
	Guest resource.Quantity `json:"guest" protobuf:"bytes,1,opt,name=guest"`
	// OvercommitPercent lets the launcher pod request that much less memory
	// than the guest has (0 to 100; 10 requests 90% of guest): more guests
	// fit on a node, and a node that runs out of memory kills some. A VM
	// that sets resources.requests.memory conflicts.
	// +optional
	OvercommitPercent int32 `json:"overcommitPercent,omitempty" protobuf:"varint,2,opt,name=overcommitPercent"`
	// MaxGuest is the most memory hotplug may grow the guest to. Not
	// supported: this platform has no memory hotplug, so setting it is
	// refused.
	// +optional
	MaxGuest *resource.Quantity `json:"maxGuest,omitempty" protobuf:"bytes,3,opt,name=maxGuest"`
	// Hugepages backs the guest's memory with huge pages. Not supported, as
	// on a VMI (no huge-page backing): setting it is refused.
	// +optional
	Hugepages *Hugepages `json:"hugepages,omitempty" protobuf:"bytes,4,opt,name=hugepages"`
}

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachinePreference is how a guest operating system likes its
// virtual hardware: disk and NIC models, firmware, machine type, CPU
// layout. A VM that references one (spec.preference) gets each preferred
// value only where its own template leaves the field empty.
// KubeVirt's instancetype.kubevirt.io/v1beta1 kind, same JSON.
type VirtualMachinePreference struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is what the VMs referencing this preference prefer.
	Spec VirtualMachinePreferenceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachinePreferenceList is a list of VirtualMachinePreferences.
type VirtualMachinePreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachinePreference `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterPreference is a VirtualMachinePreference every
// namespace can use; a VM's spec.preference refers to this kind unless it
// names another.
type VirtualMachineClusterPreference struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is what the VMs referencing this preference prefer.
	Spec VirtualMachinePreferenceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineClusterPreferenceList is a list of
// VirtualMachineClusterPreferences.
type VirtualMachineClusterPreferenceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineClusterPreference `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachinePreferenceSpec is what a preference prefers. Every member
// is optional and fills only what the VM's template leaves empty.
type VirtualMachinePreferenceSpec struct {
	// CPU is the preferred layout of an instancetype's vCPUs.
	// +optional
	CPU *CPUPreferences `json:"cpu,omitempty" protobuf:"bytes,1,opt,name=cpu"`
	// Devices are the preferred device models and buses.
	// +optional
	Devices *DevicePreferences `json:"devices,omitempty" protobuf:"bytes,2,opt,name=devices"`
	// Firmware is the preferred boot firmware.
	// +optional
	Firmware *FirmwarePreferences `json:"firmware,omitempty" protobuf:"bytes,3,opt,name=firmware"`
	// Machine is the preferred machine type.
	// +optional
	Machine *MachinePreferences `json:"machine,omitempty" protobuf:"bytes,4,opt,name=machine"`
	// PreferredSubdomain is the instances' subdomain when the VM sets none.
	// +optional
	PreferredSubdomain *string `json:"preferredSubdomain,omitempty" protobuf:"bytes,5,opt,name=preferredSubdomain"`
	// PreferredTerminationGracePeriodSeconds is the instances' grace period
	// when the VM sets none.
	// +optional
	PreferredTerminationGracePeriodSeconds *int64 `json:"preferredTerminationGracePeriodSeconds,omitempty" protobuf:"varint,6,opt,name=preferredTerminationGracePeriodSeconds"`
	// Requirements are the least vCPUs and memory the guest needs: a VM
	// (with its instancetype) that offers less is refused.
	// +optional
	Requirements *PreferenceRequirements `json:"requirements,omitempty" protobuf:"bytes,7,opt,name=requirements"`
	// Annotations are added to the VM's instances unless the template sets
	// them.
	// +optional
	Annotations map[string]string `json:"annotations,omitempty" protobuf:"bytes,8,rep,name=annotations"`
	// PreferSpreadSocketToCoreRatio is the cores per socket of the spread
	// topology. Defaults to 2.
	// +optional
	PreferSpreadSocketToCoreRatio uint32 `json:"preferSpreadSocketToCoreRatio,omitempty" protobuf:"varint,9,opt,name=preferSpreadSocketToCoreRatio"`
	// PreferredArchitecture is the guest's CPU architecture. This platform
	// runs amd64 guests only: any other value is refused.
	// +optional
	PreferredArchitecture *string `json:"preferredArchitecture,omitempty" protobuf:"bytes,10,opt,name=preferredArchitecture"`
	// Clock is the preferred guest clock.
	// +optional
	Clock *ClockPreferences `json:"clock,omitempty" protobuf:"bytes,11,opt,name=clock"`
	// Features are the preferred hypervisor features.
	// +optional
	Features *FeaturePreferences `json:"features,omitempty" protobuf:"bytes,12,opt,name=features"`
	// Volumes are the preferred volume settings.
	// +optional
	Volumes *VolumePreferences `json:"volumes,omitempty" protobuf:"bytes,13,opt,name=volumes"`
	// PreferredLaunchSecurity is domain.launchSecurity when the VM sets
	// none. A VMI refuses launch security, so a VM using a preference with
	// it is refused at spec.template.spec.domain.launchSecurity.
	// +optional
	PreferredLaunchSecurity *LaunchSecurity `json:"preferredLaunchSecurity,omitempty" protobuf:"bytes,14,opt,name=preferredLaunchSecurity"`
}

// ClockPreferences are the preferred guest clock.
type ClockPreferences struct {
	// PreferredClockOffset is the clock's offset (utc or timezone) when the
	// VM sets neither.
	// +optional
	PreferredClockOffset *ClockOffset `json:"preferredClockOffset,omitempty" protobuf:"bytes,1,opt,name=preferredClockOffset"`
	// PreferredTimer is the clock's timers when the VM sets none.
	// +optional
	PreferredTimer *Timer `json:"preferredTimer,omitempty" protobuf:"bytes,2,opt,name=preferredTimer"`
}

// FeaturePreferences are the preferred hypervisor features; each fills the
// VM's feature of that name when the VM leaves it empty.
type FeaturePreferences struct {
	// PreferredAcpi is features.acpi. As in KubeVirt it replaces the VM's
	// (whose acpi cannot be told unset from enabled).
	// +optional
	PreferredAcpi *FeatureState `json:"preferredAcpi,omitempty" protobuf:"bytes,1,opt,name=preferredAcpi"`
	// PreferredApic is features.apic when the VM sets none.
	// +optional
	PreferredApic *FeatureAPIC `json:"preferredApic,omitempty" protobuf:"bytes,2,opt,name=preferredApic"`
	// PreferredHyperv fills each Hyper-V enlightenment the VM leaves unset.
	// +optional
	PreferredHyperv *FeatureHyperv `json:"preferredHyperv,omitempty" protobuf:"bytes,3,opt,name=preferredHyperv"`
	// PreferredKvm is features.kvm when the VM sets none.
	// +optional
	PreferredKvm *FeatureKVM `json:"preferredKvm,omitempty" protobuf:"bytes,4,opt,name=preferredKvm"`
	// PreferredPvspinlock is features.pvspinlock when the VM sets none.
	// +optional
	PreferredPvspinlock *FeatureState `json:"preferredPvspinlock,omitempty" protobuf:"bytes,5,opt,name=preferredPvspinlock"`
	// PreferredSmm is features.smm when the VM sets none.
	// +optional
	PreferredSmm *FeatureState `json:"preferredSmm,omitempty" protobuf:"bytes,6,opt,name=preferredSmm"`
}

// VolumePreferences are the preferred volume settings.
type VolumePreferences struct {
	// PreferredStorageClassName is the storage class of the VM's
	// DataVolume templates that name none. This platform has no DataVolume
	// templates (they are refused), so it never applies.
	// +optional
	PreferredStorageClassName string `json:"preferredStorageClassName,omitempty" protobuf:"bytes,1,opt,name=preferredStorageClassName"`
}

// PreferredCPUTopology is how an instancetype's vCPUs are shown to the guest.
// +enum
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
	// +optional
	PreferredCPUTopology *PreferredCPUTopology `json:"preferredCPUTopology,omitempty" protobuf:"bytes,1,opt,name=preferredCPUTopology,casttype=PreferredCPUTopology"`
	// SpreadOptions shape the spread topology.
	// +optional
	SpreadOptions *SpreadOptions `json:"spreadOptions,omitempty" protobuf:"bytes,2,opt,name=spreadOptions"`
	// PreferredCPUFeatures are added to cpu.features, each unless the VM
	// lists a feature of that name.
	// +optional
	// +listType=atomic
	PreferredCPUFeatures []CPUFeature `json:"preferredCPUFeatures,omitempty" protobuf:"bytes,3,rep,name=preferredCPUFeatures"`
}

// SpreadAcross is what the spread topology spreads vCPUs over.
// +enum
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
	// +optional
	Across *SpreadAcross `json:"across,omitempty" protobuf:"bytes,1,opt,name=across,casttype=SpreadAcross"`
	// Ratio is the cores per socket (SocketsCores, SocketsCoresThreads) or
	// the threads per core (CoresThreads, where only 2 is accepted).
	// Defaults to preferSpreadSocketToCoreRatio, else 2.
	// +optional
	Ratio *uint32 `json:"ratio,omitempty" protobuf:"varint,2,opt,name=ratio"`
}

// DevicePreferences are the preferred device models and buses.
type DevicePreferences struct {
	// PreferredAutoattachGraphicsDevice is autoattachGraphicsDevice when the
	// VM does not set it.
	// +optional
	PreferredAutoattachGraphicsDevice *bool `json:"preferredAutoattachGraphicsDevice,omitempty" protobuf:"varint,1,opt,name=preferredAutoattachGraphicsDevice"`
	// PreferredAutoattachPodInterface is autoattachPodInterface when the VM
	// does not set it.
	// +optional
	PreferredAutoattachPodInterface *bool `json:"preferredAutoattachPodInterface,omitempty" protobuf:"varint,2,opt,name=preferredAutoattachPodInterface"`
	// PreferredAutoattachSerialConsole is autoattachSerialConsole when the
	// VM does not set it.
	// +optional
	PreferredAutoattachSerialConsole *bool `json:"preferredAutoattachSerialConsole,omitempty" protobuf:"varint,3,opt,name=preferredAutoattachSerialConsole"`
	// PreferredDiskBus is the bus of each disk that names none.
	// +optional
	PreferredDiskBus DiskBus `json:"preferredDiskBus,omitempty" protobuf:"bytes,4,opt,name=preferredDiskBus,casttype=DiskBus"`
	// PreferredCdromBus is the bus of each CD-ROM that names none.
	// +optional
	PreferredCdromBus DiskBus `json:"preferredCdromBus,omitempty" protobuf:"bytes,5,opt,name=preferredCdromBus,casttype=DiskBus"`
	// PreferredLunBus is the bus of each LUN that names none. This
	// platform has no LUN disks, so it never applies.
	// +optional
	PreferredLunBus DiskBus `json:"preferredLunBus,omitempty" protobuf:"bytes,6,opt,name=preferredLunBus,casttype=DiskBus"`
	// PreferredInterfaceModel is the model of each NIC that names none.
	// +optional
	PreferredInterfaceModel string `json:"preferredInterfaceModel,omitempty" protobuf:"bytes,7,opt,name=preferredInterfaceModel"`
	// PreferredRng adds a virtio random number generator when the VM has
	// none.
	// +optional
	PreferredRng *Rng `json:"preferredRng,omitempty" protobuf:"bytes,8,opt,name=preferredRng"`
	// PreferredInterfaceMasquerade makes each NIC without a binding a
	// masquerade NIC.
	// +optional
	PreferredInterfaceMasquerade *InterfaceMasquerade `json:"preferredInterfaceMasquerade,omitempty" protobuf:"bytes,9,opt,name=preferredInterfaceMasquerade"`
	// PreferredAutoattachMemBalloon is autoattachMemBalloon when the VM
	// does not set it.
	// +optional
	PreferredAutoattachMemBalloon *bool `json:"preferredAutoattachMemBalloon,omitempty" protobuf:"varint,10,opt,name=preferredAutoattachMemBalloon"`
	// PreferredAutoattachInputDevice is autoattachInputDevice when the VM
	// does not set it.
	// +optional
	PreferredAutoattachInputDevice *bool `json:"preferredAutoattachInputDevice,omitempty" protobuf:"varint,11,opt,name=preferredAutoattachInputDevice"`
	// PreferredDisableHotplug is disableHotplug. As in KubeVirt it
	// replaces the VM's (a plain bool, unset cannot be told from false).
	// +optional
	PreferredDisableHotplug *bool `json:"preferredDisableHotplug,omitempty" protobuf:"varint,12,opt,name=preferredDisableHotplug"`
	// PreferredVirtualGPUOptions are the virtualGPUOptions of each GPU
	// that has none. GPUs are refused on this platform, so it never
	// applies to an accepted VM.
	// +optional
	PreferredVirtualGPUOptions *VGPUOptions `json:"preferredVirtualGPUOptions,omitempty" protobuf:"bytes,13,opt,name=preferredVirtualGPUOptions"`
	// PreferredSoundModel is the model of the VM's sound device when it
	// names none; it adds no sound device.
	// +optional
	PreferredSoundModel string `json:"preferredSoundModel,omitempty" protobuf:"bytes,14,opt,name=preferredSoundModel"`
	// PreferredUseVirtioTransitional is useVirtioTransitional when the VM
	// does not set it.
	// +optional
	PreferredUseVirtioTransitional *bool `json:"preferredUseVirtioTransitional,omitempty" protobuf:"varint,15,opt,name=preferredUseVirtioTransitional"`
	// PreferredInputBus is the bus of each input device that names none.
	// +optional
	PreferredInputBus InputBus `json:"preferredInputBus,omitempty" protobuf:"bytes,16,opt,name=preferredInputBus,casttype=InputBus"`
	// PreferredInputType is the type of each input device that names none.
	// +optional
	PreferredInputType InputType `json:"preferredInputType,omitempty" protobuf:"bytes,17,opt,name=preferredInputType,casttype=InputType"`
	// PreferredDiskDedicatedIoThread is dedicatedIOThread of each virtio
	// disk that does not set it.
	// +optional
	PreferredDiskDedicatedIoThread *bool `json:"preferredDiskDedicatedIoThread,omitempty" protobuf:"varint,18,opt,name=preferredDiskDedicatedIoThread"`
	// PreferredDiskCache is the cache mode of each disk that names none.
	// +optional
	PreferredDiskCache DriverCache `json:"preferredDiskCache,omitempty" protobuf:"bytes,19,opt,name=preferredDiskCache,casttype=DriverCache"`
	// PreferredDiskIO is the I/O mode of each disk that names none.
	// +optional
	PreferredDiskIO DriverIO `json:"preferredDiskIO,omitempty" protobuf:"bytes,20,opt,name=preferredDiskIO,casttype=DriverIO"`
	// PreferredDiskBlockSize is the block size of each disk that has none.
	// +optional
	PreferredDiskBlockSize *BlockSize `json:"preferredDiskBlockSize,omitempty" protobuf:"bytes,21,opt,name=preferredDiskBlockSize"`
	// PreferredBlockMultiQueue is blockMultiQueue when the VM does not set
	// it.
	// +optional
	PreferredBlockMultiQueue *bool `json:"preferredBlockMultiQueue,omitempty" protobuf:"varint,22,opt,name=preferredBlockMultiQueue"`
	// PreferredNetworkInterfaceMultiQueue is networkInterfaceMultiqueue
	// when the VM does not set it. A VMI refuses true (single-queue taps),
	// so a VM using a preference with true is refused there.
	// +optional
	PreferredNetworkInterfaceMultiQueue *bool `json:"preferredNetworkInterfaceMultiQueue,omitempty" protobuf:"varint,23,opt,name=preferredNetworkInterfaceMultiQueue"`
	// PreferredTPM is the VM's TPM when it has none (an emulated TPM 2.0,
	// swtpm). A VMI refuses a persistent one (not implemented yet), so a VM
	// using a preference with one is refused at
	// spec.template.spec.domain.devices.tpm.persistent.
	// +optional
	PreferredTPM *TPMDevice `json:"preferredTPM,omitempty" protobuf:"bytes,24,opt,name=preferredTPM"`
	// PreferredPanicDeviceModel is the model of each panic device that
	// names none; a VM without panic devices gets one of this model.
	// +optional
	PreferredPanicDeviceModel *PanicDeviceModel `json:"preferredPanicDeviceModel,omitempty" protobuf:"bytes,25,opt,name=preferredPanicDeviceModel,casttype=PanicDeviceModel"`
	// PreferredVideoType is the type of the VM's video device when it
	// names none.
	// +optional
	PreferredVideoType *string `json:"preferredVideoType,omitempty" protobuf:"bytes,26,opt,name=preferredVideoType"`
}

// FirmwarePreferences are the preferred boot firmware.
type FirmwarePreferences struct {
	// PreferredUseBios boots with BIOS when the VM chooses no boot loader.
	// +optional
	PreferredUseBios *bool `json:"preferredUseBios,omitempty" protobuf:"varint,1,opt,name=preferredUseBios"`
	// PreferredUseBiosSerial sends the BIOS's output to the serial console
	// when the VM boots with BIOS and does not say.
	// +optional
	PreferredUseBiosSerial *bool `json:"preferredUseBiosSerial,omitempty" protobuf:"varint,2,opt,name=preferredUseBiosSerial"`
	// PreferredUseEfi boots with EFI when the VM chooses no boot loader.
	// Deprecated by KubeVirt in favour of preferredEfi.
	// +optional
	PreferredUseEfi *bool `json:"preferredUseEfi,omitempty" protobuf:"varint,3,opt,name=preferredUseEfi"`
	// PreferredUseSecureBoot turns Secure Boot on when the VM boots with EFI
	// and does not say. Deprecated by KubeVirt in favour of preferredEfi.
	// +optional
	PreferredUseSecureBoot *bool `json:"preferredUseSecureBoot,omitempty" protobuf:"varint,4,opt,name=preferredUseSecureBoot"`
	// PreferredEfi is the EFI boot loader when the VM chooses none.
	// +optional
	PreferredEfi *EFI `json:"preferredEfi,omitempty" protobuf:"bytes,5,opt,name=preferredEfi"`
}

// MachinePreferences are the preferred machine.
type MachinePreferences struct {
	// PreferredMachineType is the machine type when the VM sets none.
	// +optional
	PreferredMachineType string `json:"preferredMachineType,omitempty" protobuf:"bytes,1,opt,name=preferredMachineType"`
}

// PreferenceRequirements are the least a guest needs.
type PreferenceRequirements struct {
	// CPU is the least vCPUs.
	// +optional
	CPU *CPUPreferenceRequirement `json:"cpu,omitempty" protobuf:"bytes,1,opt,name=cpu"`
	// Memory is the least memory.
	// +optional
	Memory *MemoryPreferenceRequirement `json:"memory,omitempty" protobuf:"bytes,2,opt,name=memory"`
	// Architecture is the guest architecture the VM must have. This
	// platform runs amd64 guests only: any other value is refused.
	// +optional
	Architecture *string `json:"architecture,omitempty" protobuf:"bytes,3,opt,name=architecture"`
}

// CPUPreferenceRequirement is the least vCPUs a guest needs.
type CPUPreferenceRequirement struct {
	// Guest is the least number of vCPUs.
	Guest uint32 `json:"guest" protobuf:"varint,1,opt,name=guest"`
}

// MemoryPreferenceRequirement is the least memory a guest needs.
type MemoryPreferenceRequirement struct {
	// Guest is the least memory.
	Guest resource.Quantity `json:"guest" protobuf:"bytes,1,opt,name=guest"`
}

// InstancetypeMatcher is a VM's reference to the instancetype it takes its
// size from.
type InstancetypeMatcher struct {
	// Name of the instancetype.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind is VirtualMachineClusterInstancetype (the default) or
	// VirtualMachineInstancetype (in the VM's namespace); the lower-case
	// singular and plural resource names are accepted too.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// RevisionName is the VirtualMachineInstancetypeRevision, in the VM's
	// namespace, holding the copy of the instancetype the VM uses (where
	// KubeVirt names an apps/v1 ControllerRevision). The VM controller
	// captures it the first time it sees the VM, so later edits of the
	// instancetype do not change the VM; clear it (with the name, or alone)
	// to take the instancetype as it is now.
	// +optional
	RevisionName string `json:"revisionName,omitempty" protobuf:"bytes,3,opt,name=revisionName"`
	// InferFromVolume is KubeVirt's inference of the instancetype from a
	// volume's labels. Not supported: setting it is refused.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty" protobuf:"bytes,4,opt,name=inferFromVolume"`
	// InferFromVolumeFailurePolicy belongs to inferFromVolume. Not
	// supported: setting it is refused.
	// +optional
	InferFromVolumeFailurePolicy *string `json:"inferFromVolumeFailurePolicy,omitempty" protobuf:"bytes,5,opt,name=inferFromVolumeFailurePolicy"`
}

// PreferenceMatcher is a VM's reference to the preference it takes its
// defaults from.
type PreferenceMatcher struct {
	// Name of the preference.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind is VirtualMachineClusterPreference (the default) or
	// VirtualMachinePreference (in the VM's namespace); the lower-case
	// singular and plural resource names are accepted too.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// RevisionName is the VirtualMachineInstancetypeRevision, in the VM's
	// namespace, holding the copy of the preference the VM uses (see
	// InstancetypeMatcher).
	// +optional
	RevisionName string `json:"revisionName,omitempty" protobuf:"bytes,3,opt,name=revisionName"`
	// InferFromVolume is not supported: setting it is refused.
	// +optional
	InferFromVolume string `json:"inferFromVolume,omitempty" protobuf:"bytes,4,opt,name=inferFromVolume"`
	// InferFromVolumeFailurePolicy is not supported: setting it is refused.
	// +optional
	InferFromVolumeFailurePolicy *string `json:"inferFromVolumeFailurePolicy,omitempty" protobuf:"bytes,5,opt,name=inferFromVolumeFailurePolicy"`
}

// InstancetypeStatusRef is the instancetype or preference a VM's instances
// were last expanded with, and the revision of it.
type InstancetypeStatusRef struct {
	// Name of the instancetype or preference.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Kind of the instancetype or preference.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// ControllerRevisionRef names the revision holding the copy (KubeVirt's
	// field name; here a VirtualMachineInstancetypeRevision).
	// +optional
	ControllerRevisionRef *ControllerRevisionRef `json:"controllerRevisionRef,omitempty" protobuf:"bytes,3,opt,name=controllerRevisionRef"`
}

// ControllerRevisionRef names a VirtualMachineInstancetypeRevision in the
// VM's namespace.
type ControllerRevisionRef struct {
	// Name of the revision.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
}
