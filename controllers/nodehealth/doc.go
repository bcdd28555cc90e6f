// Package nodehealth is the node-health controller of virt-controller: it
// watches the Lease each node's virt-handler renews
// (virtv1.HandlerLeaseName, in the platform's namespace) and decides what
// becomes of the VMIs handed to a node whose handler stopped renewing it
// for longer than a timeout.
//
// An unresponsive handler is not a dead guest: QEMU runs in the launcher
// pod, which the kubelet keeps running without the handler. So a VMI of
// such a node fails (Failed/NodeUnresponsive) only when its launcher is
// known not to run: no launcher pod of the VMI on the node is left that has
// not ended (asked of the API, not only the cache), the Node object is
// deleted, or the Node carries the node.kubernetes.io/out-of-service taint
// (an administrator's word that the node is down: its pods are then
// force-deleted too). KubeVirt's node controller draws the same line.
// Otherwise the VMI keeps running with the condition NodeUnresponsive=True
// and one Warning event, and the condition goes (with a Normal event) when
// the handler renews its Lease again; the handler then takes its VMIs up
// where it left them.
//
// For failed VMIs that are being deleted it also removes the guest-shutdown
// finalizer, which only the node's virt-handler would otherwise remove; a
// VMI whose launcher may still run keeps it, so deleting it waits for the
// handler (or for the pod to go) instead of leaving a guest nobody shuts
// down.
//
// It writes nothing but those: the phase through Fail, the NodeUnresponsive
// condition, the finalizer. The launcher pods of the failed VMIs are the
// virtualmachineinstance controller's to clean up.
package nodehealth
