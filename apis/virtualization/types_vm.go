package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachine keeps a VirtualMachineInstance from its template alive, or
// stopped, according to its run strategy. It outlives its instances: stopping
// a VM deletes its VMI; starting it creates a new one.
type VirtualMachine struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state of the VM.
	Spec VirtualMachineSpec
	// Status is the observed state of the VM. Written only through /status.
	Status VirtualMachineStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineList is a list of VirtualMachines.
type VirtualMachineList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachine
}

// VirtualMachineRunStrategy is when a VM's instance should run.
// +enum
type VirtualMachineRunStrategy string

const (
	// RunStrategyAlways keeps an instance running: it is recreated after any stop.
	RunStrategyAlways VirtualMachineRunStrategy = "Always"
	// RunStrategyRerunOnFailure recreates the instance only after it failed;
	// a guest that shuts down by itself stays stopped.
	RunStrategyRerunOnFailure VirtualMachineRunStrategy = "RerunOnFailure"
	// RunStrategyManual leaves starting and stopping to the user.
	RunStrategyManual VirtualMachineRunStrategy = "Manual"
	// RunStrategyHalted keeps no instance.
	RunStrategyHalted VirtualMachineRunStrategy = "Halted"
)

// VirtualMachineSpec is the desired state of a VM.
type VirtualMachineSpec struct {
	// Running is the deprecated boolean form of runStrategy: true is Always,
	// false is Halted. Set at most one of running and runStrategy.
	Running *bool
	// RunStrategy is when the VM's instance should run: Always,
	// RerunOnFailure, Manual or Halted.
	RunStrategy *VirtualMachineRunStrategy
	// Template is the instance the VM creates.
	Template *VirtualMachineInstanceTemplateSpec
	// DataVolumeTemplates are CDI DataVolumes the VM creates with itself
	// for its volumes. Refused: the Containerized Data Importer (CDI) is
	// not installed with this platform; create a PersistentVolumeClaim and
	// use a persistentVolumeClaim volume.
	DataVolumeTemplates []DataVolumeTemplateSpec
	// UpdateVolumesStrategy is how a change of the template's volumes
	// reaches a running instance: Replacement (the default: at the next
	// start) or Migration (by a volume migration, refused: this platform
	// does not migrate volumes to other storage).
	UpdateVolumesStrategy *UpdateVolumesStrategy
	// Instancetype is the instancetype the VM takes its vCPUs, memory and
	// placement from; the template must then leave those empty.
	Instancetype *InstancetypeMatcher
	// Preference is the preference that fills what the template leaves empty.
	Preference *PreferenceMatcher
}

// UpdateVolumesStrategy is how a change of a VM's volumes reaches its
// instance.
// +enum
type UpdateVolumesStrategy string

// Volume update strategies.
const (
	UpdateVolumesStrategyReplacement UpdateVolumesStrategy = "Replacement"
	UpdateVolumesStrategyMigration   UpdateVolumesStrategy = "Migration"
)

// DataVolumeTemplateSpec is a CDI DataVolume a VM creates. Its spec is CDI's
// DataVolumeSpec, kept as the JSON it was given: this platform has no CDI to
// interpret it, and refuses the template.
type DataVolumeTemplateSpec struct {
	// APIVersion of the DataVolume, such as cdi.kubevirt.io/v1beta1.
	APIVersion string
	// Kind, DataVolume.
	Kind string
	// Metadata of the DataVolume; its name is the volume's claim name.
	ObjectMeta metav1.ObjectMeta
	// Spec is CDI's DataVolumeSpec (source, storage or pvc, ...).
	Spec runtime.RawExtension
	// Status is always empty (KubeVirt keeps it for compatibility).
	Status *DataVolumeTemplateDummyStatus
}

// DataVolumeTemplateDummyStatus is the empty status of a DataVolume template.
type DataVolumeTemplateDummyStatus struct{}

// EffectiveRunStrategy is the run strategy s asks for, with the deprecated
// Running mapped onto it: RunStrategy if set, else Always for Running=true,
// else Halted.
func (s *VirtualMachineSpec) EffectiveRunStrategy() VirtualMachineRunStrategy {
	if s.RunStrategy != nil {
		return *s.RunStrategy
	}
	if s.Running != nil && *s.Running {
		return RunStrategyAlways
	}
	return RunStrategyHalted
}

