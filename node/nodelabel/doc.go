// Package nodelabel reports what this node can run as labels of its Node
// (internal/capability): whenever a launcher on the node answers Info, the
// node's capabilities are decided from what its hypervisor said, and the
// labels are patched when they differ from those last written. A node on
// which no launcher has run yet reports nothing, and a VMI that needs a
// capability is refused until some node reports it.
//
// It changes only labels under virtualization.kubevirt.io/ of its own Node,
// which is all virt-handler may change there
// (artifacts/virt-handler/node-restriction.yaml).
package nodelabel
