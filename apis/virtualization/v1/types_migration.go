package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceMigration asks for one live migration of a running
// VMI to a new launcher pod, on another node unless the cluster allows the
// same one. virt-controller carries it out and records its progress in
// status; deleting an unfinished migration cancels it (the finalizer
// MigrationFinalizer keeps the object until the cancel is done). The guest
// keeps running on its source when a migration fails or is cancelled.
type VirtualMachineInstanceMigration struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec names the VMI to migrate. It cannot change.
	Spec VirtualMachineInstanceMigrationSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the migration's progress, written by virt-controller only
	// through /status.
	// +optional
	// +nullable
	Status VirtualMachineInstanceMigrationStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceMigrationList is a list of migrations.
type VirtualMachineInstanceMigrationList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstanceMigration `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceMigrationSpec is what to migrate.
type VirtualMachineInstanceMigrationSpec struct {
	// VMIName is the VMI, in the migration's namespace, to migrate. It must
	// be Running on a node, and not already migrating.
	VMIName string `json:"vmiName" protobuf:"bytes,1,opt,name=vmiName"`
}

// VirtualMachineInstanceMigrationPhase is a step of a migration.
type VirtualMachineInstanceMigrationPhase string

// The phases of a migration, in order (KubeVirt's); Succeeded and Failed are
// final.
const (
	// MigrationPhaseUnset: virt-controller has not seen the migration yet.
	MigrationPhaseUnset VirtualMachineInstanceMigrationPhase = ""
	// MigrationPending: accepted, waiting for the limits on parallel
	// migrations.
	MigrationPending VirtualMachineInstanceMigrationPhase = "Pending"
	// MigrationScheduling: the target launcher pod exists, not yet bound.
	MigrationScheduling VirtualMachineInstanceMigrationPhase = "Scheduling"
	// MigrationScheduled: the target pod is bound to a node, its launcher
	// not yet ready.
	MigrationScheduled VirtualMachineInstanceMigrationPhase = "Scheduled"
	// MigrationPreparingTarget: the VMI names its target; the target node's
	// virt-handler prepares the target launcher.
	MigrationPreparingTarget VirtualMachineInstanceMigrationPhase = "PreparingTarget"
	// MigrationTargetReady: the target listens (status.migrationState
	// .targetNodeAddress); the source node's virt-handler may start.
	MigrationTargetReady VirtualMachineInstanceMigrationPhase = "TargetReady"
	// MigrationRunning: the guest's memory (and pod-local disks) are being
	// copied.
	MigrationRunning VirtualMachineInstanceMigrationPhase = "Running"
	// MigrationSucceeded: the guest runs on the target; the source pod goes.
	MigrationSucceeded VirtualMachineInstanceMigrationPhase = "Succeeded"
	// MigrationFailed: the guest still runs on the source; the target pod
	// goes.
	MigrationFailed VirtualMachineInstanceMigrationPhase = "Failed"
)

// Final says the migration has ended, successfully or not.
func (p VirtualMachineInstanceMigrationPhase) Final() bool {
	return p == MigrationSucceeded || p == MigrationFailed
}

// VirtualMachineInstanceMigrationStatus is a migration's progress.
type VirtualMachineInstanceMigrationStatus struct {
	// Phase is the migration's current step.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstanceMigrationPhase"`
	// Conditions are observations of the migration.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceMigrationCondition `json:"conditions,omitempty" protobuf:"bytes,2,rep,name=conditions"`
	// MigrationState is a copy of the VMI's status.migrationState for this
	// migration, kept after the VMI moves on.
	// +optional
	MigrationState *VirtualMachineInstanceMigrationState `json:"migrationState,omitempty" protobuf:"bytes,3,opt,name=migrationState"`
	// PhaseTransitionTimestamps are when the migration entered each phase.
	// +optional
	// +listType=atomic
	PhaseTransitionTimestamps []VirtualMachineInstanceMigrationPhaseTransitionTimestamp `json:"phaseTransitionTimestamps,omitempty" protobuf:"bytes,4,rep,name=phaseTransitionTimestamps"`
}

// VirtualMachineInstanceMigrationPhaseTransitionTimestamp is when a
// migration entered a phase.
type VirtualMachineInstanceMigrationPhaseTransitionTimestamp struct {
	// Phase is the phase entered.
	// +optional
	Phase VirtualMachineInstanceMigrationPhase `json:"phase,omitempty" protobuf:"bytes,1,opt,name=phase,casttype=VirtualMachineInstanceMigrationPhase"`
	// PhaseTransitionTimestamp is when.
	// +optional
	// +nullable
	PhaseTransitionTimestamp metav1.Time `json:"phaseTransitionTimestamp,omitempty" protobuf:"bytes,2,opt,name=phaseTransitionTimestamp"`
}

