// Package migrationproxy carries a live migration's connections from the
// source launcher pod to the target launcher pod (docs/migration.md, "Node
// side"), in the layout KubeVirt proved: unix sockets inside the pods, TCP
// with mutual TLS only between the nodes' handlers.
//
//   - Source: virt-handler listens on the source pod's migration sockets
//     (layout.MigrationLibvirtSocketName, MigrationQEMUSocketName,
//     MigrationBlockSocketName, in layout.MigrationDirName of the pod's
//     private volume) through node/podfs (bound through a checked
//     directory descriptor, owned by the launchers' uid, only launchers
//     accepted) and forwards each connection over TLS to the target
//     handler's listener of the same kind.
//   - Target: one TCP listener per kind and per migration on the handler
//     pod's IP, TLS with the client certificate of the source node's
//     migration identity required (internal/migrationcert), each
//     connection forwarded into the target pod's socket of its kind,
//     dialled through node/podfs (peer checked).
//
// A listener per migration (not one shared port routing by SNI or ALPN)
// because the contract's migrationState.targetDirectMigrationNodePorts
// maps one port to one kind, because a migration's listeners then accept
// exactly one client identity (the source node's) and route to exactly one
// pod, with no routing table a confused request could reach, and because
// closing the migration's listeners is its whole teardown. The ALPN
// protocol names the kind anyway, so a connection sent to the wrong port
// fails its handshake instead of talking libvirt to QEMU.
//
// Both sides are bounded by the migration: Close stops the listeners,
// closes every open connection and returns once every goroutine ended.
// Bytes are copied both ways with half-close (CloseWrite), so libvirt's
// and QEMU's end-of-stream reach the other side.
package migrationproxy
