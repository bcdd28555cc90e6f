// Package nodecapability is virt-apiserver's admission plugin
// VirtNodeCapability: it refuses to create a VMI that needs a node
// capability (internal/capability: KVM, a QEMU with the igb NIC, ...) which
// no Ready node reports, with a 422 at the fields that need it saying what
// each node reports. What the nodes can run is read from the Nodes
// themselves (an informer on the kube-apiserver's Nodes, the labels
// virt-handler writes), never from a literal of the API's validation.
//
// A VMI that needs nothing special never waits for the Nodes. A VM is not
// checked: it may be stored halted; its VMI is checked when it is created.
package nodecapability
