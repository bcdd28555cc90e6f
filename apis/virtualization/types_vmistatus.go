package virtualization

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
	AttachPodName string
	// AttachPodUID is that pod's UID.
	AttachPodUID types.UID
}

// DomainMemoryDumpInfo describes a memory dump.
type DomainMemoryDumpInfo struct {
	// StartTimestamp is when the dump started.
	StartTimestamp *metav1.Time
	// EndTimestamp is when the dump ended.
	EndTimestamp *metav1.Time
	// ClaimName is the claim the dump was written to.
	ClaimName string
	// TargetFileName is the dump's file name.
	TargetFileName string
}

// ContainerDiskInfo describes a containerDisk volume.
type ContainerDiskInfo struct {
	// Checksum of the disk image (deprecated by KubeVirt).
	Checksum uint32
}

// KernelBootStatus describes the files of kernelBoot.
type KernelBootStatus struct {
	// KernelInfo describes the kernel.
	KernelInfo *KernelInfo
	// InitrdInfo describes the initrd.
	InitrdInfo *InitrdInfo
}

// KernelInfo describes a kernel image.
type KernelInfo struct {
	// Checksum of the kernel (deprecated by KubeVirt).
	Checksum uint32
}

// InitrdInfo describes an initrd.
type InitrdInfo struct {
	// Checksum of the initrd (deprecated by KubeVirt).
	Checksum uint32
}

// TopologyHints are hints for the scheduler.
type TopologyHints struct {
	// TSCFrequency the guest needs, in Hz.
	TSCFrequency *int64
}

// CPUTopology is a CPU topology.
type CPUTopology struct {
	// Cores per socket.
	Cores uint32
	// Sockets.
	Sockets uint32
	// Threads per core.
	Threads uint32
}

// MemoryStatus is the guest's memory.
type MemoryStatus struct {
	// GuestAtBoot is the memory the guest booted with.
	GuestAtBoot *resource.Quantity
	// GuestCurrent is the memory the guest has now.
	GuestCurrent *resource.Quantity
	// GuestRequested is the memory asked for by hotplug.
	GuestRequested *resource.Quantity
	// MemoryOverhead is what the platform adds to the launcher pod.
	MemoryOverhead *resource.Quantity
}

// StorageMigratedVolumeInfo is a volume a volume migration moves.
type StorageMigratedVolumeInfo struct {
	// VolumeName is the volume's name.
	VolumeName string
	// SourcePVCInfo is the claim it moves from.
	SourcePVCInfo *PersistentVolumeClaimInfo
	// DestinationPVCInfo is the claim it moves to.
	DestinationPVCInfo *PersistentVolumeClaimInfo
}

// ChangedBlockTrackingState is the state of changed block tracking.
type ChangedBlockTrackingState string

// ChangedBlockTrackingStatus is the state of changed block tracking.
type ChangedBlockTrackingStatus struct {
	// State of the tracking.
	State ChangedBlockTrackingState
	// BackupStatus is the state of the last backup.
	BackupStatus *VirtualMachineInstanceBackupStatus
}

// VirtualMachineInstanceBackupStatus is the state of a backup.
type VirtualMachineInstanceBackupStatus struct {
	// BackupName is the backup's name.
	BackupName string
	// StartTimestamp is when it started.
	StartTimestamp *metav1.Time
	// EndTimestamp is when it ended.
	EndTimestamp *metav1.Time
	// Completed says it completed.
	Completed bool
	// Failed says it failed.
	Failed bool
	// BackupMsg says why, for a person.
	BackupMsg *string
	// CheckpointName is the checkpoint the backup made.
	CheckpointName *string
	// Volumes in the backup.
	Volumes []VirtualMachineInstanceBackupVolumeInfo
	// QuiesceStatus says whether freezing the file systems worked.
	QuiesceStatus string
}