// VirtualMachineInstanceTemplateSpec is the template of a VM's instances.
type VirtualMachineInstanceTemplateSpec struct {
	// Metadata copied to each instance (labels and annotations).
	ObjectMeta metav1.ObjectMeta
	// Spec of each instance.
	Spec VirtualMachineInstanceSpec
}

// VirtualMachinePrintableStatus is a one-word summary of a VM for people.
type VirtualMachinePrintableStatus string

const (
	VirtualMachineStatusStopped          VirtualMachinePrintableStatus = "Stopped"
	VirtualMachineStatusProvisioning     VirtualMachinePrintableStatus = "Provisioning"
	VirtualMachineStatusStarting         VirtualMachinePrintableStatus = "Starting"
	VirtualMachineStatusRunning          VirtualMachinePrintableStatus = "Running"
	VirtualMachineStatusPaused           VirtualMachinePrintableStatus = "Paused"
	VirtualMachineStatusStopping         VirtualMachinePrintableStatus = "Stopping"
	VirtualMachineStatusTerminating      VirtualMachinePrintableStatus = "Terminating"
	VirtualMachineStatusCrashLoopBackOff VirtualMachinePrintableStatus = "CrashLoopBackOff"
	VirtualMachineStatusUnschedulable    VirtualMachinePrintableStatus = "ErrorUnschedulable"
	VirtualMachineStatusErrImagePull     VirtualMachinePrintableStatus = "ErrImagePull"
	VirtualMachineStatusImagePullBackOff VirtualMachinePrintableStatus = "ImagePullBackOff"
	VirtualMachineStatusPvcNotFound      VirtualMachinePrintableStatus = "ErrorPvcNotFound"
	VirtualMachineStatusUnknown          VirtualMachinePrintableStatus = "Unknown"
)

// VirtualMachineStatus is the observed state of a VM.
type VirtualMachineStatus struct {
	// PrintableStatus summarises the VM in one word, for people.
	PrintableStatus VirtualMachinePrintableStatus
	// Created is true while an instance of the VM exists.
	Created bool
	// Ready is true while the instance of the VM is Ready.
	Ready bool
	// Conditions are observations of the VM.
	Conditions []VirtualMachineCondition
	// StartFailure tracks consecutive failed starts for the crash-loop back-off.
	StartFailure *VirtualMachineStartFailure
	// ObservedGeneration is the generation of the spec last acted on.
	ObservedGeneration int64
	// StateChangeRequests are actions asked of the controller through the
	// start, stop and restart subresources, in order: e.g. stop the
	// instance with this UID, then start a new one. The API appends them,
	// the controller removes each once it is done.
	StateChangeRequests []VirtualMachineStateChangeRequest

	// The fields below are KubeVirt's; this platform has no snapshots,
	// hotplug, memory dumps or volume migrations, and leaves them empty.

	// SnapshotInProgress is the VirtualMachineSnapshot being taken.
	SnapshotInProgress *string
	// RestoreInProgress is the VirtualMachineRestore being done.
	RestoreInProgress *string
	// VolumeRequests are volumes to hotplug into or out of the instance.
	VolumeRequests []VirtualMachineVolumeRequest
	// VolumeSnapshotStatuses say which volumes can be snapshotted.
	VolumeSnapshotStatuses []VolumeSnapshotStatus
	// MemoryDumpRequest is a memory dump asked for.
	MemoryDumpRequest *VirtualMachineMemoryDumpRequest
	// DesiredGeneration is the generation the instance should have.
	DesiredGeneration int64
	// RunStrategy is the run strategy last acted on.
	RunStrategy VirtualMachineRunStrategy
	// VolumeUpdateState is the state of a volume update.
	VolumeUpdateState *VolumeUpdateState
	// ChangedBlockTracking is the state of changed block tracking.
	ChangedBlockTracking *ChangedBlockTrackingStatus
	// InstancetypeRef is the instancetype, and its revision, the VM's
	// instances are created with.
	InstancetypeRef *InstancetypeStatusRef
	// PreferenceRef is the preference, and its revision, the VM's instances
	// are created with.
	PreferenceRef *InstancetypeStatusRef
}

