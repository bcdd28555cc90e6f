package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceReplicaSet keeps a number of interchangeable
// VirtualMachineInstances from one template running: it creates instances
// while fewer than spec.replicas match its selector, deletes the surplus,
// and replaces instances that end or are deleted.
type VirtualMachineInstanceReplicaSet struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Spec is the desired state of the replica set.
	Spec VirtualMachineInstanceReplicaSetSpec
	// Status is the observed state of the replica set. Written only through
	// /status.
	Status VirtualMachineInstanceReplicaSetStatus
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceReplicaSetList is a list of replica sets.
type VirtualMachineInstanceReplicaSetList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstanceReplicaSet
}

// VirtualMachineInstanceReplicaSetSpec is the desired state of a replica set.
type VirtualMachineInstanceReplicaSetSpec struct {
	// Replicas is how many instances should run. Nil means 1.
	Replicas *int32
	// Selector finds the instances the replica set counts and owns. It must
	// match the template's labels.
	Selector *metav1.LabelSelector
	// Template is the instance the replica set creates.
	Template *VirtualMachineInstanceTemplateSpec
	// Paused stops the controller from creating and deleting instances.
	Paused bool
}

// VirtualMachineInstanceReplicaSetStatus is the observed state of a replica set.
type VirtualMachineInstanceReplicaSetStatus struct {
	// Replicas is the number of instances that match the selector, are owned
	// by the replica set, and are neither ended nor being deleted.
	Replicas int32
	// ReadyReplicas is how many of those are Ready.
	ReadyReplicas int32
	// Conditions are observations of the replica set.
	Conditions []VirtualMachineInstanceReplicaSetCondition
	// LabelSelector is the selector in its string form, for the scale
	// subresource's status.selector, which the HorizontalPodAutoscaler reads.
	LabelSelector string
}

// VirtualMachineInstanceReplicaSetConditionType names an observation of a
// replica set.
type VirtualMachineInstanceReplicaSetConditionType string

const (
	// VirtualMachineInstanceReplicaSetReplicaFailure is True while an
	// instance could not be created or deleted.
	VirtualMachineInstanceReplicaSetReplicaFailure VirtualMachineInstanceReplicaSetConditionType = "ReplicaFailure"
	// VirtualMachineInstanceReplicaSetReplicaPaused is True while the
	// replica set is paused: instances may be added or removed by hand.
	VirtualMachineInstanceReplicaSetReplicaPaused VirtualMachineInstanceReplicaSetConditionType = "ReplicaPaused"
)

// VirtualMachineInstanceReplicaSetCondition is one observation of a replica set.
type VirtualMachineInstanceReplicaSetCondition struct {
	Type               VirtualMachineInstanceReplicaSetConditionType
	Status             corev1.ConditionStatus
	LastProbeTime      metav1.Time
	LastTransitionTime metav1.Time
	Reason             string
	Message            string
}
