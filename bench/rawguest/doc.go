// Package rawguest is the reference the guest-facing parts measure the
// platform against: a guest under raw libvirt on a plain tap, booted from
// the same domain XML (launcher/domain) as the platform's.
//
// Net is the plain tap's network: a network namespace of the bench's own
// with a bridge holding the tap, the launcher's DHCP server (launcher/dhcp)
// on it, forwarding per device, a veth pair to the host and a host route
// to the guest's network, no NAT; each part places it at Addresses of its
// own inside 198.18.0.0/15. Guest is the domain's embedded libvirt
// (qemu:///embed) in a child process started inside that namespace (this
// binary again, see IsChild), so that QEMU and the tap it opens are there
// too, and so that its embedded root does not clash with one the bench
// process holds (libvirt allows one per process). The child probes QEMU
// before Boot, so that Boot is libvirt's define and start alone.
//
// Nothing outlives the bench: the namespace is anonymous, the child
// destroys the domain when the bench's end of its stdin closes (also when
// the bench is killed), and the namespace, veth and route then go with the
// last process in it; only a Guest's temporary directory would stay.
//
// It imports the platform's own plumbing (launcher/hypervisor,
// launcher/domain, launcher/dhcp, launcher/kvm, node/network/netutil) and
// nothing of the bindings (masquerade, bridge) or of the bench's parts.
package rawguest
