package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The bodies of the lifecycle subresources (docs/guest-access.md). They are
// KubeVirt's kubevirt.io/v1 types under the same JSON names, so a client
// written for KubeVirt sends the same bytes.

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// StartOptions is the body of a PUT to virtualmachines/NAME/start.
type StartOptions struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun, when present, asks that nothing be persisted. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// StopOptions is the body of a PUT to virtualmachines/NAME/stop.
type StopOptions struct {
	metav1.TypeMeta `json:",inline"`

	// GracePeriod, in seconds, replaces the instance's
	// terminationGracePeriodSeconds for this stop: the instance is deleted
	// with it. Zero stops the guest at once.
	// +optional
	GracePeriod *int64 `json:"gracePeriod,omitempty" protobuf:"varint,1,opt,name=gracePeriod"`
	// DryRun, when present, asks that nothing be persisted. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,2,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// RestartOptions is the body of a PUT to virtualmachines/NAME/restart.
type RestartOptions struct {
	metav1.TypeMeta `json:",inline"`

	// GracePeriodSeconds is how long the old instance's guest gets to shut
	// down before it is stopped by force; without it, the instance's
	// terminationGracePeriodSeconds. Zero restarts at once.
	// +optional
	GracePeriodSeconds *int64 `json:"gracePeriodSeconds,omitempty" protobuf:"varint,1,opt,name=gracePeriodSeconds"`
	// DryRun, when present, asks that nothing be persisted. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,2,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// PauseOptions is the body of a PUT to virtualmachineinstances/NAME/pause.
type PauseOptions struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun, when present, asks that nothing be changed. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// UnpauseOptions is the body of a PUT to virtualmachineinstances/NAME/unpause.
type UnpauseOptions struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun, when present, asks that nothing be changed. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// SoftRebootOptions is the body of a PUT to
// virtualmachineinstances/NAME/softreboot. KubeVirt's softreboot takes no
// body (an empty one is these options, empty); ours takes this one, shaped
// like PauseOptions, so that its dry run can be asked for and the
// generated client has a typed body.
type SoftRebootOptions struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun, when present, asks that nothing be changed. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// MigrateOptions is the body of a PUT to virtualmachineinstances/NAME/migrate
// or virtualmachines/NAME/migrate (KubeVirt's): the server creates a
// VirtualMachineInstanceMigration of the instance and answers it.
type MigrateOptions struct {
	metav1.TypeMeta `json:",inline"`

	// DryRun, when present, asks that nothing be changed. The only value
	// is All: all dry-run stages are processed.
	// +optional
	// +listType=atomic
	DryRun []string `json:"dryRun,omitempty" protobuf:"bytes,1,rep,name=dryRun"`
}
