// Package virtualmachineinstance is the REST storage of
// virtualmachineinstances and virtualmachineinstances/status: how an object
// is prepared, validated, selected and printed before it reaches etcd; and
// the one change of a VMI's spec the server itself makes, a shorter grace
// period for the VM's stop and restart (SetTerminationGracePeriod).
//
// It also serves the subresources that reach a running guest through the
// virt-handler of its node (docs/guest-access.md): console and vnc, GET
// WebSocket upgrades proxied to the handler, and pause, unpause and
// softreboot, PUTs forwarded to it whose Status is the answer. Where the
// handler is and how to dial it comes from outside (Handlers,
// apiserver/guestaccess). The guestosinfo subresource answers the guest
// agent's report from the VMI's status, without the node.
//
// It works on the internal types and must not import any client.
package virtualmachineinstance
