// Package vmistatus computes what virt-handler writes into a VMI's status from
// what it observed: the launcher's domain, the launcher pod, and how the
// guest ended. The functions are pure; the controller does the I/O.
//
// After the hand-off the node owns the phase (Running, Succeeded, Failed),
// the reason, the Ready, Paused, SoftwareEmulation and AgentConnected
// conditions, the interfaces and guestOSInfo. Everything else in the status belongs to virt-controller
// (nodeName, activePods, PodScheduled, the launcher image) and is copied
// through untouched. A condition keeps its lastTransitionTime while its
// status stays, and no probe times are written, so observing an unchanged
// guest yields an identical status: the controller writes only on change.
//
// The guest's agent and the launcher pod are the tenant's: what they report
// is cut to the bounds of apis/virtualization/v1 (MaxStatusInterfaces and the
// others, which virt-apiserver's validation enforces too) before it reaches a
// status, and Running says what it dropped, so a hostile guest can neither
// make the node's status writes fail nor grow the VMI.
package vmistatus
