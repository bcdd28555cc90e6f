// Package nodelabel reports what this node can run as labels of its Node
// (internal/capability): at start virt-handler reads the facts its init
// container probed (ReadFacts: virt-launcher --probe-node, the platform's
// launcher image run in the handler's own pod), decides the node's
// capabilities from them and patches the labels, retrying until written.
// A node is labelled before any VMI runs on it, and what it claims never
// comes from a launcher in a tenant's pod: a tenant who may exec into its
// VM pod can answer on the launcher's socket.
//
// It changes only labels under virtualization.kubevirt.io/ of its own Node,
// which is all virt-handler may change there
// (artifacts/virt-handler/node-restriction.yaml).
package nodelabel
