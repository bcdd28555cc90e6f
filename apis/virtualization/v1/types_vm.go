package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// +genclient
// +genclient:method=Start,verb=update,subresource=start,input=StartOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=Stop,verb=update,subresource=stop,input=StopOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=Restart,verb=update,subresource=restart,input=RestartOptions,result=k8s.io/apimachinery/pkg/apis/meta/v1.Status
// +genclient:method=Migrate,verb=update,subresource=migrate,input=MigrateOptions,result=VirtualMachineInstanceMigration
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachine keeps a VirtualMachineInstance from its template alive, or
// stopped, according to its run strategy. It outlives its instances: stopping
// a VM deletes its VMI; starting it creates a new one.
type VirtualMachine struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state of the VM.
	Spec VirtualMachineSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state of the VM. Written only through /status.
	// +optional
	Status VirtualMachineStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineList is a list of VirtualMachines.
type VirtualMachineList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachine `json:"items" protobuf:"bytes,2,rep,name=items"`
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
	// +optional
	Running *bool `json:"running,omitempty" protobuf:"varint,1,opt,name=running"`
	// RunStrategy is when the VM's instance should run: Always,
	// RerunOnFailure, Manual or Halted.
	// +optional
	RunStrategy *VirtualMachineRunStrategy `json:"runStrategy,omitempty" protobuf:"bytes,2,opt,name=runStrategy,casttype=VirtualMachineRunStrategy"`
	// Template is the instance the VM creates.
	Template *VirtualMachineInstanceTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	// DataVolumeTemplates are CDI DataVolumes the VM creates with itself
	// for its volumes. Refused: the Containerized Data Importer (CDI) is
	// not installed with this platform; create a PersistentVolumeClaim and
	// use a persistentVolumeClaim volume.
	// +optional
	// +listType=atomic
	DataVolumeTemplates []DataVolumeTemplateSpec `json:"dataVolumeTemplates,omitempty" protobuf:"bytes,6,rep,name=dataVolumeTemplates"`
	// UpdateVolumesStrategy is how a change of the template's volumes
	// reaches a running instance: Replacement (the default: at the next
	// start) or Migration (by a volume migration, refused: this platform
	// does not migrate volumes to other storage).
	// +optional
	UpdateVolumesStrategy *UpdateVolumesStrategy `json:"updateVolumesStrategy,omitempty" protobuf:"bytes,7,opt,name=updateVolumesStrategy,casttype=UpdateVolumesStrategy"`
	// Instancetype is the instancetype the VM takes its vCPUs, memory and
	// placement from; the template must then leave those empty.
	// +optional
	Instancetype *InstancetypeMatcher `json:"instancetype,omitempty" protobuf:"bytes,4,opt,name=instancetype"`
	// Preference is the preference that fills what the template leaves
	// empty: device models, firmware, machine type, CPU layout.
	// +optional
	Preference *PreferenceMatcher `json:"preference,omitempty" protobuf:"bytes,5,opt,name=preference"`
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
	// +optional
	APIVersion string `json:"apiVersion,omitempty" protobuf:"bytes,1,opt,name=apiVersion"`
	// Kind, DataVolume.
	// +optional
	Kind string `json:"kind,omitempty" protobuf:"bytes,2,opt,name=kind"`
	// Metadata of the DataVolume; its name is the volume's claim name.
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,3,opt,name=metadata"`
	// Spec is CDI's DataVolumeSpec (source, storage or pvc, ...).
	// +kubebuilder:pruning:PreserveUnknownFields
	Spec runtime.RawExtension `json:"spec" protobuf:"bytes,4,opt,name=spec"`
	// Status is always empty (KubeVirt keeps it for compatibility).
	// +optional
	Status *DataVolumeTemplateDummyStatus `json:"status,omitempty" protobuf:"bytes,5,opt,name=status"`
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
	// +optional
	ObjectMeta metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	// Spec of each instance.
	// +optional
	Spec VirtualMachineInstanceSpec `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
}

// VirtualMachinePrintableStatus is a one-word summary of a VM for people.
type VirtualMachinePrintableStatus string

const (
	VirtualMachineStatusStopped          VirtualMachinePrintableStatus = "Stopped"
	VirtualMachineStatusProvisioning     VirtualMachinePrintableStatus = "Provisioning"
	VirtualMachineStatusStarting         VirtualMachinePrintableStatus = "Starting"
	VirtualMachineStatusRunning          VirtualMachinePrintableStatus = "Running"
	VirtualMachineStatusPaused           VirtualMachinePrintableStatus = "Paused"
	VirtualMachineStatusMigrating        VirtualMachinePrintableStatus = "Migrating"
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
	// +optional
	PrintableStatus VirtualMachinePrintableStatus `json:"printableStatus,omitempty" protobuf:"bytes,1,opt,name=printableStatus,casttype=VirtualMachinePrintableStatus"`
	// Created is true while an instance of the VM exists.
	// +optional
	Created bool `json:"created,omitempty" protobuf:"varint,2,opt,name=created"`
	// Ready is true while the instance of the VM is Ready.
	// +optional
	Ready bool `json:"ready,omitempty" protobuf:"varint,3,opt,name=ready"`
	// Conditions are observations of the VM.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineCondition `json:"conditions,omitempty" protobuf:"bytes,4,rep,name=conditions"`
	// StartFailure tracks consecutive failed starts for the crash-loop back-off.
	// +optional
	StartFailure *VirtualMachineStartFailure `json:"startFailure,omitempty" protobuf:"bytes,5,opt,name=startFailure"`
	// ObservedGeneration is the generation of the spec last acted on.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty" protobuf:"varint,6,opt,name=observedGeneration"`
	// StateChangeRequests are actions asked of the controller through the
	// start, stop and restart subresources, in order: e.g. stop the
	// instance with this UID, then start a new one. The API appends them,
	// the controller removes each once it is done.
	// +optional
	// +listType=atomic
	StateChangeRequests []VirtualMachineStateChangeRequest `json:"stateChangeRequests,omitempty" protobuf:"bytes,7,rep,name=stateChangeRequests"`

	// The fields below are KubeVirt's; this platform has no snapshots,
	// hotplug, memory dumps or volume migrations, and leaves them empty.

	// SnapshotInProgress is the VirtualMachineSnapshot being taken.
	// +optional
	SnapshotInProgress *string `json:"snapshotInProgress,omitempty" protobuf:"bytes,10,opt,name=snapshotInProgress"`
	// RestoreInProgress is the VirtualMachineRestore being done.
	// +optional
	RestoreInProgress *string `json:"restoreInProgress,omitempty" protobuf:"bytes,11,opt,name=restoreInProgress"`
	// VolumeRequests are volumes to hotplug into or out of the instance.
	// +optional
	// +listType=atomic
	VolumeRequests []VirtualMachineVolumeRequest `json:"volumeRequests,omitempty" protobuf:"bytes,12,rep,name=volumeRequests"`
	// VolumeSnapshotStatuses say which volumes can be snapshotted.
	// +optional
	// +listType=atomic
	VolumeSnapshotStatuses []VolumeSnapshotStatus `json:"volumeSnapshotStatuses,omitempty" protobuf:"bytes,13,rep,name=volumeSnapshotStatuses"`
	// MemoryDumpRequest is a memory dump asked for.
	// +optional
	MemoryDumpRequest *VirtualMachineMemoryDumpRequest `json:"memoryDumpRequest,omitempty" protobuf:"bytes,14,opt,name=memoryDumpRequest"`
	// DesiredGeneration is the generation the instance should have.
	// +optional
	DesiredGeneration int64 `json:"desiredGeneration,omitempty" protobuf:"varint,15,opt,name=desiredGeneration"`
	// RunStrategy is the run strategy last acted on.
	// +optional
	RunStrategy VirtualMachineRunStrategy `json:"runStrategy,omitempty" protobuf:"bytes,16,opt,name=runStrategy,casttype=VirtualMachineRunStrategy"`
	// VolumeUpdateState is the state of a volume update.
	// +optional
	VolumeUpdateState *VolumeUpdateState `json:"volumeUpdateState,omitempty" protobuf:"bytes,17,opt,name=volumeUpdateState"`
	// ChangedBlockTracking is the state of changed block tracking.
	// +optional
	ChangedBlockTracking *ChangedBlockTrackingStatus `json:"changedBlockTracking,omitempty" protobuf:"bytes,18,opt,name=changedBlockTracking"`
	// InstancetypeRef is the instancetype, and its revision, the VM's
	// instances are created with.
	// +optional
	InstancetypeRef *InstancetypeStatusRef `json:"instancetypeRef,omitempty" protobuf:"bytes,8,opt,name=instancetypeRef"`
	// PreferenceRef is the preference, and its revision, the VM's instances
	// are created with.
	// +optional
	PreferenceRef *InstancetypeStatusRef `json:"preferenceRef,omitempty" protobuf:"bytes,9,opt,name=preferenceRef"`
}

