package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// +genclient
// +genclient:method=GuestOSInfo,verb=get,subresource=guestosinfo,result=VirtualMachineInstanceGuestAgentInfo
// +genclient:method=Pause,verb=update,subresource=pause,input=PauseOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=Unpause,verb=update,subresource=unpause,input=UnpauseOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=SoftReboot,verb=update,subresource=softreboot,input=SoftRebootOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=Migrate,verb=update,subresource=migrate,input=MigrateOptions,result=VirtualMachineInstanceMigration
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstance is a running virtual machine: one guest, one launcher
// pod, one node. It is created Pending, scheduled by virt-controller, and from
// the moment status.nodeName is set owned by the virt-handler of that node.
type VirtualMachineInstance struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired virtual machine. It cannot change once created.
	Spec VirtualMachineInstanceSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is what the platform observed. Written only through /status.
	// +optional
	Status VirtualMachineInstanceStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceList is a list of VirtualMachineInstances.
type VirtualMachineInstanceList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstance `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceSpec describes the guest and where it may run.
type VirtualMachineInstanceSpec struct {
	// Domain is the virtual hardware of the guest.
	Domain DomainSpec `json:"domain" protobuf:"bytes,1,opt,name=domain"`

	// NodeSelector must match a node's labels for the guest to be scheduled
	// there, as with pods.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty" protobuf:"bytes,2,rep,name=nodeSelector"`
	// Affinity holds the scheduling constraints of the launcher pod.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty" protobuf:"bytes,3,opt,name=affinity"`
	// Tolerations of the launcher pod.
	// +optional
	// +listType=atomic
	Tolerations []corev1.Toleration `json:"tolerations,omitempty" protobuf:"bytes,4,rep,name=tolerations"`

	// TerminationGracePeriodSeconds is how long the guest gets to shut down
	// after an ACPI power-button press before it is destroyed. Defaults to 30.
	// +optional
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty" protobuf:"varint,5,opt,name=terminationGracePeriodSeconds"`

	// Volumes are the storage sources the disks of the domain refer to by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Volumes []Volume `json:"volumes,omitempty" protobuf:"bytes,6,rep,name=volumes"`
	// Networks are the networks the interfaces of the domain refer to by name.
	// +optional
	// +listType=map
	// +listMapKey=name
	Networks []Network `json:"networks,omitempty" protobuf:"bytes,7,rep,name=networks"`

	// Hostname of the guest. Defaults to the VMI's name.
	// +optional
	Hostname string `json:"hostname,omitempty" protobuf:"bytes,8,opt,name=hostname"`
	// Subdomain makes the guest's FQDN <hostname>.<subdomain>.<namespace>.svc.
	// +optional
	Subdomain string `json:"subdomain,omitempty" protobuf:"bytes,9,opt,name=subdomain"`
	// PriorityClassName of the launcher pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty" protobuf:"bytes,10,opt,name=priorityClassName"`
	// SchedulerName of the launcher pod; empty means the default scheduler.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty" protobuf:"bytes,11,opt,name=schedulerName"`

	// ServiceAccountName is the service account of the launcher pod. The
	// guest does not see its token. Refused: not implemented yet.
	// +optional
	ServiceAccountName string `json:"serviceAccountName,omitempty" protobuf:"bytes,12,opt,name=serviceAccountName"`
	// TopologySpreadConstraints spread the launcher pods of several VMIs
	// over topology domains, as for pods. Refused: not implemented yet.
	// +optional
	// +listType=map
	// +listMapKey=topologyKey
	// +listMapKey=whenUnsatisfiable
	TopologySpreadConstraints []corev1.TopologySpreadConstraint `json:"topologySpreadConstraints,omitempty" protobuf:"bytes,13,rep,name=topologySpreadConstraints"`
	// EvictionStrategy is what draining the node does to the guest: None
	// (it is stopped, and its VM, if any, restarts it elsewhere),
	// LiveMigrate (it is live-migrated; a drain waits while it cannot be),
	// LiveMigrateIfPossible (migrated if it can be, stopped otherwise) or
	// External (marked with status.evacuationNodeName for another
	// component; the drain waits). docs/migration.md.
	// +optional
	EvictionStrategy *EvictionStrategy `json:"evictionStrategy,omitempty" protobuf:"bytes,14,opt,name=evictionStrategy,casttype=EvictionStrategy"`
	// StartStrategy Paused starts the guest with its vCPUs paused: the VMI
	// is Running with Ready False and Paused True until it is unpaused.
	// +optional
	StartStrategy *StartStrategy `json:"startStrategy,omitempty" protobuf:"bytes,15,opt,name=startStrategy,casttype=StartStrategy"`
	// LivenessProbe checks the guest periodically; a failing guest is
	// stopped and its VMI fails. HTTP and TCP probes reach the guest at
	// the pod's address, exec and guestAgentPing go through its guest
	// agent.
	// +optional
	LivenessProbe *Probe `json:"livenessProbe,omitempty" protobuf:"bytes,16,opt,name=livenessProbe"`
	// ReadinessProbe checks the guest periodically; Ready and the launcher
	// pod's readiness follow it. As LivenessProbe.
	// +optional
	ReadinessProbe *Probe `json:"readinessProbe,omitempty" protobuf:"bytes,17,opt,name=readinessProbe"`
	// DNSPolicy of the launcher pod, whose DNS the guest gets by DHCP.
	// Only ClusterFirst (the default) is accepted: the launcher pod's DNS
	// is not configurable yet.
	// +optional
	DNSPolicy corev1.DNSPolicy `json:"dnsPolicy,omitempty" protobuf:"bytes,18,opt,name=dnsPolicy,casttype=k8s.io/api/core/v1.DNSPolicy"`
	// DNSConfig adds to the launcher pod's DNS configuration. Refused: not
	// implemented yet.
	// +optional
	DNSConfig *corev1.PodDNSConfig `json:"dnsConfig,omitempty" protobuf:"bytes,19,opt,name=dnsConfig"`
	// AccessCredentials put SSH keys or passwords into the guest, through
	// cloud-init or the guest agent (docs/config-volumes.md).
	// +optional
	// +listType=atomic
	AccessCredentials []AccessCredential `json:"accessCredentials,omitempty" protobuf:"bytes,20,rep,name=accessCredentials"`
	// Architecture of the guest. Only amd64, the nodes' own, is accepted.
	// +optional
	Architecture string `json:"architecture,omitempty" protobuf:"bytes,21,opt,name=architecture"`
	// ResourceClaims are DRA ResourceClaims the launcher pod takes, for
	// GPUs, host devices and network devices. Refused: this platform has
	// no DRA drivers.
	// +optional
	// +listType=map
	// +listMapKey=name
	ResourceClaims []VirtualMachineInstanceResourceClaim `json:"resourceClaims,omitempty" protobuf:"bytes,22,rep,name=resourceClaims"`
	// UtilityVolumes are claims mounted into the launcher pod for an
	// operation, not attached to the guest. Refused: this platform has no
	// operation that uses them.
	// +optional
	// +listType=map
	// +listMapKey=name
	UtilityVolumes []UtilityVolume `json:"utilityVolumes,omitempty" protobuf:"bytes,23,rep,name=utilityVolumes"`
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
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// ResourceClaimName is an existing ResourceClaim of the namespace.
	// +optional
	ResourceClaimName *string `json:"resourceClaimName,omitempty" protobuf:"bytes,2,opt,name=resourceClaimName"`
	// ResourceClaimTemplateName makes a ResourceClaim per launcher pod.
	// +optional
	ResourceClaimTemplateName *string `json:"resourceClaimTemplateName,omitempty" protobuf:"bytes,3,opt,name=resourceClaimTemplateName"`
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

