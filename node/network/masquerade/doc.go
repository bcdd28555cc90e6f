// Package masquerade is the default guest-network binding, KubeVirt's
// "masquerade": the guest sits on a private network behind a bridge in the
// pod (the first host of the interface's GuestCIDR is the bridge, the
// second the guest), and nftables in the pod's namespace forward the pod
// IP's ports to the guest (DNAT, the client's address preserved) and hide
// the guest's own traffic behind the pod IP (masquerade).
//
// It imports node/network and node/network/netutil; nothing of
// virt-handler.
package masquerade
