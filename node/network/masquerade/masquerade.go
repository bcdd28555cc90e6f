package masquerade

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network"
	"kubevirt.dev/virt/node/network/netutil"
)

// Binding sets up masquerade networking; the zero value is ready to use.
type Binding struct{}

var _ network.Binding = Binding{}

// Setup creates the bridge (the guest's gateway and DHCP server address),
// the tap, per-device forwarding and the nftables table of iface in ns,
// and returns the guest's NIC and lease.
func (Binding) Setup(ns netns.NsHandle, iface network.Interface) (*apiv1.InterfaceNetwork, error) {
	gateway, guest, err := guestAddresses(iface.GuestCIDR)
	if err != nil {
		return nil, fmt.Errorf("masquerade: %w", err)
	}
	ports, err := forwardedPorts(iface.Ports)
	if err != nil {
		return nil, fmt.Errorf("masquerade: %w", err)
	}
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("masquerade: netlink in the pod's netns: %w", err)
	}
	defer h.Close()

	s := &setup{ns: ns, h: h, iface: iface, gateway: gateway, guest: guest, ports: ports}
	for _, step := range []struct {
		what string
		run  func() error
	}{
		{"read the pod interface " + iface.PodInterface, s.readPod},
		{"create bridge " + network.BridgeName(iface.PodInterface), s.createBridge},
		{"create tap " + network.TapName(iface.Index), s.createTap},
		{"enable IPv4 forwarding", s.forwarding},
		{"add the NAT rules", s.rules},
	} {
		if err := step.run(); err != nil {
			return nil, fmt.Errorf("masquerade: %s in the pod's netns: %w", step.what, err)
		}
	}
	return s.result(), nil
}

// setup is one run of Setup; each step fills in what the next ones need.
type setup struct {
	ns             netns.NsHandle
	h              *netlink.Handle
	iface          network.Interface
	gateway, guest netip.Prefix
	ports          []port

	pod    netlink.Link
	podIP  netip.Addr
	bridge netlink.Link
}

// guestAddresses returns the bridge's and the guest's addresses in cidr:
// its first and second hosts.
func guestAddresses(cidr netip.Prefix) (gateway, guest netip.Prefix, err error) {
	if !cidr.IsValid() || !cidr.Addr().Is4() || cidr.Bits() > 30 {
		return gateway, guest, fmt.Errorf("guest CIDR %q is not an IPv4 network with room for two hosts", cidr)
	}
	network := cidr.Masked().Addr()
	gateway = netip.PrefixFrom(network.Next(), cidr.Bits())
	guest = netip.PrefixFrom(gateway.Addr().Next(), cidr.Bits())
	return gateway, guest, nil
}

func (s *setup) readPod() error {
	link, err := s.h.LinkByName(s.iface.PodInterface)
	if err != nil {
		return err
	}
	addrs, err := s.h.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list its addresses: %w", err)
	}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP.To4()); ok && a.Scope == int(netlink.SCOPE_UNIVERSE) {
			s.pod, s.podIP = link, ip
			return nil
		}
	}
	return errors.New("it has no IPv4 address")
}

func (s *setup) createBridge() error {
	mtu := s.pod.Attrs().MTU
	br, err := netutil.EnsureBridge(s.h, network.BridgeName(s.iface.PodInterface), mtu)
	if err != nil {
		return err
	}
	gateway := &netlink.Addr{IPNet: &net.IPNet{
		IP:   s.gateway.Addr().AsSlice(),
		Mask: net.CIDRMask(s.gateway.Bits(), 32),
	}}
	if err := s.h.AddrReplace(br, gateway); err != nil {
		return fmt.Errorf("address it with %s: %w", s.gateway, err)
	}
	if err := s.h.LinkSetUp(br); err != nil {
		return fmt.Errorf("set it up: %w", err)
	}
	s.bridge = br
	return nil
}

func (s *setup) createTap() error {
	tap, err := netutil.EnsureTap(s.ns, s.h, network.TapName(s.iface.Index), s.iface.TapOwner, s.iface.TapGroup, s.iface.Queues > 1)
	if err != nil {
		return err
	}
	return netutil.AttachPort(s.h, tap, s.bridge, s.pod.Attrs().MTU)
}

// forwarding turns it on for the two devices that packets to and from the
// guest arrive on: the pod interface (inbound, after DNAT) and the bridge
// (the guest's traffic).
func (s *setup) forwarding() error {
	for _, link := range []netlink.Link{s.pod, s.bridge} {
		if err := netutil.EnableIPv4Forwarding(s.ns, link); err != nil {
			return err
		}
	}
	return nil
}

func (s *setup) rules() error {
	return replaceRules(s.ns, rules{
		podInterface: s.iface.PodInterface,
		podIP:        s.podIP,
		guest:        s.guest.Addr(),
		ports:        s.ports,
	})
}

func (s *setup) result() *apiv1.InterfaceNetwork {
	return &apiv1.InterfaceNetwork{
		Name:       s.iface.Name,
		TapDevice:  network.TapName(s.iface.Index),
		MacAddress: s.iface.MAC.String(),
		Mtu:        uint32(s.pod.Attrs().MTU),
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: network.BridgeName(s.iface.PodInterface),
			ServerAddress:   s.gateway.Addr().String(),
			Address:         s.guest.String(),
			Router:          s.gateway.Addr().String(),
		},
	}
}