// Condition is the condition of type t, nil if s has none. The pointer is
// into s.Conditions: writing through it changes s.
func (s *VirtualMachineInstanceStatus) Condition(t VirtualMachineInstanceConditionType) *VirtualMachineInstanceCondition {
	return findCondition(s.Conditions, string(t))
}

// VirtualMachineInstanceStatus is the observed state of a VMI.
type VirtualMachineInstanceStatus struct {
	// Phase is where the VMI is in its life.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// Reason is a CamelCase word saying why the VMI is in its phase, for
	// phases that need one (Failed, Succeeded).
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,2,opt,name=reason"`
	// Conditions are the observations of the VMI that are not phases.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// NodeName is the node the guest runs on. Setting it hands the VMI from
	// virt-controller to that node's virt-handler.
	// +optional
	NodeName string `json:"nodeName,omitempty" protobuf:"bytes,4,opt,name=nodeName"`
	// Interfaces are the guest's network interfaces as observed.
	// +optional
	// +listType=atomic
	Interfaces []VirtualMachineInstanceNetworkInterface `json:"interfaces,omitempty" protobuf:"bytes,5,rep,name=interfaces"`
	// PhaseTransitionTimestamps records when the VMI entered each phase.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstancePhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty" protobuf:"bytes,6,rep,name=phaseTransitionTimestamps"`
	// ActivePods maps the UID of each launcher pod of this VMI to its node.
	// +optional
	ActivePods map[types.UID]string `json:"activePods,omitempty" protobuf:"bytes,7,rep,name=activePods,castkey=k8s.io/apimachinery/pkg/types.UID"`
	// LauncherContainerImageVersion is the launcher image the guest runs under.
	// +optional
	LauncherContainerImageVersion string `json:"launcherContainerImageVersion,omitempty" protobuf:"bytes,8,opt,name=launcherContainerImageVersion"`
	// GuestOSInfo is the guest's operating system as its guest agent
	// reports it.
	// +optional
	GuestOSInfo VirtualMachineInstanceGuestOSInfo `json:"guestOSInfo,omitempty" protobuf:"bytes,9,opt,name=guestOSInfo"`
	// VolumeStatus is the state of each volume: for a PersistentVolumeClaim
	// its claim's size, mode and the share of the file system a disk image
	// on it leaves free (filesystemOverhead).
	// +optional
	// +listType=atomic
	VolumeStatus []VolumeStatus `json:"volumeStatus,omitempty" protobuf:"bytes,10,rep,name=volumeStatus"`

	// The fields below are KubeVirt's. This platform's components leave
	// most of them empty (there is no migration, hotplug or backup); they
	// are here so that a VMI read from KubeVirt decodes.

	// MigrationState is the state of the guest's live migration.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty" protobuf:"bytes,11,opt,name=migrationState"`
	// MigrationMethod is how the guest would migrate: BlockMigration or
	// LiveMigration.
	// +optional
	MigrationMethod VirtualMachineInstanceMigrationMethod `json:"migrationMethod,omitempty" protobuf:"bytes,12,opt,name=migrationMethod,casttype=VirtualMachineInstanceMigrationMethod"`
	// MigrationTransport is how migration data would travel (Unix).
	// +optional
	MigrationTransport VirtualMachineInstanceMigrationTransport `json:"migrationTransport,omitempty" protobuf:"bytes,13,opt,name=migrationTransport,casttype=VirtualMachineInstanceMigrationTransport"`
	// QOSClass is the quality of service class of the launcher pod.
	// +optional
	QOSClass *corev1.PodQOSClass `json:"qosClass,omitempty" protobuf:"bytes,14,opt,name=qosClass,casttype=k8s.io/api/core/v1.PodQOSClass"`
	// EvacuationNodeName is the node the guest is being evicted from.
	// +optional
	EvacuationNodeName string `json:"evacuationNodeName,omitempty" protobuf:"bytes,15,opt,name=evacuationNodeName"`
	// KernelBootStatus describes the kernel and initrd of kernelBoot.
	// +optional
	KernelBootStatus *KernelBootStatus `json:"kernelBootStatus,omitempty" protobuf:"bytes,16,opt,name=kernelBootStatus"`
	// FSFreezeStatus is "frozen" while the guest's file systems are frozen.
	// +optional
	FSFreezeStatus string `json:"fsFreezeStatus,omitempty" protobuf:"bytes,17,opt,name=fsFreezeStatus"`
	// TopologyHints for the scheduler, such as the TSC frequency.
	// +optional
	TopologyHints *TopologyHints `json:"topologyHints,omitempty" protobuf:"bytes,18,opt,name=topologyHints"`
	// VirtualMachineRevisionName is the revision of the VM the VMI was
	// made from.
	// +optional
	VirtualMachineRevisionName string `json:"virtualMachineRevisionName,omitempty" protobuf:"bytes,19,opt,name=virtualMachineRevisionName"`
	// RuntimeUser is the user ID the launcher runs as. KubeVirt's is a
	// uint64; server-side apply cannot hold one, and user IDs fit an int64.
	// +optional
	RuntimeUser int64 `json:"runtimeUser,omitempty" protobuf:"varint,20,opt,name=runtimeUser"`
	// VSOCKCID is the guest's VSOCK context ID.
	// +optional
	VSOCKCID *uint32 `json:"VSOCKCID,omitempty" protobuf:"varint,21,opt,name=VSOCKCID"`
	// SelinuxContext is the SELinux context of the launcher pod.
	// +optional
	SelinuxContext string `json:"selinuxContext,omitempty" protobuf:"bytes,22,opt,name=selinuxContext"`
	// Machine is the machine type the guest runs, after QEMU resolved an
	// alias such as q35.
	// +optional
	Machine *Machine `json:"machine,omitempty" protobuf:"bytes,23,opt,name=machine"`
	// CurrentCPUTopology is the guest's CPU topology now.
	// +optional
	CurrentCPUTopology *CPUTopology `json:"currentCPUTopology,omitempty" protobuf:"bytes,24,opt,name=currentCPUTopology"`
	// Memory is the guest's memory now.
	// +optional
	Memory *MemoryStatus `json:"memory,omitempty" protobuf:"bytes,25,opt,name=memory"`
	// MigratedVolumes are the volumes a volume migration moves.
	// +optional
	// +listType=atomic
	MigratedVolumes []StorageMigratedVolumeInfo `json:"migratedVolumes,omitempty" protobuf:"bytes,26,rep,name=migratedVolumes"`
	// ChangedBlockTracking is the state of changed block tracking.
	// +optional
	ChangedBlockTracking *ChangedBlockTrackingStatus `json:"changedBlockTracking,omitempty" protobuf:"bytes,27,opt,name=changedBlockTracking"`
}

