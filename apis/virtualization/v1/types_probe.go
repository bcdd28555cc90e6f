package v1

import (
	corev1 "k8s.io/api/core/v1"
)

// Probe is a periodic check of the guest, as a container probe is of a
// container.
type Probe struct {
	// Handler is the check. Exactly one member may be set.
	Handler `json:",inline" protobuf:"bytes,1,opt,name=handler"`
	// InitialDelaySeconds after the guest started before the first check.
	// +optional
	InitialDelaySeconds int32 `json:"initialDelaySeconds,omitempty" protobuf:"varint,2,opt,name=initialDelaySeconds"`
	// TimeoutSeconds of one check. Defaults to 1.
	// +optional
	TimeoutSeconds int32 `json:"timeoutSeconds,omitempty" protobuf:"varint,3,opt,name=timeoutSeconds"`
	// PeriodSeconds between checks. Defaults to 10.
	// +optional
	PeriodSeconds int32 `json:"periodSeconds,omitempty" protobuf:"varint,4,opt,name=periodSeconds"`
	// SuccessThreshold is the successes in a row that count. Defaults to 1.
	// +optional
	SuccessThreshold int32 `json:"successThreshold,omitempty" protobuf:"varint,5,opt,name=successThreshold"`
	// FailureThreshold is the failures in a row that count. Defaults to 3.
	// +optional
	FailureThreshold int32 `json:"failureThreshold,omitempty" protobuf:"varint,6,opt,name=failureThreshold"`
}

// Handler is the check of a probe.
type Handler struct {
	// Exec runs a command in the guest through its guest agent.
	// +optional
	Exec *corev1.ExecAction `json:"exec,omitempty" protobuf:"bytes,1,opt,name=exec"`
	// GuestAgentPing checks that the guest agent answers.
	// +optional
	GuestAgentPing *GuestAgentPing `json:"guestAgentPing,omitempty" protobuf:"bytes,2,opt,name=guestAgentPing"`
	// HTTPGet sends an HTTP request to the guest.
	// +optional
	HTTPGet *corev1.HTTPGetAction `json:"httpGet,omitempty" protobuf:"bytes,3,opt,name=httpGet"`
	// TCPSocket opens a TCP connection to the guest.
	// +optional
	TCPSocket *corev1.TCPSocketAction `json:"tcpSocket,omitempty" protobuf:"bytes,4,opt,name=tcpSocket"`
}

// GuestAgentPing checks that the guest agent answers.
type GuestAgentPing struct{}
