// Package guestaccess is virt-handler's side of docs/guest-access.md: the
// HTTPS server (port 8187, guest-access) through which virt-apiserver
// reaches the guests of this node's VMIs. It serves the serial console and
// VNC as WebSocket streams (subprotocol plain.kubevirt.io, binary messages)
// piped to the unix sockets QEMU serves in the launcher pod's private
// directory; a screenshot of the screen (vnc/screenshot) as the PNG the
// launcher takes with libvirt and streams over gRPC; and the pause, unpause
// and softreboot actions as calls to the launcher through node/monitor.
//
// Only virt-apiserver may talk to it: the TLS configuration demands a client
// certificate signed by the virt-handler CA whose common name is the
// configured client name ("virt-apiserver"); service-account tokens are not
// looked at. Requests name the VMI's UID, and a VMI is looked up only in the
// handler's own informer, so a handler acts only on the VMIs handed to its
// node, and never on a newer VMI of the same name.
//
// One interactive console per VMI: a new console connection takes over, the
// old WebSocket is closed with the reason TakenOver before the new one dials
// QEMU's socket (its chardev accepts one client at a time). VNC viewers
// share the guest's screen, each on its own connection.
//
// It reads the informers' caches and the launchers' connections; it writes
// nothing to the API.
package guestaccess