// VirtualMachineInstanceGuestOSInfo is the guest's operating system, from
// its guest agent (os-release and uname).
type VirtualMachineInstanceGuestOSInfo struct {
	// Name of the operating system, such as "Debian GNU/Linux".
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// KernelRelease, such as "6.1.0-56-cloud-amd64".
	// +optional
	KernelRelease string `json:"kernelRelease,omitempty" protobuf:"bytes,2,opt,name=kernelRelease"`
	// Version, such as "12 (bookworm)".
	// +optional
	Version string `json:"version,omitempty" protobuf:"bytes,3,opt,name=version"`
	// PrettyName, such as "Debian GNU/Linux 12 (bookworm)".
	// +optional
	PrettyName string `json:"prettyName,omitempty" protobuf:"bytes,4,opt,name=prettyName"`
	// VersionID, such as "12".
	// +optional
	VersionID string `json:"versionId,omitempty" protobuf:"bytes,5,opt,name=versionId"`
	// KernelVersion, such as "#1 SMP PREEMPT_DYNAMIC Debian 6.1.158-1".
	// +optional
	KernelVersion string `json:"kernelVersion,omitempty" protobuf:"bytes,6,opt,name=kernelVersion"`
	// Machine architecture, such as "x86_64".
	// +optional
	Machine string `json:"machine,omitempty" protobuf:"bytes,7,opt,name=machine"`
	// ID of the operating system, such as "debian".
	// +optional
	ID string `json:"id,omitempty" protobuf:"bytes,8,opt,name=id"`
}

