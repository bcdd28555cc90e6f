// Package network measures guest networking (part 6): HTTP downloads of a
// 64 MiB file from the test guest and the latency of small requests on
// fresh connections, from the node (as root) to a VMI's pod IP through the
// masquerade binding, against the same guest booted by raw libvirt on a
// plain tap that the host reaches by routing alone (no NAT), on the same
// machine in the same run, the two measured in alternation. The target:
// masquerade within 0.8x the plain tap's throughput.
//
// The plain tap lives in a network namespace of the bench's own
// (tapnet.go): a veth pair from the host (198.19.253.0/30), a bridge with
// the guest's gateway (198.19.254.1/24) holding the tap, per-device
// forwarding, the launcher's DHCP server (launcher/dhcp) and a host route
// to 198.19.254.0/24. Raw libvirt runs in a child process started inside
// that namespace (rawguest.go: this binary again, see IsRawLibvirt), so
// that QEMU and the tap it opens are there too, and so that its embedded
// libvirt root does not clash with the one part 2 keeps in this process
// (libvirt allows one per process).
//
// The statistics (stats.go) and the transfers (transfer.go) are tested
// without a guest; the namespace plumbing has a root test with a veth in
// place of the tap; the raw guest's test boots a VM and is behind the
// build tag rawguest. It imports node/network/netutil and launcher/dhcp,
// the platform's own plumbing and DHCP server, and nothing of the bindings.
package network
