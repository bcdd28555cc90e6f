// Package dhcp is the DHCPv4 server the launcher runs for one guest NIC: it
// hands the guest the lease virt-handler prepared (apiv1.DHCPLease), plus the
// pod's DNS servers and search domains (ReadResolvConf) and the VMI's name as
// host name. It serves exactly one client, the NIC's MAC, on the interface
// the binding gave it (the in-pod bridge the guest's tap is a port of), and
// stays silent to every other MAC: the bridge may carry other hosts.
//
// Privileges. The launcher is unprivileged, and the server needs none of its
// own, given two things about the pod's network namespace:
//   - Port 67 is below the default net.ipv4.ip_unprivileged_port_start
//     (1024); the launcher pod sets that safe, per-namespace sysctl to 0
//     (alternatively CAP_NET_BIND_SERVICE). Without it Serve fails with
//     EACCES and says so.
//   - The socket is bound to the server interface with SO_BINDTODEVICE,
//     which needs no capability since Linux 5.7. Binding to the device (and
//     to 0.0.0.0, not to the server's address) is what lets the socket
//     receive the guest's broadcasts from 0.0.0.0 and lets several servers,
//     one per bridge, share port 67.
//
// Replies. Until it has its address the guest cannot take unicast, and a
// UDP socket cannot send to a MAC without an ARP entry, so every OFFER, ACK
// and NAK goes to 255.255.255.255:68 on the bound interface; only a renewal
// from a configured guest (ciaddr set) is answered by unicast. DHCP clients
// read replies from a packet socket by UDP port, transaction ID and chaddr
// (busybox udhcpc, dhclient, systemd-networkd), so the broadcast is what
// they expect.
//
// The lease is infinite (RFC 2131's 0xffffffff) by default: the address is
// fixed for the guest's life and the server lives exactly as long as the
// guest (it is a goroutine of the launcher), so a finite lease would only
// add renewals, and a guest whose server failed would lose its address when
// the lease ran out instead of keeping a still valid one. A reboot of the
// guest asks again and gets the same answer.
//
// It imports nothing of libvirt and nothing of the platform beyond the
// launcher's contract (launcher/api/v1).
package dhcp
