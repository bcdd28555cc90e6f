package virtualization

import (
	corev1 "k8s.io/api/core/v1"
)

// Probe is a periodic check of the guest, as a container probe is of a
// container.
type Probe struct {
	// Handler is the check. Exactly one member may be set.
	Handler
	// InitialDelaySeconds after the guest started before the first check.
	InitialDelaySeconds int32
	// TimeoutSeconds of one check. Defaults to 1.
	TimeoutSeconds int32
	// PeriodSeconds between checks. Defaults to 10.
	PeriodSeconds int32
	// SuccessThreshold is the successes in a row that count. Defaults to 1.
	SuccessThreshold int32
	// FailureThreshold is the failures in a row that count. Defaults to 3.
	FailureThreshold int32
}

// Handler is the check of a probe.
type Handler struct {
	// Exec runs a command in the guest through its guest agent.
	Exec *corev1.ExecAction
	// GuestAgentPing checks that the guest agent answers.
	GuestAgentPing *GuestAgentPing
	// HTTPGet sends an HTTP request to the guest.
	HTTPGet *corev1.HTTPGetAction
	// TCPSocket opens a TCP connection to the guest.
	TCPSocket *corev1.TCPSocketAction
}

// GuestAgentPing checks that the guest agent answers.
type GuestAgentPing struct{}