// VirtualMachineInstanceMigrationConditionType names an observation of a
// migration.
type VirtualMachineInstanceMigrationConditionType string

const (
	// VirtualMachineInstanceMigrationAbortRequested is True once the
	// migration was deleted or cancelled before it ended (KubeVirt's).
	VirtualMachineInstanceMigrationAbortRequested VirtualMachineInstanceMigrationConditionType = "migrationAbortRequested"
	// VirtualMachineInstanceMigrationFailedCondition is True on a Failed
	// migration; its reason and message say why (MigrationReasonAborted,
	// MigrationReasonTargetUnschedulable, ...).
	VirtualMachineInstanceMigrationFailedCondition VirtualMachineInstanceMigrationConditionType = "migrationFailed"
)

// Reasons of a migration's conditions.
const (
	// MigrationReasonAborted: cancelled (deleted, or virtctl migrate-cancel).
	MigrationReasonAborted = "Aborted"
	// MigrationReasonTargetUnschedulable: the target pod found no node in
	// time.
	MigrationReasonTargetUnschedulable = "TargetPodUnschedulable"
	// MigrationReasonTargetNotReady: the target pod was not ready in time,
	// or its launcher died.
	MigrationReasonTargetNotReady = "TargetPodNotReady"
	// MigrationReasonJobFailed: the source node reported the job failed
	// (status.migrationState.failureReason says how).
	MigrationReasonJobFailed = "MigrationFailed"
	// MigrationReasonVMIGone: the VMI ended or was deleted meanwhile.
	MigrationReasonVMIGone = "VMIGone"
	// MigrationReasonSameNodeRefused: no other node can take the target and
	// the cluster does not allow a same-node migration.
	MigrationReasonSameNodeRefused = "SameNodeMigrationRefused"
)

// VirtualMachineInstanceMigrationCondition is one observation of a migration.
type VirtualMachineInstanceMigrationCondition struct {
	Type   VirtualMachineInstanceMigrationConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceMigrationConditionType"`
	Status corev1.ConditionStatus                       `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
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

// Condition is the migration's condition of type t, nil if s has none.
// The pointer is into s.Conditions: writing through it changes s.
func (s *VirtualMachineInstanceMigrationStatus) Condition(t VirtualMachineInstanceMigrationConditionType) *VirtualMachineInstanceMigrationCondition {
	return findCondition(s.Conditions, string(t))
}

// SetCondition puts c in place of the migration's condition of its type
// (see setCondition for its transition time).
func (s *VirtualMachineInstanceMigrationStatus) SetCondition(c VirtualMachineInstanceMigrationCondition, now metav1.Time) {
	s.Conditions = setCondition(s.Conditions, c, now)
}

// SetPhase moves the migration to phase p and records when, once per phase.
func (s *VirtualMachineInstanceMigrationStatus) SetPhase(p VirtualMachineInstanceMigrationPhase, now metav1.Time) {
	if s.Phase == p {
		return
	}
	s.Phase = p
	for _, t := range s.PhaseTransitionTimestamps {
		if t.Phase == p {
			return
		}
	}
	s.PhaseTransitionTimestamps = append(s.PhaseTransitionTimestamps,
		VirtualMachineInstanceMigrationPhaseTransitionTimestamp{Phase: p, PhaseTransitionTimestamp: now})
}

func (c *VirtualMachineInstanceMigrationCondition) conditionType() string { return string(c.Type) }
func (c *VirtualMachineInstanceMigrationCondition) conditionStatus() corev1.ConditionStatus {
	return c.Status
}
func (c *VirtualMachineInstanceMigrationCondition) transitionTime() *metav1.Time {
	return &c.LastTransitionTime
}

// Values of a VMI's status.migrationState.abortStatus (KubeVirt's).
const (
	MigrationAbortSucceeded  MigrationAbortStatus = "Succeeded"
	MigrationAbortFailed     MigrationAbortStatus = "Failed"
	MigrationAbortInProgress MigrationAbortStatus = "Aborting"
)

// Values of a VMI's status.migrationState.mode (KubeVirt's).
const (
	MigrationPreCopy  MigrationMode = "PreCopy"
	MigrationPostCopy MigrationMode = "PostCopy"
	MigrationPaused   MigrationMode = "Paused"
)
