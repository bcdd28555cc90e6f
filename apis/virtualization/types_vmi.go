package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstance is a running virtual machine: one guest, one launcher
// pod, one node. It is created Pending, scheduled by virt-controller, and from
// the moment status.nodeName is set owned by the virt-handler of that node.
type VirtualMachineInstance struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired virtual machine. It cannot change once created.
	Spec VirtualMachineInstanceSpec
	// Status is what the platform observed. Written only through /status.
	Status VirtualMachineInstanceStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
type VirtualMachineInstanceList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstance
}

// VirtualMachineInstanceSpec describes the guest and where it may run.
type VirtualMachineInstanceSpec struct {
	// Domain is the virtual hardware of the guest.
	Domain DomainSpec

	// NodeSelector must match a node's labels for the guest to be scheduled
	// there, as with pods.
	NodeSelector map[string]string
	// Affinity holds the scheduling constraints of the launcher pod.
	Affinity *corev1.Affinity
	// Tolerations of the launcher pod.
	Tolerations []corev1.Toleration

	// TerminationGracePeriodSeconds is how long the guest gets to shut down
	// after an ACPI power-button press before it is destroyed. Defaults to 30.
	TerminationGracePeriodSeconds *int64

	// Volumes are the storage sources the disks of the domain refer to by name.
	Volumes []Volume
	// Networks are the networks the interfaces of the domain refer to by name.
	Networks []Network

	// Hostname of the guest. Defaults to the VMI's name.
	Hostname string
	// Subdomain makes the guest's FQDN <hostname>.<subdomain>.<namespace>.svc.
	Subdomain string
	// PriorityClassName of the launcher pod.
	PriorityClassName string
	// SchedulerName of the launcher pod; empty means the default scheduler.
	SchedulerName string

	// ServiceAccountName is the service account of the launcher pod. The
	// guest does not see its token. Refused: not implemented yet.
	ServiceAccountName string
	// TopologySpreadConstraints spread the launcher pods of several VMIs
	// over topology domains, as for pods. Refused: not implemented yet.
	TopologySpreadConstraints []corev1.TopologySpreadConstraint
	// EvictionStrategy is what draining the node does to the guest: None
	// (it is stopped, and its VM, if any, restarts it elsewhere) or
	// LiveMigrateIfPossible (the same here, since nothing is migratable).
	// LiveMigrate and External are refused: this platform has no live
	// migration and no external eviction handling.
	EvictionStrategy *EvictionStrategy
	// StartStrategy Paused starts the guest with its vCPUs paused: the VMI
	// is Running with Ready False and Paused True until it is unpaused.
	StartStrategy *StartStrategy
	// LivenessProbe checks the guest periodically; a failing guest is
	// stopped. Refused: not implemented yet.
	LivenessProbe *Probe
	// ReadinessProbe checks the guest periodically; Ready follows it.
	// Refused: not implemented yet.
	ReadinessProbe *Probe
	// DNSPolicy of the launcher pod, whose DNS the guest gets by DHCP.
	// Only ClusterFirst (the default) is accepted: the launcher pod's DNS
	// is not configurable yet.
	DNSPolicy corev1.DNSPolicy
	// DNSConfig adds to the launcher pod's DNS configuration. Refused: not
	// implemented yet.
	DNSConfig *corev1.PodDNSConfig
	// AccessCredentials put SSH keys or passwords into the guest, through
	// cloud-init or the guest agent (docs/config-volumes.md).
	AccessCredentials []AccessCredential
	// Architecture of the guest. Only amd64, the nodes' own, is accepted.
	Architecture string
	// ResourceClaims are DRA ResourceClaims the launcher pod takes, for
	// GPUs, host devices and network devices. Refused: this platform has
	// no DRA drivers.
	ResourceClaims []VirtualMachineInstanceResourceClaim
	// UtilityVolumes are claims mounted into the launcher pod for an
	// operation, not attached to the guest. Refused: this platform has no
	// operation that uses them.
	UtilityVolumes []UtilityVolume
}

