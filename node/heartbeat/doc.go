// Package heartbeat tells the cluster that this node's virt-handler is
// alive, and whether guests may be scheduled to the node (kubevirt's
// pkg/virt-handler/heartbeat is the model; the liveness half is the
// kubelet's node Lease).
//
// Liveness is a coordination.k8s.io Lease, virtv1.HandlerLeaseName(node) in
// the platform's namespace, created and renewed with the kubelet's lease
// controller (k8s.io/component-helpers/apimachinery/lease): holder the node,
// owned by the Node so that it goes with it. virt-controller reads its
// renewTime. The Lease is the only object the handler writes to say it is
// alive: the Node is written only for the label
// virtualization.kubevirt.io/schedulable, "true" once the handler is ready
// ("false" before and on a graceful stop); launcher pods are scheduled only
// to nodes labelled "true". Both writes are node-restricted in the
// kube-apiserver (artifacts/virt-handler/node-restriction.yaml): another
// node's Lease or Node, or any other change to the Node, is refused.
//
// A graceful stop does not delete the Lease: a handler that stops is, to
// virt-controller, a handler that stopped beating, and guests keep running
// either way.
package heartbeat
