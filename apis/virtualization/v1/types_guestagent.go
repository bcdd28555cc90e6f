package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceGuestAgentInfo is what a VMI's guest agent reported
// about the guest: the answer of GET virtualmachineinstances/NAME/guestosinfo.
// It is KubeVirt's kubevirt.io/v1 type under the same JSON names, reduced to
// what the VMI's status holds (virt-handler writes it from the agent's
// reports): KubeVirt's fields that ask the agent at the moment of the
// request (hostname, timezone, users, file systems, agent version and
// commands) are not served.
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta `json:",inline"`

	// OS is the guest's operating system, as status.guestOSInfo.
	// +optional
	OS VirtualMachineInstanceGuestOSInfo `json:"os,omitempty" protobuf:"bytes,1,opt,name=os"`
}
