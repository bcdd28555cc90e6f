// Package heartbeat tells the cluster that this node's virt-handler is
// alive and whether guests may be scheduled to the node, on the node's own
// Node object (kubevirt's pkg/virt-handler/heartbeat is the model).
//
// Each beat is one patch that sets the annotation
// virtualization.kubevirt.io/heartbeat to the time (RFC 3339) and the label
// virtualization.kubevirt.io/schedulable to "true" once the handler is ready
// ("false" before). The heartbeat therefore never lags the label:
// virt-controller fails the VMIs of nodes whose heartbeat is stale, and the
// launcher pods are scheduled only to nodes labelled schedulable. On a
// graceful stop the label goes to "false".
package heartbeat
