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
package vmistatus