// VirtualMachineVolumeRequest is a volume to hotplug or unplug.
type VirtualMachineVolumeRequest struct {
	// AddVolumeOptions adds a volume.
	// +optional
	AddVolumeOptions *AddVolumeOptions `json:"addVolumeOptions,omitempty" protobuf:"bytes,1,opt,name=addVolumeOptions"`
	// RemoveVolumeOptions removes a volume.
	// +optional
	RemoveVolumeOptions *RemoveVolumeOptions `json:"removeVolumeOptions,omitempty" protobuf:"bytes,2,opt,name=removeVolumeOptions"`
}

// AddVolumeOptions describe a volume to hotplug.
type AddVolumeOptions struct {
	// Name of the volume and its disk.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Disk of the volume.
	Disk *Disk `json:"disk" protobuf:"bytes,2,opt,name=disk"`
	// VolumeSource of the volume.
	VolumeSource *HotplugVolumeSource `json:"volumeSource" protobuf:"bytes,3,opt,name=volumeSource"`
	// DryRun, when present, asks that nothing be persisted.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,4,rep,name=dryRun"`
}

// RemoveVolumeOptions describe a volume to unplug.
type RemoveVolumeOptions struct {
	// Name of the volume and its disk.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DryRun, when present, asks that nothing be persisted.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,2,rep,name=dryRun"`
}

