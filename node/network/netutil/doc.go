// Package netutil holds what both guest-network bindings do inside a pod's
// network namespace: run code on a thread switched into it, create the
// bridge and the launcher's tap, attach ports and turn on IPv4 forwarding
// of one device. It knows nothing of VMIs or leases; it must not import the
// bindings.
package netutil
