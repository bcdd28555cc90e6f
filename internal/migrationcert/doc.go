// Package migrationcert is the contract of virt-handler's migration
// certificate, shared by the handlers that proxy a live migration between
// nodes (node/migrationproxy: each one both client and server of the
// mutual TLS) and virt-controller, which approves and signs it
// (controllers/certificate, a second signer beside the guest-access one).
//
// It is a certificate of its own, not the guest-access serving
// certificate: that one is serverAuth only and trusted by virt-apiserver;
// this one is clientAuth+serverAuth, issued from a CA of its own that only
// the handlers trust for migrations, so neither can stand in for the other.
// One certificate per node, common name system:virt-handler-migration:NODE
// and NODE as its only DNS name: the source checks that the target's
// names the target node, the target that the client's names the source
// node.
//
// It holds names and shapes only, no I/O. It must not import node/,
// controllers/ or apiserver/.
package migrationcert