// EvictionStrategy is what draining a node does to its guests.
// +enum
type EvictionStrategy string

// Eviction strategies.
const (
	EvictionStrategyNone                  EvictionStrategy = "None"
	EvictionStrategyLiveMigrate           EvictionStrategy = "LiveMigrate"
	EvictionStrategyLiveMigrateIfPossible EvictionStrategy = "LiveMigrateIfPossible"
	EvictionStrategyExternal              EvictionStrategy = "External"
)

// StartStrategy is how a guest starts.
// +enum
type StartStrategy string

// StartStrategyPaused starts the guest with its vCPUs paused.
const StartStrategyPaused StartStrategy = "Paused"

// VirtualMachineInstanceResourceClaim is a DRA ResourceClaim of the launcher
// pod. Exactly one of its sources may be set.
type VirtualMachineInstanceResourceClaim struct {
	// Name of the claim in the VMI; devices refer to it.
	Name string
	// ResourceClaimName is an existing ResourceClaim of the namespace.
	ResourceClaimName *string
	// ResourceClaimTemplateName makes a ResourceClaim per launcher pod.
	ResourceClaimTemplateName *string
}

// VirtualMachineInstancePhase is where a VMI is in its life.
// +enum
type VirtualMachineInstancePhase string

const (
	// PhaseUnset is the phase of a VMI no component has seen yet.
	PhaseUnset VirtualMachineInstancePhase = ""
	// Pending: accepted, no launcher pod exists yet.
	Pending VirtualMachineInstancePhase = "Pending"
	// Scheduling: the launcher pod exists and waits for a node.
	Scheduling VirtualMachineInstancePhase = "Scheduling"
	// Scheduled: the launcher runs on status.nodeName; the node owns the VMI.
	Scheduled VirtualMachineInstancePhase = "Scheduled"
	// Running: the guest runs.
	Running VirtualMachineInstancePhase = "Running"
	// Succeeded: the guest shut down by itself or was shut down gracefully.
	Succeeded VirtualMachineInstancePhase = "Succeeded"
	// Failed: the guest crashed, was killed, or could not be started.
	Failed VirtualMachineInstancePhase = "Failed"
	// Unknown: the state of the guest cannot be observed.
	Unknown VirtualMachineInstancePhase = "Unknown"
)

// IsFinal reports whether no transition leaves the phase.
func (p VirtualMachineInstancePhase) IsFinal() bool {
	return p == Succeeded || p == Failed
}

