// Package network measures guest networking (part 6): HTTP downloads of a
// 64 MiB file from the test guest and the latency of small requests on
// fresh connections, from the node (as root) to a VMI's pod IP through the
// masquerade binding, against the same guest booted by raw libvirt on a
// plain tap that the host reaches by routing alone (no NAT), on the same
// machine in the same run, the two measured in alternation. The target:
// masquerade within 0.8x the plain tap's throughput.
//
// The plain tap and raw libvirt are rawguest's (a Net at Addresses: a
// veth pair from the host, 198.19.253.0/30, a bridge with the guest's
// gateway, 198.19.254.1/24, holding the tap, the launcher's DHCP server
// and a host route to 198.19.254.0/24; a Guest in a child process started
// inside that namespace).
//
// The statistics (stats.go) and the transfers (transfer.go) are tested
// without a guest; the raw guest's test boots a VM and is behind the
// build tag rawguest.
package network
