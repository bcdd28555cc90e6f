// Package nodefence is the opt-in timed fencing policy of virt-controller:
// it taints a node node.kubernetes.io/out-of-service=nodeshutdown:NoExecute
// when the node looks dead for long enough, which is the word the
// nodehealth controller (and Kubernetes' non-graceful node shutdown)
// waits for before it gives up on the node's guests.
//
// A node looks dead when both of its heartbeats stopped: its Node is
// NotReady (the Ready condition False or Unknown: the kubelet stopped
// reporting) and its virt-handler's Lease is older than the heartbeat
// timeout (or missing). It is fenced when it has looked dead continuously
// for longer than its fence-after: the smallest fence-after of the VMIs on
// it that have not ended, each the VMI's FenceNodeAfterAnnotation or else
// the cluster's setting (--fence-unresponsive-nodes-after), where 0 and
// "never" ask for nothing. A node none of whose VMIs asks is never fenced;
// with the default setting (0) only annotated VMIs ask.
//
// The policy assumes that a node which neither its kubelet nor its
// virt-handler can report from is really off. That is not true of a node cut
// off by the network, whose guests run on and may write the disks the
// restarted guests open elsewhere: docs/node-failure.md says so loudly, and
// says how to plug in real fencing (power off, then taint) instead.
//
// It is a package of its own, not part of nodehealth, because it is a
// different decision with a different write and privilege: nodehealth
// judges VMIs from what it knows about a node and writes VMIs only;
// this one decides about the Node and writes a Node only (one taint,
// which the ValidatingAdmissionPolicy virt-controller-node-restriction
// allows it and nothing else). It never writes a VMI; the events it sends
// are its only other output.
//
// It must not import controllers other than nodehealth, whose index of
// VMIs by node it shares.
package nodefence
