package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// +genclient
// +genclient:onlyVerbs=create,get,list,watch,delete
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeRevision is a VM's copy of the instancetype or
// preference it is pinned to (spec.instancetype.revisionName,
// spec.preference.revisionName): what KubeVirt keeps in an apps/v1
// ControllerRevision, kept here in the platform's own store so that it is
// backed up and restored with the VM. It has a ControllerRevision's JSON
// (data, revision): a KubeVirt ControllerRevision of an instancetype moves
// over by changing its apiVersion and kind. Its data and revision are
// validated when it is created and never change.
type VirtualMachineInstancetypeRevision struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	// Data is the copied object: apiVersion virtualization.kubevirt.io/v1
	// (or KubeVirt's instancetype.kubevirt.io/v1beta1), kind one of the
	// two instancetype and two preference kinds, metadata with its name,
	// UID and generation, and its spec.
	// +kubebuilder:pruning:PreserveUnknownFields
	Data runtime.RawExtension `json:"data" protobuf:"bytes,2,opt,name=data"`
	// Revision is the generation of the copied object.
	// +optional
	Revision int64 `json:"revision,omitempty" protobuf:"varint,3,opt,name=revision"`
}

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstancetypeRevisionList is a list of
// VirtualMachineInstancetypeRevisions.
type VirtualMachineInstancetypeRevisionList struct {
	metav1.TypeMeta `json:",inline"`
	// +optional
	metav1.ListMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`

	Items []VirtualMachineInstancetypeRevision `json:"items" protobuf:"bytes,2,rep,name=items"`
}
