package virtualization

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeRevision is a VM's copy of the instancetype or
// preference it is pinned to, kept in the platform's store; immutable.
type VirtualMachineInstancetypeRevision struct {
	metav1.TypeMeta
	metav1.ObjectMeta

	// Data is the copied object, as JSON.
	Data runtime.RawExtension
	// Revision is the generation of the copied object.
	Revision int64
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeRevisionList is a list of
// VirtualMachineInstancetypeRevisions.
type VirtualMachineInstancetypeRevisionList struct {
	metav1.TypeMeta
	metav1.ListMeta

	Items []VirtualMachineInstancetypeRevision
}
