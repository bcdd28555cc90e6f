package v1

import (
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The parts of KubeVirt's VMI status that describe what this platform does
// not do (live migration, hotplug, memory dumps, backups). They decode and
// are kept, so a VMI read from KubeVirt moves over; nothing here writes them.

// VolumePhase is the phase of a volume's attachment.
type VolumePhase string

// HotplugVolumeStatus is the attachment of a hotplugged volume.
type HotplugVolumeStatus struct {
	// AttachPodName is the pod that attached the volume to the node.
	// +optional
	AttachPodName string `json:"attachPodName,omitempty" protobuf:"bytes,1,opt,name=attachPodName"`
	// AttachPodUID is that pod's UID.
	// +optional
	AttachPodUID types.UID `json:"attachPodUID,omitempty" protobuf:"bytes,2,opt,name=attachPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// DomainMemoryDumpInfo describes a memory dump.
type DomainMemoryDumpInfo struct {
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,1,opt,name=startTimestamp"`
	// EndTimestamp is when the dump ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,2,opt,name=endTimestamp"`
	// ClaimName is the claim the dump was written to.
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,3,opt,name=claimName"`
	// TargetFileName is the dump's file name.
	// +optional
	TargetFileName string `json:"targetFileName,omitempty" protobuf:"bytes,4,opt,name=targetFileName"`
}

// ContainerDiskInfo describes a containerDisk volume.
type ContainerDiskInfo struct {
	// Checksum of the disk image (deprecated by KubeVirt).
	// +optional
	Checksum uint32 `json:"checksum,omitempty" protobuf:"varint,1,opt,name=checksum"`
}

// KernelBootStatus describes the files of kernelBoot.
type KernelBootStatus struct {
	// KernelInfo describes the kernel.
	// +optional
	KernelInfo *KernelInfo `json:"kernelInfo,omitempty" protobuf:"bytes,1,opt,name=kernelInfo"`
	// InitrdInfo describes the initrd.
	// +optional
	InitrdInfo *InitrdInfo `json:"initrdInfo,omitempty" protobuf:"bytes,2,opt,name=initrdInfo"`
}

// KernelInfo describes a kernel image.
type KernelInfo struct {
	// Checksum of the kernel (deprecated by KubeVirt).
	// +optional
	Checksum uint32 `json:"checksum,omitempty" protobuf:"varint,1,opt,name=checksum"`
}

// InitrdInfo describes an initrd.
type InitrdInfo struct {
	// Checksum of the initrd (deprecated by KubeVirt).
	// +optional
	Checksum uint32 `json:"checksum,omitempty" protobuf:"varint,1,opt,name=checksum"`
}

// TopologyHints are hints for the scheduler.
type TopologyHints struct {
	// TSCFrequency the guest needs, in Hz.
	// +optional
	TSCFrequency *int64 `json:"tscFrequency,omitempty" protobuf:"varint,1,opt,name=tscFrequency"`
}

// CPUTopology is a CPU topology.
type CPUTopology struct {
	// Cores per socket.
	// +optional
	Cores uint32 `json:"cores,omitempty" protobuf:"varint,1,opt,name=cores"`
	// Sockets.
	// +optional
	Sockets uint32 `json:"sockets,omitempty" protobuf:"varint,2,opt,name=sockets"`
	// Threads per core.
	// +optional
	Threads uint32 `json:"threads,omitempty" protobuf:"varint,3,opt,name=threads"`
}

// MemoryStatus is the guest's memory.
type MemoryStatus struct {
	// GuestAtBoot is the memory the guest booted with.
	// +optional
	GuestAtBoot *resource.Quantity `json:"guestAtBoot,omitempty" protobuf:"bytes,1,opt,name=guestAtBoot"`
	// GuestCurrent is the memory the guest has now.
	// +optional
	GuestCurrent *resource.Quantity `json:"guestCurrent,omitempty" protobuf:"bytes,2,opt,name=guestCurrent"`
	// GuestRequested is the memory asked for by hotplug.
	// +optional
	GuestRequested *resource.Quantity `json:"guestRequested,omitempty" protobuf:"bytes,3,opt,name=guestRequested"`
	// MemoryOverhead is what the platform adds to the launcher pod.
	// +optional
	MemoryOverhead *resource.Quantity `json:"memoryOverhead,omitempty" protobuf:"bytes,4,opt,name=memoryOverhead"`
}

// StorageMigratedVolumeInfo is a volume a volume migration moves.
type StorageMigratedVolumeInfo struct {
	// VolumeName is the volume's name.
	VolumeName string `json:"volumeName" protobuf:"bytes,1,opt,name=volumeName"`
	// SourcePVCInfo is the claim it moves from.
	// +optional
	SourcePVCInfo *PersistentVolumeClaimInfo `json:"sourcePVCInfo,omitempty" protobuf:"bytes,2,opt,name=sourcePVCInfo"`
	// DestinationPVCInfo is the claim it moves to.
	// +optional
	DestinationPVCInfo *PersistentVolumeClaimInfo `json:"destinationPVCInfo,omitempty" protobuf:"bytes,3,opt,name=destinationPVCInfo"`
}

// ChangedBlockTrackingState is the state of changed block tracking.
type ChangedBlockTrackingState string

// ChangedBlockTrackingStatus is the state of changed block tracking.
type ChangedBlockTrackingStatus struct {
	// State of the tracking.
	State ChangedBlockTrackingState `json:"state" protobuf:"bytes,1,opt,name=state,casttype=ChangedBlockTrackingState"`
	// BackupStatus is the state of the last backup.
	// +optional
	BackupStatus *VirtualMachineInstanceBackupStatus `json:"backupStatus,omitempty" protobuf:"bytes,2,opt,name=backupStatus"`
}

// VirtualMachineInstanceBackupStatus is the state of a backup.
type VirtualMachineInstanceBackupStatus struct {
	// BackupName is the backup's name.
	// +optional
	BackupName string `json:"backupName,omitempty" protobuf:"bytes,1,opt,name=backupName"`
	// StartTimestamp is when it started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,2,opt,name=startTimestamp"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,3,opt,name=endTimestamp"`
	// Completed says it completed.
	// +optional
	Completed bool `json:"completed,omitempty" protobuf:"varint,4,opt,name=completed"`
	// Failed says it failed.
	// +optional
	Failed bool `json:"failed,omitempty" protobuf:"varint,5,opt,name=failed"`
	// BackupMsg says why, for a person.
	// +optional
	BackupMsg *string `json:"backupMsg,omitempty" protobuf:"bytes,6,opt,name=backupMsg"`
	// CheckpointName is the checkpoint the backup made.
	// +optional
	CheckpointName *string `json:"checkpointName,omitempty" protobuf:"bytes,7,opt,name=checkpointName"`
	// Volumes in the backup.
	// +optional
	// +listType=atomic
	Volumes []VirtualMachineInstanceBackupVolumeInfo `json:"volumes,omitempty" protobuf:"bytes,8,rep,name=volumes"`
	// QuiesceStatus says whether freezing the file systems worked.
	// +optional
	QuiesceStatus string `json:"quiesceStatus,omitempty" protobuf:"bytes,9,opt,name=quiesceStatus"`
}

// VirtualMachineInstanceBackupVolumeInfo is a volume in a backup.
type VirtualMachineInstanceBackupVolumeInfo struct {
	// VolumeName is the volume's name.
	VolumeName string `json:"volumeName" protobuf:"bytes,1,opt,name=volumeName"`
}

// VirtualMachineInstanceMigrationMethod is how a guest migrates.
type VirtualMachineInstanceMigrationMethod string

// VirtualMachineInstanceMigrationTransport is how migration data travels.
type VirtualMachineInstanceMigrationTransport string

// MigrationAbortStatus is the state of a migration's abort.
type MigrationAbortStatus string

// MigrationMode is the mode of a running migration.
type MigrationMode string

// MigrationNetworkType is the network a migration uses.
type MigrationNetworkType string

// MigrationCompression is the compression of migration data.
type MigrationCompression string

// VirtualMachineInstanceMigrationState is the state of a live migration.
type VirtualMachineInstanceMigrationState struct {
	// StartTimestamp is when it started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,1,opt,name=startTimestamp"`
	// EndTimestamp is when it ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,2,opt,name=endTimestamp"`
	// TargetNodeDomainReadyTimestamp is when the target's domain was ready.
	// +optional
	TargetNodeDomainReadyTimestamp *metav1.Time `json:"targetNodeDomainReadyTimestamp,omitempty" protobuf:"bytes,3,opt,name=targetNodeDomainReadyTimestamp"`
	// TargetNodeDomainDetected says the target saw its domain start.
	// +optional
	TargetNodeDomainDetected bool `json:"targetNodeDomainDetected,omitempty" protobuf:"varint,4,opt,name=targetNodeDomainDetected"`
	// TargetNodeAddress is the target node's migration address.
	// +optional
	TargetNodeAddress string `json:"targetNodeAddress,omitempty" protobuf:"bytes,5,opt,name=targetNodeAddress"`
	// TargetDirectMigrationNodePorts are the ports opened on the target.
	// +optional
	TargetDirectMigrationNodePorts map[string]int32 `json:"targetDirectMigrationNodePorts,omitempty" protobuf:"bytes,6,rep,name=targetDirectMigrationNodePorts"`
	// TargetNode is the node the guest moves to.
	// +optional
	TargetNode string `json:"targetNode,omitempty" protobuf:"bytes,7,opt,name=targetNode"`
	// TargetPod is the launcher pod the guest moves to.
	// +optional
	TargetPod string `json:"targetPod,omitempty" protobuf:"bytes,8,opt,name=targetPod"`
	// TargetAttachmentPodUID is the target's hotplug attachment pod.
	// +optional
	TargetAttachmentPodUID types.UID `json:"targetAttachmentPodUID,omitempty" protobuf:"bytes,9,opt,name=targetAttachmentPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// SourceNode is the node the guest moves from.
	// +optional
	SourceNode string `json:"sourceNode,omitempty" protobuf:"bytes,10,opt,name=sourceNode"`
	// SourcePod is the launcher pod the guest moves from.
	// +optional
	SourcePod string `json:"sourcePod,omitempty" protobuf:"bytes,11,opt,name=sourcePod"`
	// Completed says the migration completed.
	// +optional
	Completed bool `json:"completed,omitempty" protobuf:"varint,12,opt,name=completed"`
	// Failed says the migration failed.
	// +optional
	Failed bool `json:"failed,omitempty" protobuf:"varint,13,opt,name=failed"`
	// AbortRequested says an abort was asked for.
	// +optional
	AbortRequested bool `json:"abortRequested,omitempty" protobuf:"varint,14,opt,name=abortRequested"`
	// AbortStatus is the state of the abort.
	// +optional
	AbortStatus MigrationAbortStatus `json:"abortStatus,omitempty" protobuf:"bytes,15,opt,name=abortStatus,casttype=MigrationAbortStatus"`
	// FailureReason says why it failed.
	// +optional
	FailureReason string `json:"failureReason,omitempty" protobuf:"bytes,16,opt,name=failureReason"`
	// MigrationUID is the migration object's UID.
	// +optional
	MigrationUID types.UID `json:"migrationUid,omitempty" protobuf:"bytes,17,opt,name=migrationUid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// Mode: PreCopy, PostCopy or Paused.
	// +optional
	Mode MigrationMode `json:"mode,omitempty" protobuf:"bytes,18,opt,name=mode,casttype=MigrationMode"`
	// MigrationPolicyName is the policy that applied.
	// +optional
	MigrationPolicyName *string `json:"migrationPolicyName,omitempty" protobuf:"bytes,19,opt,name=migrationPolicyName"`
	// MigrationConfiguration are the options that applied.
	// +optional
	MigrationConfiguration *VMIMConfigurationOptions `json:"migrationConfiguration,omitempty" protobuf:"bytes,20,opt,name=migrationConfiguration"`
	// TargetCPUSet are the dedicated CPUs on the target.
	// +optional
	// +listType=atomic
	TargetCPUSet []int32 `json:"targetCPUSet,omitempty" protobuf:"varint,21,rep,name=targetCPUSet"`
	// TargetNodeTopology is the NUMA topology of the target.
	// +optional
	TargetNodeTopology string `json:"targetNodeTopology,omitempty" protobuf:"bytes,22,opt,name=targetNodeTopology"`
	// SourcePersistentStatePVCName is the source's state claim.
	// +optional
	SourcePersistentStatePVCName string `json:"sourcePersistentStatePVCName,omitempty" protobuf:"bytes,23,opt,name=sourcePersistentStatePVCName"`
	// TargetPersistentStatePVCName is the target's state claim.
	// +optional
	TargetPersistentStatePVCName string `json:"targetPersistentStatePVCName,omitempty" protobuf:"bytes,24,opt,name=targetPersistentStatePVCName"`
	// SourceState is the source's side.
	// +optional
	SourceState *VirtualMachineInstanceMigrationSourceState `json:"sourceState,omitempty" protobuf:"bytes,25,opt,name=sourceState"`
	// TargetState is the target's side.
	// +optional
	TargetState *VirtualMachineInstanceMigrationTargetState `json:"targetState,omitempty" protobuf:"bytes,26,opt,name=targetState"`
	// MigrationNetworkType: Pod or Migration.
	// +optional
	MigrationNetworkType MigrationNetworkType `json:"migrationNetworkType,omitempty" protobuf:"bytes,27,opt,name=migrationNetworkType,casttype=MigrationNetworkType"`
	// TargetMemoryOverhead is the target launcher pod's overhead.
	// +optional
	TargetMemoryOverhead *resource.Quantity `json:"targetMemoryOverhead,omitempty" protobuf:"bytes,28,opt,name=targetMemoryOverhead"`
	// DowntimeMilliseconds is how long the guest was paused for the
	// switch-over of a completed migration, from libvirt's job statistics
	// (this platform's; KubeVirt lacks it). Written by the target node's
	// virt-handler together with completed.
	// +optional
	DowntimeMilliseconds int64 `json:"downtimeMilliseconds,omitempty" protobuf:"varint,29,opt,name=downtimeMilliseconds"`
}

// VirtualMachineInstanceCommonMigrationState is one side of a migration.
type VirtualMachineInstanceCommonMigrationState struct {
	// Node of this side.
	// +optional
	Node string `json:"node,omitempty" protobuf:"bytes,1,opt,name=node"`
	// Pod of this side.
	// +optional
	Pod string `json:"pod,omitempty" protobuf:"bytes,2,opt,name=pod"`
	// MigrationUID is this side's migration object.
	// +optional
	MigrationUID types.UID `json:"migrationUID,omitempty" protobuf:"bytes,3,opt,name=migrationUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// DomainName is this side's libvirt domain.
	// +optional
	DomainName *string `json:"domainName,omitempty" protobuf:"bytes,4,opt,name=domainName"`
	// DomainNamespace is the namespace in the domain's name.
	// +optional
	DomainNamespace *string `json:"domainNamespace,omitempty" protobuf:"bytes,5,opt,name=domainNamespace"`
	// SyncAddress is where the sides synchronise.
	// +optional
	SyncAddress *string `json:"syncAddress,omitempty" protobuf:"bytes,6,opt,name=syncAddress"`
	// PersistentStatePVCName is this side's state claim.
	// +optional
	PersistentStatePVCName *string `json:"persistentStatePVCName,omitempty" protobuf:"bytes,7,opt,name=persistentStatePVCName"`
	// SelinuxContext of this side's pod.
	// +optional
	SelinuxContext string `json:"selinuxContext,omitempty" protobuf:"bytes,8,opt,name=selinuxContext"`
	// VirtualMachineInstanceUID is this side's VMI.
	// +optional
	VirtualMachineInstanceUID *types.UID `json:"virtualMachineInstanceUID,omitempty" protobuf:"bytes,9,opt,name=virtualMachineInstanceUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
}

// VirtualMachineInstanceMigrationSourceState is the source of a migration.
type VirtualMachineInstanceMigrationSourceState struct {
	// VirtualMachineInstanceCommonMigrationState is the side's state.
	VirtualMachineInstanceCommonMigrationState `json:",inline" protobuf:"bytes,1,opt,name=virtualMachineInstanceCommonMigrationState"`
	// NodeSelectors the target's pod needs.
	// +optional
	NodeSelectors map[string]string `json:"nodeSelectors,omitempty" protobuf:"bytes,2,rep,name=nodeSelectors"`
}

// VirtualMachineInstanceMigrationTargetState is the target of a migration.
type VirtualMachineInstanceMigrationTargetState struct {
	// VirtualMachineInstanceCommonMigrationState is the side's state.
	VirtualMachineInstanceCommonMigrationState `json:",inline" protobuf:"bytes,1,opt,name=virtualMachineInstanceCommonMigrationState"`
	// DomainReadyTimestamp is when the target's domain was ready.
	// +optional
	DomainReadyTimestamp *metav1.Time `json:"domainReadyTimestamp,omitempty" protobuf:"bytes,2,opt,name=domainReadyTimestamp"`
	// DomainDetected says the target saw its domain start.
	// +optional
	DomainDetected bool `json:"domainDetected,omitempty" protobuf:"varint,3,opt,name=domainDetected"`
	// NodeAddress is the target node's migration address.
	// +optional
	NodeAddress *string `json:"nodeAddress,omitempty" protobuf:"bytes,4,opt,name=nodeAddress"`
	// DirectMigrationNodePorts are the ports opened on the target.
	// +optional
	DirectMigrationNodePorts map[string]int32 `json:"directMigrationNodePorts,omitempty" protobuf:"bytes,5,rep,name=directMigrationNodePorts"`
	// AttachmentPodUID is the target's hotplug attachment pod.
	// +optional
	AttachmentPodUID *types.UID `json:"attachmentPodUID,omitempty" protobuf:"bytes,6,opt,name=attachmentPodUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// CPUSet are the dedicated CPUs on the target.
	// +optional
	// +listType=atomic
	CPUSet []int32 `json:"cpuSet,omitempty" protobuf:"varint,7,rep,name=cpuSet"`
	// NodeTopology is the NUMA topology of the target.
	// +optional
	NodeTopology *string `json:"nodeTopology,omitempty" protobuf:"bytes,8,opt,name=nodeTopology"`
}

// VMIMConfigurationOptions are the options a migration ran with.
type VMIMConfigurationOptions struct {
	// NodeDrainTaintKey is the taint that drains a node.
	// +optional
	NodeDrainTaintKey *string `json:"nodeDrainTaintKey,omitempty" protobuf:"bytes,1,opt,name=nodeDrainTaintKey"`
	// ParallelOutboundMigrationsPerNode is the most outgoing migrations
	// per node.
	// +optional
	ParallelOutboundMigrationsPerNode *uint32 `json:"parallelOutboundMigrationsPerNode,omitempty" protobuf:"varint,2,opt,name=parallelOutboundMigrationsPerNode"`
	// ParallelMigrationsPerCluster is the most migrations in the cluster.
	// +optional
	ParallelMigrationsPerCluster *uint32 `json:"parallelMigrationsPerCluster,omitempty" protobuf:"varint,3,opt,name=parallelMigrationsPerCluster"`
	// AllowAutoConverge slows the guest down so the migration converges.
	// +optional
	AllowAutoConverge *bool `json:"allowAutoConverge,omitempty" protobuf:"varint,4,opt,name=allowAutoConverge"`
	// BandwidthPerMigration is the bandwidth per second a migration may use.
	// +optional
	BandwidthPerMigration *resource.Quantity `json:"bandwidthPerMigration,omitempty" protobuf:"bytes,5,opt,name=bandwidthPerMigration"`
	// CompletionTimeoutPerGiB is the seconds per GiB a migration may take.
	// +optional
	CompletionTimeoutPerGiB *int64 `json:"completionTimeoutPerGiB,omitempty" protobuf:"varint,6,opt,name=completionTimeoutPerGiB"`
	// MaxDowntimeMs is the longest pause of the switch-over (an int64 where
	// KubeVirt has a uint64, which server-side apply cannot hold).
	// +optional
	MaxDowntimeMs *int64 `json:"maxDowntimeMs,omitempty" protobuf:"varint,7,opt,name=maxDowntimeMs"`
	// ProgressTimeout is the seconds a migration may make no progress.
	// +optional
	ProgressTimeout *int64 `json:"progressTimeout,omitempty" protobuf:"varint,8,opt,name=progressTimeout"`
	// UtilityVolumesTimeout is the seconds a migration waits for utility
	// volumes to go.
	// +optional
	UtilityVolumesTimeout *int64 `json:"utilityVolumesTimeout,omitempty" protobuf:"varint,9,opt,name=utilityVolumesTimeout"`
	// UnsafeMigrationOverride migrates even when it is unsafe.
	// +optional
	UnsafeMigrationOverride *bool `json:"unsafeMigrationOverride,omitempty" protobuf:"varint,10,opt,name=unsafeMigrationOverride"`
	// AllowPostCopy switches to post-copy when the migration is slow.
	// +optional
	AllowPostCopy *bool `json:"allowPostCopy,omitempty" protobuf:"varint,11,opt,name=allowPostCopy"`
	// AllowWorkloadDisruption pauses the guest rather than cancel.
	// +optional
	AllowWorkloadDisruption *bool `json:"allowWorkloadDisruption,omitempty" protobuf:"varint,12,opt,name=allowWorkloadDisruption"`
	// DisableTLS turns off the migration's encryption.
	// +optional
	DisableTLS *bool `json:"disableTLS,omitempty" protobuf:"varint,13,opt,name=disableTLS"`
	// Network is the network migrations use.
	// +optional
	Network *string `json:"network,omitempty" protobuf:"bytes,14,opt,name=network"`
	// MatchSELinuxLevelOnMigration lets the target pod take its own level.
	// +optional
	MatchSELinuxLevelOnMigration *bool `json:"matchSELinuxLevelOnMigration,omitempty" protobuf:"varint,15,opt,name=matchSELinuxLevelOnMigration"`
	// ExperimentalMigrationOptions are experimental tunables.
	// +optional
	ExperimentalMigrationOptions *ExperimentalMigrationOptions `json:"experimental,omitempty" protobuf:"bytes,16,opt,name=experimental"`
}

// ExperimentalMigrationOptions are experimental migration tunables.
type ExperimentalMigrationOptions struct {
	// StallDetector tunes the detection of a stalled migration.
	// +optional
	StallDetector *StallDetectorOptions `json:"stallDetector,omitempty" protobuf:"bytes,1,opt,name=stallDetector"`
	// DowntimeTuning ramps the allowed downtime up over a migration.
	// +optional
	DowntimeTuning *DowntimeTuningOptions `json:"downtimeTuning,omitempty" protobuf:"bytes,2,opt,name=downtimeTuning"`
	// Compression of the migration data: none or zstd.
	// +optional
	Compression *MigrationCompression `json:"compression,omitempty" protobuf:"bytes,3,opt,name=compression,casttype=MigrationCompression"`
}

// StallDetectorOptions tune the detection of a stalled migration.
type StallDetectorOptions struct {
	// StallMargin in percent.
	// +optional
	StallMargin *int64 `json:"stallMargin,omitempty" protobuf:"varint,1,opt,name=stallMargin"`
	// EwmaAlpha smooths the bandwidth estimate.
	// +optional
	EwmaAlpha *resource.Quantity `json:"ewmaAlpha,omitempty" protobuf:"bytes,2,opt,name=ewmaAlpha"`
	// StallProgressTimeout in seconds.
	// +optional
	StallProgressTimeout *int64 `json:"stallProgressTimeout,omitempty" protobuf:"varint,3,opt,name=stallProgressTimeout"`
	// SwitchoverTimeout in seconds.
	// +optional
	SwitchoverTimeout *int64 `json:"switchoverTimeout,omitempty" protobuf:"varint,4,opt,name=switchoverTimeout"`
	// PrecopyPossibleFactor bounds the estimated downtime.
	// +optional
	PrecopyPossibleFactor *resource.Quantity `json:"precopyPossibleFactor,omitempty" protobuf:"bytes,5,opt,name=precopyPossibleFactor"`
	// PatienceWindowDecayFactor shrinks the patience window.
	// +optional
	PatienceWindowDecayFactor *resource.Quantity `json:"patienceWindowDecayFactor,omitempty" protobuf:"bytes,6,opt,name=patienceWindowDecayFactor"`
	// SearchLocalMinima waits for a local minimum before acting.
	// +optional
	SearchLocalMinima *bool `json:"searchLocalMinima,omitempty" protobuf:"varint,7,opt,name=searchLocalMinima"`
	// CompletionTimeoutFactor multiplies the completion timeout.
	// +optional
	CompletionTimeoutFactor *resource.Quantity `json:"completionTimeoutFactor,omitempty" protobuf:"bytes,8,opt,name=completionTimeoutFactor"`
}

// DowntimeTuningOptions ramp the allowed downtime up over a migration.
type DowntimeTuningOptions struct {
	// InitialMs is the first allowed downtime.
	// +optional
	InitialMs *int64 `json:"initialMs,omitempty" protobuf:"varint,1,opt,name=initialMs"`
	// Steps to the most allowed downtime.
	// +optional
	Steps *int32 `json:"steps,omitempty" protobuf:"varint,2,opt,name=steps"`
	// StartAfterIteration is the copy iteration the ramp starts after.
	// +optional
	StartAfterIteration *int64 `json:"startAfterIteration,omitempty" protobuf:"varint,3,opt,name=startAfterIteration"`
	// CooldownSeconds between steps.
	// +optional
	CooldownSeconds *int32 `json:"cooldownSeconds,omitempty" protobuf:"varint,4,opt,name=cooldownSeconds"`
}