// HotplugVolumeSource is a volume source that can be hotplugged.
type HotplugVolumeSource struct {
	// PersistentVolumeClaim to hotplug.
	// +optional
	PersistentVolumeClaim *PersistentVolumeClaimVolumeSource `json:"persistentVolumeClaim,omitempty" protobuf:"bytes,1,opt,name=persistentVolumeClaim"`
	// DataVolume to hotplug.
	// +optional
	DataVolume *DataVolumeSource `json:"dataVolume,omitempty" protobuf:"bytes,2,opt,name=dataVolume"`
}

// VolumeSnapshotStatus says whether a volume can be snapshotted.
type VolumeSnapshotStatus struct {
	// Name of the volume.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Enabled says it can.
	Enabled bool `json:"enabled" protobuf:"varint,2,opt,name=enabled"`
	// Reason it cannot.
	// +optional
	Reason string `json:"reason,omitempty" protobuf:"bytes,3,opt,name=reason"`
}

// MemoryDumpPhase is the phase of a memory dump.
type MemoryDumpPhase string

// VirtualMachineMemoryDumpRequest is a memory dump asked for.
type VirtualMachineMemoryDumpRequest struct {
	// ClaimName is the claim the dump goes to.
	ClaimName string `json:"claimName" protobuf:"bytes,1,opt,name=claimName"`
	// Phase of the dump.
	Phase MemoryDumpPhase `json:"phase" protobuf:"bytes,2,opt,name=phase,casttype=MemoryDumpPhase"`
	// Remove asks to detach the claim.
	// +optional
	Remove bool `json:"remove,omitempty" protobuf:"varint,3,opt,name=remove"`
	// StartTimestamp is when the dump started.
	// +optional
	StartTimestamp *metav1.Time `json:"startTimestamp,omitempty" protobuf:"bytes,4,opt,name=startTimestamp"`
	// EndTimestamp is when the dump ended.
	// +optional
	EndTimestamp *metav1.Time `json:"endTimestamp,omitempty" protobuf:"bytes,5,opt,name=endTimestamp"`
	// FileName of the dump.
	// +optional
	FileName *string `json:"fileName,omitempty" protobuf:"bytes,6,opt,name=fileName"`
	// Message says why it failed.
	// +optional
	Message string `json:"message,omitempty" protobuf:"bytes,7,opt,name=message"`
}

// VolumeUpdateState is the state of a volume update.
type VolumeUpdateState struct {
	// VolumeMigrationState is the state of a volume migration.
	// +optional
	VolumeMigrationState *VolumeMigrationState `json:"volumeMigrationState,omitempty" protobuf:"bytes,1,opt,name=volumeMigrationState"`
}

// VolumeMigrationState is the state of a volume migration.
type VolumeMigrationState struct {
	// MigratedVolumes are the volumes it moves.
	// +optional
	// +listType=atomic
	MigratedVolumes []StorageMigratedVolumeInfo `json:"migratedVolumes,omitempty" protobuf:"bytes,1,rep,name=migratedVolumes"`
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
	Action StateChangeRequestAction `json:"action" protobuf:"bytes,1,opt,name=action,casttype=StateChangeRequestAction"`
	// Data carries additional parameters of the action.
	// +optional
	Data map[string]string `json:"data,omitempty" protobuf:"bytes,2,rep,name=data"`
	// UID is the instance a Stop applies to; a Stop for an instance that is
	// gone is done.
	// +optional
	UID *types.UID `json:"uid,omitempty" protobuf:"bytes,3,opt,name=uid,casttype=k8s.io/apimachinery/pkg/types.UID"`
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
	Type   VirtualMachineConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineConditionType"`
	Status corev1.ConditionStatus      `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
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

// VirtualMachineStartFailure counts instances that failed soon after start.
type VirtualMachineStartFailure struct {
	// ConsecutiveFailCount is the number of failures in a row.
	// +optional
	ConsecutiveFailCount int32 `json:"consecutiveFailCount,omitempty" protobuf:"varint,1,opt,name=consecutiveFailCount"`
	// LastFailedVMIUID is the instance that failed last.
	// +optional
	LastFailedVMIUID types.UID `json:"lastFailedVMIUID,omitempty" protobuf:"bytes,2,opt,name=lastFailedVMIUID,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// RetryAfterTimestamp is when the next instance may be created.
	// +optional
	RetryAfterTimestamp *metav1.Time `json:"retryAfterTimestamp,omitempty" protobuf:"bytes,3,opt,name=retryAfterTimestamp"`
}
