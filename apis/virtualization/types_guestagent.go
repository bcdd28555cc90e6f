package virtualization

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object

// VirtualMachineInstanceGuestAgentInfo is what a VMI's guest agent reported
// about the guest: the answer of GET virtualmachineinstances/NAME/guestosinfo.
type VirtualMachineInstanceGuestAgentInfo struct {
	metav1.TypeMeta

	// OS is the guest's operating system.
	OS VirtualMachineInstanceGuestOSInfo
}