// VirtualMachineInstanceStatus is the observed state of a VMI.
type VirtualMachineInstanceStatus struct {
	// Phase is where the VMI is in its life.
	Phase VirtualMachineInstancePhase
	// Reason is a CamelCase word saying why the VMI is in its phase, for
	// phases that need one (Failed, Succeeded).
	Reason string
	// Conditions are the observations of the VMI that are not phases.
	Conditions []VirtualMachineInstanceCondition
	// NodeName is the node the guest runs on. Setting it hands the VMI from
	// virt-controller to that node's virt-handler.
	NodeName string
	// Interfaces are the guest's network interfaces as observed.
	Interfaces []VirtualMachineInstanceNetworkInterface
	// PhaseTransitionTimestamps records when the VMI entered each phase.
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp
	// ActivePods maps the UID of each launcher pod of this VMI to its node.
	ActivePods map[types.UID]string
	// LauncherContainerImageVersion is the launcher image the guest runs under.
	LauncherContainerImageVersion string
	// GuestOSInfo is the guest's operating system as its guest agent
	// reports it.
	GuestOSInfo VirtualMachineInstanceGuestOSInfo
	// VolumeStatus is the state of each volume: for a PersistentVolumeClaim
	// its claim's size, mode and the share of the file system a disk image
	// on it leaves free (filesystemOverhead).
	VolumeStatus []VolumeStatus

	// The fields below are KubeVirt's. This platform's components leave
	// most of them empty (there is no migration, hotplug or backup); they
	// are here so that a VMI read from KubeVirt decodes.

	// MigrationState is the state of the guest's live migration.
	MigrationState *VirtualMachineInstanceMigrationState
	// MigrationMethod is how the guest would migrate: BlockMigration or
	// LiveMigration.
	MigrationMethod VirtualMachineInstanceMigrationMethod
	// MigrationTransport is how migration data would travel (Unix).
	MigrationTransport VirtualMachineInstanceMigrationTransport
	// QOSClass is the quality of service class of the launcher pod.
	QOSClass *corev1.PodQOSClass
	// EvacuationNodeName is the node the guest is being evicted from.
	EvacuationNodeName string
	// KernelBootStatus describes the kernel and initrd of kernelBoot.
	KernelBootStatus *KernelBootStatus
	// FSFreezeStatus is "frozen" while the guest's file systems are frozen.
	FSFreezeStatus string
	// TopologyHints for the scheduler, such as the TSC frequency.
	TopologyHints *TopologyHints
	// VirtualMachineRevisionName is the revision of the VM the VMI was
	// made from.
	VirtualMachineRevisionName string
	// RuntimeUser is the user ID the launcher runs as. KubeVirt's is a
	// uint64; server-side apply cannot hold one, and user IDs fit an int64.
	RuntimeUser int64
	// VSOCKCID is the guest's VSOCK context ID.
	VSOCKCID *uint32
	// SelinuxContext is the SELinux context of the launcher pod.
	SelinuxContext string
	// Machine is the machine type the guest runs, after QEMU resolved an
	// alias such as q35.
	Machine *Machine
	// CurrentCPUTopology is the guest's CPU topology now.
	CurrentCPUTopology *CPUTopology
	// Memory is the guest's memory now.
	Memory *MemoryStatus
	// MigratedVolumes are the volumes a volume migration moves.
	MigratedVolumes []StorageMigratedVolumeInfo
	// ChangedBlockTracking is the state of changed block tracking.
	ChangedBlockTracking *ChangedBlockTrackingStatus
}

// VirtualMachineInstanceGuestOSInfo is the guest's operating system, from
// its guest agent (os-release and uname).
type VirtualMachineInstanceGuestOSInfo struct {
	// Name of the operating system, such as "Debian GNU/Linux".
	Name string
	// KernelRelease, such as "6.1.0-56-cloud-amd64".
	KernelRelease string
	// Version, such as "12 (bookworm)".
	Version string
	// PrettyName, such as "Debian GNU/Linux 12 (bookworm)".
	PrettyName string
	// VersionID, such as "12".
	VersionID string
	// KernelVersion, such as "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1".
	KernelVersion string
	// Machine architecture, such as "x86_64".
	Machine string
	// ID of the operating system, such as "debian".
	ID string
}

// VolumeStatus is the observed state of one volume.
type VolumeStatus struct {
	// Name of the volume in spec.volumes.
	Name string
	// Target is the guest device the volume is attached as, such as vdb.
	Target string
	// Reason is a CamelCase word for the volume's state when it keeps the
	// guest from starting, such as PVCNotBound.
	Reason string
	// Message says it for a person.
	Message string
	// PersistentVolumeClaimInfo is the claim behind a PVC volume.
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo
	// Phase of the volume's attachment (hotplug, memory dump).
	Phase VolumePhase
	// HotplugVolume is the attachment of a hotplugged volume.
	HotplugVolume *HotplugVolumeStatus
	// SizeBytes is the size of the volume in bytes (JSON: size; Size is the
	// protobuf marshaller's method).
	SizeBytes int64
	// MemoryDumpVolume describes a memory dump written to the volume.
	MemoryDumpVolume *DomainMemoryDumpInfo
	// ContainerDiskVolume describes a containerDisk volume.
	ContainerDiskVolume *ContainerDiskInfo
}

