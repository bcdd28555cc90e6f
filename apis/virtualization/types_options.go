package virtualization

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bodies of the lifecycle subresources (docs/guest-access.md).

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// StartOptions is the body of a PUT to virtualmachines/NAME/start.
type StartOptions struct {
	metav1.TypeMeta

	// DryRun, when present, asks that nothing be persisted.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// StopOptions is the body of a PUT to virtualmachines/NAME/stop.
type StopOptions struct {
	metav1.TypeMeta

	// GracePeriod, in seconds, replaces the instance's
	// terminationGracePeriodSeconds for this stop.
	GracePeriod *int64
	// DryRun, when present, asks that nothing be persisted.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RestartOptions is the body of a PUT to virtualmachines/NAME/restart.
type RestartOptions struct {
	metav1.TypeMeta

	// GracePeriodSeconds is how long the old instance's guest gets to shut
	// down; without it, the instance's terminationGracePeriodSeconds.
	GracePeriodSeconds *int64
	// DryRun, when present, asks that nothing be persisted.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PauseOptions is the body of a PUT to virtualmachineinstances/NAME/pause.
type PauseOptions struct {
	metav1.TypeMeta

	// DryRun, when present, asks that nothing be changed.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// UnpauseOptions is the body of a PUT to virtualmachineinstances/NAME/unpause.
type UnpauseOptions struct {
	metav1.TypeMeta

	// DryRun, when present, asks that nothing be changed.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// SoftRebootOptions is the body of a PUT to
// virtualmachineinstances/NAME/softreboot.
type SoftRebootOptions struct {
	metav1.TypeMeta

	// DryRun, when present, asks that nothing be changed.
	DryRun []string
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MigrateOptions is the body of a PUT to virtualmachineinstances/NAME/migrate
// or virtualmachines/NAME/migrate.
type MigrateOptions struct {
	metav1.TypeMeta

	// DryRun, when present, asks that nothing be changed.
	DryRun []string
}
