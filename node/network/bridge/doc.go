// Package bridge is the guest-network binding that gives the guest the
// pod's own address over L2, KubeVirt's "bridge": the pod interface and the
// tap become ports of one bridge, the pod interface hands its IPv4 address,
// routes and MAC to the guest (through the lease), and the pod keeps
// nothing but a link-local address on the bridge for the launcher's DHCP
// server.
//
// The pod interface's configuration is read once and kept in the bridge's
// alias, in the pod's namespace, before anything changes: a virt-handler
// that restarts halfway finishes the job from it instead of from the
// stripped interface.
//
// It imports node/network and node/network/netutil; nothing of
// virt-handler.
package bridge