// VirtualMachineVolumeRequest is a volume to hotplug or unplug.
type VirtualMachineVolumeRequest struct {
	// AddVolumeOptions adds a volume.
	AddVolumeOptions *AddVolumeOptions
	// RemoveVolumeOptions removes a volume.
	RemoveVolumeOptions *RemoveVolumeOptions
}

// AddVolumeOptions describe a volume to hotplug.
type AddVolumeOptions struct {
	// Name of the volume and its disk.
	Name string
	// Disk of the volume.
	Disk *Disk
	// VolumeSource of the volume.
	VolumeSource *HotplugVolumeSource
	// DryRun, when present, asks that nothing be persisted.
	DryRun []string
}

// RemoveVolumeOptions describe a volume to unplug.
type RemoveVolumeOptions struct {
	// Name of the volume and its disk.
	Name string
	// DryRun, when present, asks that nothing be persisted.
	DryRun []string
}

// HotplugVolumeSource is a volume source that can be hotplugged.
type HotplugVolumeSource struct {
	// PersistentVolumeClaim to hotplug.
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource
	// DataVolume to hotplug.
	DataVolume *DataVolumeSource
}

// VolumeSnapshotStatus says whether a volume can be snapshotted.
type VolumeSnapshotStatus struct {
	// Name of the volume.
	Name string
	// Enabled says it can.
	Enabled bool
	// Reason it cannot.
	Reason string
}

// MemoryDumpPhase is the phase of a memory dump.
type MemoryDumpPhase string

// VirtualMachineMemoryDumpRequest is a memory dump asked for.
type VirtualMachineMemoryDumpRequest struct {
	// ClaimName is the claim the dump goes to.
	ClaimName string
	// Phase of the dump.
	Phase MemoryDumpPhase
	// Remove asks to detach the claim.
	Remove bool
	// StartTimestamp is when the dump started.
	StartTimestamp *metav1.Time
	// EndTimestamp is when the dump ended.
	EndTimestamp *metav1.Time
	// FileName of the dump.
	FileName *string
	// Message says why it failed.
	Message string
}

// VolumeUpdateState is the state of a volume update.
type VolumeUpdateState struct {
	// VolumeMigrationState is the state of a volume migration.
	VolumeMigrationState *VolumeMigrationState
}

// VolumeMigrationState is the state of a volume migration.
type VolumeMigrationState struct {
	// MigratedVolumes are the volumes it moves.
	MigratedVolumes []StorageMigratedVolumeInfo
}

// StateChangeRequestAction is what a state change request asks for.
// +enum
type StateChangeRequestAction string

const (
	// StartRequest asks for an instance to be created.
	StartRequest StateChangeRequestAction = "Start"
	// StopRequest asks for the instance to be deleted.
	StopRequest StateChangeRequestAction = "Stop"
)

// VirtualMachineStateChangeRequest is one action asked of the controller.
type VirtualMachineStateChangeRequest struct {
	// Action is Start or Stop.
	Action StateChangeRequestAction
	// Data carries additional parameters of the action.
	Data map[string]string
	// UID is the instance a Stop applies to; a Stop for an instance that is
	// gone is done.
	UID *types.UID
}

// VirtualMachineConditionType names an observation of a VM.
type VirtualMachineConditionType string

const (
	// VirtualMachineReady mirrors the Ready condition of the instance.
	VirtualMachineReady VirtualMachineConditionType = "Ready"
	// VirtualMachineFailure is True when the controller could not act on the VM.
	VirtualMachineFailure VirtualMachineConditionType = "Failure"
)

// VirtualMachineCondition is one observation of a VM.
type VirtualMachineCondition struct {
	Type               VirtualMachineConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}

// VirtualMachineStartFailure counts instances that failed soon after start.
type VirtualMachineStartFailure struct {
	// ConsecutiveFailCount is the number of failures in a row.
	ConsecutiveFailCount int32
	// LastFailedVMIUID is the instance that failed last.
	LastFailedVMIUID types.UID
	// RetryAfterTimestamp is when the next instance may be created.
	RetryAfterTimestamp *metav1.Time
}