// VolumeStatus is the observed state of one volume.
type VolumeStatus struct {
	// Name of the volume in spec.volumes.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Target is the guest device the volume is attached as, such as vdb.
	// +optional
	Target string `json:"target,omitempty" protobuf:"bytes,2,opt,name=target"`
	// Reason is a CamelCase word for the volume's state when it keeps the
	// guest from starting, such as PVCNotBound.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
	// Message says it for a person.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,4,opt,name=message"`
	// PersistentVolumeClaimInfo is the claim behind a PVC volume.
	// +optional
	PersistentVolumeClaimInfo *PersistentVolumeClaimInfo `json:"persistentVolumeClaimInfo,omitempty" protobuf:"bytes,5,opt,name=persistentVolumeClaimInfo"`
	// Phase of the volume's attachment (hotplug, memory dump).
	// +optional
	Phase VolumePhase `json:"phase,omitempty" protobuf:"bytes,6,opt,name=phase,casttype=VolumePhase"`
	// HotplugVolume is the attachment of a hotplugged volume.
	// +optional
	HotplugVolume *HotplugVolumeStatus `json:"hotplugVolume,omitempty" protobuf:"bytes,7,opt,name=hotplugVolume"`
	// SizeBytes is the size of the volume in bytes (JSON: size; Size is the
	// protobuf marshaller's method).
	// +optional
	SizeBytes int64 `json:"size,omitempty" protobuf:"varint,8,opt,name=size"`
	// MemoryDumpVolume describes a memory dump written to the volume.
	// +optional
	MemoryDumpVolume *DomainMemoryDumpInfo `json:"memoryDumpVolume,omitempty" protobuf:"bytes,9,opt,name=memoryDumpVolume"`
	// ContainerDiskVolume describes a containerDisk volume.
	// +optional
	ContainerDiskVolume *ContainerDiskInfo `json:"containerDiskVolume,omitempty" protobuf:"bytes,10,opt,name=containerDiskVolume"`
}