// PersistentVolumeClaimInfo is what the guest's disk on a claim depends on.
type PersistentVolumeClaimInfo struct {
	// ClaimName is the claim's name.
	ClaimName string
	// AccessModes of the claim.
	AccessModes []corev1.PersistentVolumeAccessMode
	// VolumeMode of the claim: Filesystem (the disk is a disk.img file on
	// it) or Block (the disk is the device).
	VolumeMode *corev1.PersistentVolumeMode
	// Capacity of the bound volume.
	Capacity corev1.ResourceList
	// Requests of the claim.
	Requests corev1.ResourceList
	// FilesystemOverhead is the share of a Filesystem volume a disk image
	// leaves to the file system, as a decimal such as "0.055".
	FilesystemOverhead *Percent
	// Preallocated says the claim's storage is preallocated.
	Preallocated bool
}

// Percent is a fraction as a decimal string, such as "0.055" (KubeVirt's).
type Percent string

// VirtualMachineInstanceConditionType names an observation of a VMI.
type VirtualMachineInstanceConditionType string

const (
	// VirtualMachineInstanceReady is True while the guest runs and can be used.
	VirtualMachineInstanceReady VirtualMachineInstanceConditionType = "Ready"
	// VirtualMachineInstancePaused is True while the guest's vCPUs are paused.
	VirtualMachineInstancePaused VirtualMachineInstanceConditionType = "Paused"
	// VirtualMachineInstanceAgentConnected is True while the guest's agent
	// (qemu-guest-agent) is connected.
	VirtualMachineInstanceAgentConnected VirtualMachineInstanceConditionType = "AgentConnected"
	// VirtualMachineInstanceSoftwareEmulation is True when the guest runs
	// under software emulation (QEMU TCG) because the node has no usable
	// hardware virtualisation. Such guests are an order of magnitude slower.
	VirtualMachineInstanceSoftwareEmulation VirtualMachineInstanceConditionType = "SoftwareEmulation"
	// VirtualMachineInstanceProvisioning is True while the launcher pod is
	// being prepared (images pulled, volumes attached).
	VirtualMachineInstanceProvisioning VirtualMachineInstanceConditionType = "Provisioning"
	// VirtualMachineInstancePodScheduled mirrors the launcher pod's
	// PodScheduled condition, including the scheduler's reason when False.
	VirtualMachineInstancePodScheduled VirtualMachineInstanceConditionType = "PodScheduled"
	// VirtualMachineInstanceIsMigratable says whether the guest can be
	// live-migrated.
	VirtualMachineInstanceIsMigratable VirtualMachineInstanceConditionType = "LiveMigratable"
)

// VirtualMachineInstanceCondition is one observation of a VMI.
type VirtualMachineInstanceCondition struct {
	Type               VirtualMachineInstanceConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

// VirtualMachineInstanceNetworkInterface is a guest interface as observed.
type VirtualMachineInstanceNetworkInterface struct {
	// Name of the interface in spec.domain.devices.interfaces.
	Name string
	// IPAddress is the primary address of the interface.
	IPAddress string
	// IPAddresses are all addresses of the interface.
	IPAddresses []string
	// MAC is the hardware address of the interface.
	MAC string
	// InterfaceName is the name of the interface inside the guest.
	InterfaceName string
	// InfoSource says where the data comes from, as a comma-separated list:
	// "domain" (the launcher's domain), "dhcp" (the lease the guest took
	// from the launcher's DHCP server), "guest-agent".
	InfoSource string
	// PodInterfaceName is the pod interface the guest NIC is bound to, such
	// as eth0.
	PodInterfaceName string
	// QueueCount is the number of queues of the NIC.
	QueueCount int32
	// LinkState of the NIC: up or down.
	LinkState string
}

// VirtualMachineInstancePhaseTransitionTimestamp records a phase change.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase entered.
	Phase VirtualMachineInstancePhase
	// PhaseTransitionTimestamp is when the phase was entered.
	PhaseTransitionTimestamp metav1.Time
}
