// Package network is virt-handler's plugin point for guest networking: a
// Binding connects one interface of a VMI to its launcher pod's network,
// working inside the pod's network namespace before the launcher starts the
// domain. The privileged part (bridge, tap, addresses, nftables) runs here,
// in the node daemon; the launcher stays unprivileged and only opens the tap
// and serves the lease it is handed (launcher/api/v1.InterfaceNetwork).
//
// Each binding is a package below (masquerade, bridge). A binding's Setup is
// idempotent: virt-handler may run it again after a restart, halfway or
// after it finished, and the namespace ends up with exactly one set of
// devices and rules. Nothing is ever cleaned up: everything lives in the
// pod's network namespace and goes with it.
package network