// VirtualMachineInstanceBackupVolumeInfo is a volume in a backup.
type VirtualMachineInstanceBackupVolumeInfo struct {
	// VolumeName is the volume's name.
	VolumeName string
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
	StartTimestamp *metav1.Time
	// EndTimestamp is when it ended.
	EndTimestamp *metav1.Time
	// TargetNodeDomainReadyTimestamp is when the target's domain was ready.
	TargetNodeDomainReadyTimestamp *metav1.Time
	// TargetNodeDomainDetected says the target saw its domain start.
	TargetNodeDomainDetected bool
	// TargetNodeAddress is the target node's migration address.
	TargetNodeAddress string
	// TargetDirectMigrationNodePorts are the ports opened on the target.
	TargetDirectMigrationNodePorts map[string]int32
	// TargetNode is the node the guest moves to.
	TargetNode string
	// TargetPod is the launcher pod the guest moves to.
	TargetPod string
	// TargetAttachmentPodUID is the target's hotplug attachment pod.
	TargetAttachmentPodUID types.UID
	// SourceNode is the node the guest moves from.
	SourceNode string
	// SourcePod is the launcher pod the guest moves from.
	SourcePod string
	// Completed says the migration completed.
	Completed bool
	// Failed says the migration failed.
	Failed bool
	// AbortRequested says an abort was asked for.
	AbortRequested bool
	// AbortStatus is the state of the abort.
	AbortStatus MigrationAbortStatus
	// FailureReason says why it failed.
	FailureReason string
	// MigrationUID is the migration object's UID.
	MigrationUID types.UID
	// Mode: PreCopy, PostCopy or Paused.
	Mode MigrationMode
	// MigrationPolicyName is the policy that applied.
	MigrationPolicyName *string
	// MigrationConfiguration are the options that applied.
	MigrationConfiguration *VMIMConfigurationOptions
	// TargetCPUSet are the dedicated CPUs on the target.
	TargetCPUSet []int32
	// TargetNodeTopology is the NUMA topology of the target.
	TargetNodeTopology string
	// SourcePersistentStatePVCName is the source's state claim.
	SourcePersistentStatePVCName string
	// TargetPersistentStatePVCName is the target's state claim.
	TargetPersistentStatePVCName string
	// SourceState is the source's side.
	SourceState *VirtualMachineInstanceMigrationSourceState
	// TargetState is the target's side.
	TargetState *VirtualMachineInstanceMigrationTargetState
	// MigrationNetworkType: Pod or Migration.
	MigrationNetworkType MigrationNetworkType
	// TargetMemoryOverhead is the target launcher pod's overhead.
	TargetMemoryOverhead *resource.Quantity
	// DowntimeMilliseconds is how long the guest was paused for the
	// switch-over of a completed migration (libvirt's job statistics).
	DowntimeMilliseconds int64
}

// VirtualMachineInstanceCommonMigrationState is one side of a migration.
type VirtualMachineInstanceCommonMigrationState struct {
	// Node of this side.
	Node string
	// Pod of this side.
	Pod string
	// MigrationUID is this side's migration object.
	MigrationUID types.UID
	// DomainName is this side's libvirt domain.
	DomainName *string
	// DomainNamespace is the namespace in the domain's name.
	DomainNamespace *string
	// SyncAddress is where the sides synchronise.
	SyncAddress *string
	// PersistentStatePVCName is this side's state claim.
	PersistentStatePVCName *string
	// SelinuxContext of this side's pod.
	SelinuxContext string
	// VirtualMachineInstanceUID is this side's VMI.
	VirtualMachineInstanceUID *types.UID
}

// VirtualMachineInstanceMigrationSourceState is the source of a migration.
type VirtualMachineInstanceMigrationSourceState struct {
	// VirtualMachineInstanceCommonMigrationState is the side's state.
	VirtualMachineInstanceCommonMigrationState
	// NodeSelectors the target's pod needs.
	NodeSelectors map[string]string
}

// VirtualMachineInstanceMigrationTargetState is the target of a migration.
type VirtualMachineInstanceMigrationTargetState struct {
	// VirtualMachineInstanceCommonMigrationState is the side's state.
	VirtualMachineInstanceCommonMigrationState
	// DomainReadyTimestamp is when the target's domain was ready.
	DomainReadyTimestamp *metav1.Time
	// DomainDetected says the target saw its domain start.
	DomainDetected bool
	// NodeAddress is the target node's migration address.
	NodeAddress *string
	// DirectMigrationNodePorts are the ports opened on the target.
	DirectMigrationNodePorts map[string]int32
	// AttachmentPodUID is the target's hotplug attachment pod.
	AttachmentPodUID *types.UID
	// CPUSet are the dedicated CPUs on the target.
	CPUSet []int32
	// NodeTopology is the NUMA topology of the target.
	NodeTopology *string
}

