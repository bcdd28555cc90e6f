package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceMigration asks for one live migration of a running
// VMI to another launcher pod (usually on another node). virt-controller
// carries it out and records its progress in status; deleting an unfinished
// migration cancels it.
type VirtualMachineInstanceMigration struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec names the VMI to migrate. It cannot change.
	Spec VirtualMachineInstanceMigrationSpec
	// Status is the migration's progress, written by virt-controller only
	// through /status.
	Status VirtualMachineInstanceMigrationStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceMigrationList is a list of migrations.
type VirtualMachineInstanceMigrationList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstanceMigration
}

// VirtualMachineInstanceMigrationSpec is what to migrate.
type VirtualMachineInstanceMigrationSpec struct {
	// VMIName is the VMI, in the migration's namespace, to migrate.
	VMIName string
}

// VirtualMachineInstanceMigrationPhase is a step of a migration.
type VirtualMachineInstanceMigrationPhase string

// The phases of a migration, in order; Succeeded and Failed are final.
const (
	MigrationPhaseUnset      VirtualMachineInstanceMigrationPhase = ""
	MigrationPending         VirtualMachineInstanceMigrationPhase = "Pending"
	MigrationScheduling      VirtualMachineInstanceMigrationPhase = "Scheduling"
	MigrationScheduled       VirtualMachineInstanceMigrationPhase = "Scheduled"
	MigrationPreparingTarget VirtualMachineInstanceMigrationPhase = "PreparingTarget"
	MigrationTargetReady     VirtualMachineInstanceMigrationPhase = "TargetReady"
	MigrationRunning         VirtualMachineInstanceMigrationPhase = "Running"
	MigrationSucceeded       VirtualMachineInstanceMigrationPhase = "Succeeded"
	MigrationFailed          VirtualMachineInstanceMigrationPhase = "Failed"
)

// Final says the migration has ended, successfully or not.
func (p VirtualMachineInstanceMigrationPhase) Final() bool {
	return p == MigrationSucceeded || p == MigrationFailed
}

// VirtualMachineInstanceMigrationStatus is a migration's progress.
type VirtualMachineInstanceMigrationStatus struct {
	// Phase is the migration's current step.
	Phase VirtualMachineInstanceMigrationPhase
	// Conditions are observations of the migration.
	Conditions []VirtualMachineInstanceMigrationCondition
	// MigrationState is a copy of the VMI's status.migrationState for this
	// migration, kept after the VMI moves on.
	MigrationState *VirtualMachineInstanceMigrationState
	// PhaseTransitionTimestamps are when the migration entered each phase.
	PhaseTransitionTimestamps []VirtualMachineInstanceMigrationPhaseTransitionTimestamp
}

// VirtualMachineInstanceMigrationPhaseTransitionTimestamp is when a
// migration entered a phase.
type VirtualMachineInstanceMigrationPhaseTransitionTimestamp struct {
	Phase                    VirtualMachineInstanceMigrationPhase
	PhaseTransitionTimestamp metav1.Time
}

// VirtualMachineInstanceMigrationConditionType names an observation of a
// migration.
type VirtualMachineInstanceMigrationConditionType string

// VirtualMachineInstanceMigrationCondition is one observation of a migration.
type VirtualMachineInstanceMigrationCondition struct {
	Type               VirtualMachineInstanceMigrationConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}