// PersistentVolumeClaimInfo is what the guest's disk on a claim depends on.
type PersistentVolumeClaimInfo struct {
	// ClaimName is the claim's name.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,1,opt,name=claimName"`
	// AccessModes of the claim.
	// +optional
	// +listType=atomic
	AccessModes []corev1.PersistentVolumeAccessMode `json:"accessModes,omitempty" protobuf:"bytes,2,rep,name=accessModes,casttype=k8s.io/api/core/v1.PersistentVolumeAccessMode"`
	// VolumeMode of the claim: Filesystem (the disk is a disk.img file on
	// it) or Block (the disk is the device).
	// +optional
	VolumeMode *corev1.PersistentVolumeMode `json:"volumeMode,omitempty" protobuf:"bytes,3,opt,name=volumeMode,casttype=k8s.io/api/core/v1.PersistentVolumeMode"`
	// Capacity of the bound volume.
	// +optional
	Capacity corev1.ResourceList `json:"capacity,omitempty" protobuf:"bytes,4,rep,name=capacity,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// Requests of the claim.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty" protobuf:"bytes,5,rep,name=requests,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// FilesystemOverhead is the share of a Filesystem volume a disk image
	// leaves to the file system, as a decimal such as "0.055".
	// +optional
	FilesystemOverhead *Percent `json:"filesystemOverhead,omitempty" protobuf:"bytes,6,opt,name=filesystemOverhead,casttype=Percent"`
	// Preallocated says the claim's storage is preallocated.
	// +optional
	Preallocated bool `json:"preallocated,omitempty" protobuf:"varint,7,opt,name=preallocated"`
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
	// VirtualMachineInstanceIsMigratable (LiveMigratable) says whether the
	// guest can be live-migrated: True, or False with a reason
	// (DisksNotLiveMigratable, InterfaceNotLiveMigratable,
	// HostDeviceNotLiveMigratable, ...) and a message naming what cannot
	// move. Written by virt-controller.
	VirtualMachineInstanceIsMigratable VirtualMachineInstanceConditionType = "LiveMigratable"
	// VirtualMachineInstanceNodeUnresponsive is True while the virt-handler
	// of the VMI's node has not renewed its Lease for virt-controller's
	// heartbeat timeout but the launcher pod may still run the guest: the
	// guest is left running, nobody reports on it until the handler is back.
	VirtualMachineInstanceNodeUnresponsive VirtualMachineInstanceConditionType = "NodeUnresponsive"
)

// VirtualMachineInstanceCondition is one observation of a VMI.
type VirtualMachineInstanceCondition struct {
	Type   VirtualMachineInstanceConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceConditionType"`
	Status corev1.ConditionStatus              `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
	// +optional
	// +nullable
	LastProbeTime metav1.Time `json:"lastProbeTime,omitempty" protobuf:"bytes,3,opt,name=lastProbeTime"`
	// +optional
	// +nullable
	LastTransitionTime metav1.Time `json:"lastTransitionTime,omitempty" protobuf:"bytes,4,opt,name=lastTransitionTime"`
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,5,opt,name=reason"`
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,6,opt,name=message"`
}