// VMIMConfigurationOptions are the options a migration ran with.
type VMIMConfigurationOptions struct {
	// NodeDrainTaintKey is the taint that drains a node.
	NodeDrainTaintKey *string
	// ParallelOutboundMigrationsPerNode is the most outgoing migrations
	// per node.
	ParallelOutboundMigrationsPerNode *uint32
	// ParallelMigrationsPerCluster is the most migrations in the cluster.
	ParallelMigrationsPerCluster *uint32
	// AllowAutoConverge slows the guest down so the migration converges.
	AllowAutoConverge *bool
	// BandwidthPerMigration is the bandwidth per second a migration may use.
	BandwidthPerMigration *resource.Quantity
	// CompletionTimeoutPerGiB is the seconds per GiB a migration may take.
	CompletionTimeoutPerGiB *int64
	// MaxDowntimeMs is the longest pause of the switch-over (an int64 where
	// KubeVirt has a uint64, which server-side apply cannot hold).
	MaxDowntimeMs *int64
	// ProgressTimeout is the seconds a migration may make no progress.
	ProgressTimeout *int64
	// UtilityVolumesTimeout is the seconds a migration waits for utility
	// volumes to go.
	UtilityVolumesTimeout *int64
	// UnsafeMigrationOverride migrates even when it is unsafe.
	UnsafeMigrationOverride *bool
	// AllowPostCopy switches to post-copy when the migration is slow.
	AllowPostCopy *bool
	// AllowWorkloadDisruption pauses the guest rather than cancel.
	AllowWorkloadDisruption *bool
	// DisableTLS turns off the migration's encryption.
	DisableTLS *bool
	// Network is the network migrations use.
	Network *string
	// MatchSELinuxLevelOnMigration lets the target pod take its own level.
	MatchSELinuxLevelOnMigration *bool
	// ExperimentalMigrationOptions are experimental tunables.
	ExperimentalMigrationOptions *ExperimentalMigrationOptions
}

// ExperimentalMigrationOptions are experimental migration tunables.
type ExperimentalMigrationOptions struct {
	// StallDetector tunes the detection of a stalled migration.
	StallDetector *StallDetectorOptions
	// DowntimeTuning ramps the allowed downtime up over a migration.
	DowntimeTuning *DowntimeTuningOptions
	// Compression of the migration data: none or zstd.
	Compression *MigrationCompression
}

// StallDetectorOptions tune the detection of a stalled migration.
type StallDetectorOptions struct {
	// StallMargin in percent.
	StallMargin *int64
	// EwmaAlpha smooths the bandwidth estimate.
	EwmaAlpha *resource.Quantity
	// StallProgressTimeout in seconds.
	StallProgressTimeout *int64
	// SwitchoverTimeout in seconds.
	SwitchoverTimeout *int64
	// PrecopyPossibleFactor bounds the estimated downtime.
	PrecopyPossibleFactor *resource.Quantity
	// PatienceWindowDecayFactor shrinks the patience window.
	PatienceWindowDecayFactor *resource.Quantity
	// SearchLocalMinima waits for a local minimum before acting.
	SearchLocalMinima *bool
	// CompletionTimeoutFactor multiplies the completion timeout.
	CompletionTimeoutFactor *resource.Quantity
}

// DowntimeTuningOptions ramp the allowed downtime up over a migration.
type DowntimeTuningOptions struct {
	// InitialMs is the first allowed downtime.
	InitialMs *int64
	// Steps to the most allowed downtime.
	Steps *int32
	// StartAfterIteration is the copy iteration the ramp starts after.
	StartAfterIteration *int64
	// CooldownSeconds between steps.
	CooldownSeconds *int32
}
