// Package capability is what a node can run that not every node can: one
// table (Table) of capabilities, each with the Node label virt-handler
// reports it under, how it is decided from what the node's hypervisor says
// (Facts, probed by virt-handler's init container with the launcher
// image), and which fields of a VMI need it.
//
// The three components read the same table: virt-handler labels its Node
// (Labels), virt-controller gives a launcher pod a nodeSelector for each
// capability its VMI needs (Needs), and virt-apiserver refuses a VMI that
// needs a capability no Ready node reports (Check). So what a node runs is
// stated once, by the node, and never as a literal of the API's
// validation.
//
// It works on v1 types and must not import controllers/, node/ or any
// client.
package capability
