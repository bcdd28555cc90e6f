// Package servingcert is the contract of virt-handler's guest-access serving
// certificate, shared by the three parties of docs/guest-access.md: the
// handler requests it through the certificates.k8s.io API under SignerName
// (node/guestaccess), virt-controller approves and signs it
// (controllers/certificate), and virt-apiserver checks it against the node
// a VMI runs on (apiserver/guestaccess). One certificate per node, named
// for that node alone: one node's key cannot answer for another node.
//
// It holds names and shapes only, no I/O. It must not import node/,
// controllers/ or apiserver/.
package servingcert
