package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +genclient
// +genclient:method=GetScale,verb=get,subresource=scale,result=k8s.io/api/autoscaling/v1.Scale
// +genclient:method=UpdateScale,verb=update,subresource=scale,input=k8s.io/api/autoscaling/v1.Scale,result=k8s.io/api/autoscaling/v1.Scale
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceReplicaSet keeps a number of interchangeable
// VirtualMachineInstances from one template running: it creates instances
// while fewer than spec.replicas match its selector, deletes the surplus,
// and replaces instances that end or are deleted. Its scale subresource
// (autoscaling/v1 Scale) serves `kubectl scale` and the
// HorizontalPodAutoscaler.
type VirtualMachineInstanceReplicaSet struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Spec is the desired state of the replica set.
	Spec VirtualMachineInstanceReplicaSetSpec `json:"spec" protobuf:"bytes,2,opt,name=spec"`
	// Status is the observed state of the replica set. Written only through
	// /status.
	// +optional
	// +nullable
	Status VirtualMachineInstanceReplicaSetStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceReplicaSetList is a list of replica sets.
type VirtualMachineInstanceReplicaSetList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstanceReplicaSet `json:"items" protobuf:"bytes,2,rep,name=items"`
}

// VirtualMachineInstanceReplicaSetSpec is the desired state of a replica set.
type VirtualMachineInstanceReplicaSetSpec struct {
	// Replicas is how many instances should run. Defaults to 1; 0 keeps
	// none.
	// +optional
	Replicas *int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// Selector finds the instances the replica set counts and owns: it
	// adopts matching instances that have no controller and releases owned
	// instances that stop matching. It must match the template's labels and
	// cannot change.
	Selector *metav1.LabelSelector `json:"selector" protobuf:"bytes,2,opt,name=selector"`
	// Template is the instance the replica set creates, named after the
	// replica set with a random suffix.
	Template *VirtualMachineInstanceTemplateSpec `json:"template" protobuf:"bytes,3,opt,name=template"`
	// Paused stops the controller from creating and deleting instances, so
	// they may be added or removed by hand.
	// +optional
	Paused bool `json:"paused,omitempty" protobuf:"varint,4,opt,name=paused"`
}

// VirtualMachineInstanceReplicaSetStatus is the observed state of a replica set.
type VirtualMachineInstanceReplicaSetStatus struct {
	// Replicas is the number of instances that match the selector, are owned
	// by the replica set, and are neither ended nor being deleted.
	// +optional
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
	// ReadyReplicas is how many of those are Ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty" protobuf:"varint,2,opt,name=readyReplicas"`
	// Conditions are observations of the replica set: ReplicaFailure while
	// an instance could not be created or deleted, ReplicaPaused while it is
	// paused.
	// +optional
	// +listType=map
	// +listMapKey=type
	Conditions []VirtualMachineInstanceReplicaSetCondition `json:"conditions,omitempty" protobuf:"bytes,3,rep,name=conditions"`
	// LabelSelector is the selector in its string form, for the scale
	// subresource's status.selector, which the HorizontalPodAutoscaler reads.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty" protobuf:"bytes,4,opt,name=labelSelector"`
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
	Type   VirtualMachineInstanceReplicaSetConditionType `json:"type" protobuf:"bytes,1,opt,name=type,casttype=VirtualMachineInstanceReplicaSetConditionType"`
	Status corev1.ConditionStatus                        `json:"status" protobuf:"bytes,2,opt,name=status,casttype=k8s.io/api/core/v1.ConditionStatus"`
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

// Condition is the replica set's condition of type t, nil if s has none.
// The pointer is into s.Conditions: writing through it changes s.
func (s *VirtualMachineInstanceReplicaSetStatus) Condition(t VirtualMachineInstanceReplicaSetConditionType) *VirtualMachineInstanceReplicaSetCondition {
	return findCondition(s.Conditions, string(t))
}

// SetCondition puts c in place of the replica set's condition of its type
// (see setCondition for its transition time).
func (s *VirtualMachineInstanceReplicaSetStatus) SetCondition(c VirtualMachineInstanceReplicaSetCondition, now metav1.Time) {
	s.Conditions = setCondition(s.Conditions, c, now)
}

// RemoveCondition drops the replica set's condition of type t, if any.
func (s *VirtualMachineInstanceReplicaSetStatus) RemoveCondition(t VirtualMachineInstanceReplicaSetConditionType) {
	s.Conditions = removeCondition(s.Conditions, string(t))
}

func (c *VirtualMachineInstanceReplicaSetCondition) conditionType() string { return string(c.Type) }
func (c *VirtualMachineInstanceReplicaSetCondition) conditionStatus() corev1.ConditionStatus {
	return c.Status
}
func (c *VirtualMachineInstanceReplicaSetCondition) transitionTime() *metav1.Time {
	return &c.LastTransitionTime
}