// VirtualMachineInstanceNetworkInterface is a guest interface as observed.
type VirtualMachineInstanceNetworkInterface struct {
	// Name of the interface in spec.domain.devices.interfaces.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// IPAddress is the primary address of the interface.
	// +optional
	IPAddress string `json:"ipAddress,omitempty" protobuf:"bytes,2,opt,name=ipAddress"`
	// IPAddresses are all addresses of the interface.
	// +optional
	// +listType=atomic
	IPAddresses []string `json:"ipAddresses,omitempty" protobuf:"bytes,3,rep,name=ipAddresses"`
	// MAC is the hardware address of the interface.
	// +optional
	MAC string `json:"mac,omitempty" protobuf:"bytes,4,opt,name=mac"`
	// InterfaceName is the name of the interface inside the guest.
	// +optional
	InterfaceName string `json:"interfaceName,omitempty" protobuf:"bytes,5,opt,name=interfaceName"`
	// InfoSource says where the data comes from, as a comma-separated list:
	// "domain" (the launcher's domain), "dhcp" (the lease the guest took
	// from the launcher's DHCP server), "guest-agent".
	// +optional
	InfoSource string `json:"infoSource,omitempty" protobuf:"bytes,6,opt,name=infoSource"`
	// PodInterfaceName is the pod interface the guest NIC is bound to, such
	// as eth0.
	// +optional
	PodInterfaceName string `json:"podInterfaceName,omitempty" protobuf:"bytes,7,opt,name=podInterfaceName"`
	// QueueCount is the number of queues of the NIC.
	// +optional
	QueueCount int32 `json:"queueCount,omitempty" protobuf:"varint,8,opt,name=queueCount"`
	// LinkState of the NIC: up or down.
	// +optional
	LinkState string `json:"linkState,omitempty" protobuf:"bytes,9,opt,name=linkState"`
}

// VirtualMachineInstancePhaseTransitionTimestamp records a phase change.
type VirtualMachineInstancePhaseTransitionTimestamp struct {
	// Phase entered.
	// +optional
	Phase VirtualMachineInstancePhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstancePhase"`
	// PhaseTransitionTimestamp is when the phase was entered.
	// +optional
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty" protobuf:"bytes,2,opt,name=phaseTransitionTimestamp"`
}
