// Package lease keeps the DHCP leases of a launcher's guest: one
// launcher/dhcp server per NIC that has a lease to offer, started before the
// domain is defined (the guest asks for its address as it boots) and run for
// the launcher's life, and which address each guest took.
//
// A Set has its own lock and calls nobody while holding it: the launcher's
// domain supervisor asks it for the taken addresses while holding its own.
//
// It imports nothing of libvirt: the leases are the pod network's, not the
// hypervisor's.
package lease
