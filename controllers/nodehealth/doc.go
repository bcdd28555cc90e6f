// Package nodehealth is the node-health controller of virt-controller: it watches the
// heartbeat virt-handler renews on each Node (HeartbeatAnnotation) and fails
// the VMIs handed to a node whose heartbeat is older than a timeout, or whose
// Node is gone, with reason NodeUnresponsive. For such VMIs that are being
// deleted it also removes the guest-shutdown finalizer, which only the
// node's virt-handler would otherwise remove.
//
// It writes nothing but those two things; the launcher pods of the failed
// VMIs are the virtualmachineinstance controller's to clean up.
package nodehealth
