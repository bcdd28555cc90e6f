package network

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"runtime"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/dhcp"
	"kubevirt.dev/virt/node/network/netutil"
)

// Names of the plain-tap network's devices. Only HostLink is on the host;
// the others live in the bench's namespace and go with it.
const (
	// HostLink is the host's end of the veth pair into the namespace.
	HostLink   = "vb-net0"
	uplink     = "uplink"
	bridgeName = "br0"
	tapName    = "tap0"
	// linkMTU is every link's MTU: the pod network's (the cluster's bridge
	// CNI leaves 1500), so that both paths carry the same frames.
	linkMTU = 1500
)

// Addresses of the plain-tap network: only 198.19.253.0/24 and
// 198.19.254.0/24, in the benchmarking block 198.18.0.0/15 that the local
// cluster's pod and service ranges (198.18.0.0/24, 198.19.0.0/24) leave
// free.
var (
	// hostAddr and uplinkAddr are the veth pair's ends.
	hostAddr   = netip.MustParsePrefix("198.19.253.1/30")
	uplinkAddr = netip.MustParsePrefix("198.19.253.2/30")
	// gatewayAddr is the bridge's: the guest's router and DHCP server.
	gatewayAddr = netip.MustParsePrefix("198.19.254.1/24")
	// GuestAddr is the raw guest's lease.
	GuestAddr = netip.MustParsePrefix("198.19.254.2/24")
)

// tapNet is the plain tap's network: a namespace of its own, reached from
// the host through a veth pair and a route, with a bridge that holds the
// guest's tap and serves its DHCP lease. Forwarding is on per device in
// the namespace; nothing is translated.
type tapNet struct {
	ns netns.NsHandle
	// h works in ns.
	h      *netlink.Handle
	bridge netlink.Link

	dhcp     *dhcp.Server
	stopDHCP context.CancelFunc
	dhcpDone chan error
}

// newTapNet builds the network: it refuses to when the host already uses
// its addresses, and removes a veth a killed earlier run left. On failure
// it removes what it made.
func newTapNet() (n *tapNet, err error) {
	if err := removeLink(HostLink); err != nil {
		return nil, fmt.Errorf("remove a leftover %s: %w", HostLink, err)
	}
	host, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("netlink on the host: %w", err)
	}
	err = checkFree(host, hostAddr.Masked(), GuestAddr.Masked())
	host.Close()
	if err != nil {
		return nil, err
	}
	n = &tapNet{ns: netns.None()}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.close())
		}
	}()
	if n.ns, err = newNetns(); err != nil {
		return n, err
	}
	if n.h, err = netlink.NewHandleAt(n.ns); err != nil {
		return n, fmt.Errorf("netlink in the bench's namespace: %w", err)
	}
	for _, step := range []struct {
		what string
		run  func() error
	}{
		{"set lo up", n.loopback},
		{"create veth " + HostLink + "/" + uplink, n.veth},
		{"create bridge " + bridgeName, n.createBridge},
		{"enable forwarding", n.forwarding},
		{"route " + GuestAddr.Masked().String() + " on the host", n.route},
	} {
		if err := step.run(); err != nil {
			return n, fmt.Errorf("plain-tap network: %s: %w", step.what, err)
		}
	}
	return n, nil
}

// newNetns creates an anonymous network namespace. It lives as long as a
// handle, a process or a mount holds it: the bench's handle and the raw
// guest's processes, nothing that survives them.
func newNetns() (netns.NsHandle, error) {
	type result struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan result, 1)
	go func() {
		// netns.New moves the thread into the new namespace: the thread is
		// thrown away (its goroutine ends locked to it), so no other
		// goroutine ever runs there by accident.
		runtime.LockOSThread()
		ns, err := netns.New()
		c <- result{ns, err}
	}()
	r := <-c
	if r.err != nil {
		return netns.None(), fmt.Errorf("create a network namespace: %w", r.err)
	}
	return r.ns, nil
}

// checkFree fails when an address or route in h's namespace (the host's)
// overlaps one of nets: the bench must not shadow or break anything of the
// machine's.
func checkFree(h *netlink.Handle, nets ...netip.Prefix) error {
	addrs, err := h.AddrList(nil, netlink.FAMILY_V4)
	if err != nil {
		return fmt.Errorf("list the host's addresses: %w", err)
	}
	for _, a := range addrs {
		p, ok := prefixOf(a.IPNet)
		if ok && overlapsAny(p, nets) {
			return fmt.Errorf("the host has %s (%s): the bench's plain-tap network needs %v for itself", p, a.Label, nets)
		}
	}
	routes, err := h.RouteListFiltered(netlink.FAMILY_V4, &netlink.Route{Table: unix.RT_TABLE_UNSPEC}, netlink.RT_FILTER_TABLE)
	if err != nil {
		return fmt.Errorf("list the host's routes: %w", err)
	}
	for _, r := range routes {
		p, ok := prefixOf(r.Dst)
		if ok && p.Bits() > 0 && overlapsAny(p, nets) {
			return fmt.Errorf("the host routes %s (table %d, link index %d): the bench's plain-tap network needs %v for itself", p, r.Table, r.LinkIndex, nets)
		}
	}
	return nil
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	if n == nil {
		return netip.Prefix{}, false
	}
	ip, ok := netip.AddrFromSlice(n.IP.To4())
	if !ok {
		return netip.Prefix{}, false
	}
	bits, _ := n.Mask.Size()
	return netip.PrefixFrom(ip, bits).Masked(), true
}

func overlapsAny(p netip.Prefix, nets []netip.Prefix) bool {
	for _, n := range nets {
		if p.Overlaps(n) {
			return true
		}
	}
	return false
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}
}

func (n *tapNet) loopback() error {
	lo, err := n.h.LinkByName("lo")
	if err != nil {
		return err
	}
	return n.h.LinkSetUp(lo)
}

// veth creates the pair with its namespace end in place, and addresses
// and raises both ends.
func (n *tapNet) veth() error {
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: HostLink, MTU: linkMTU}, PeerName: uplink, PeerNamespace: netlink.NsFd(n.ns)}
	if err := netlink.LinkAdd(v); err != nil {
		return err
	}
	host, err := netlink.LinkByName(HostLink)
	if err != nil {
		return err
	}
	if err := netlink.AddrAdd(host, &netlink.Addr{IPNet: ipNet(hostAddr)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", HostLink, hostAddr, err)
	}
	if err := netlink.LinkSetUp(host); err != nil {
		return err
	}
	up, err := n.h.LinkByName(uplink)
	if err != nil {
		return err
	}
	if err := n.h.LinkSetMTU(up, linkMTU); err != nil {
		return err
	}
	if err := n.h.AddrAdd(up, &netlink.Addr{IPNet: ipNet(uplinkAddr)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", uplink, uplinkAddr, err)
	}
	return n.h.LinkSetUp(up)
}

func (n *tapNet) createBridge() error {
	br, err := netutil.EnsureBridge(n.h, bridgeName, linkMTU)
	if err != nil {
		return err
	}
	if err := n.h.AddrAdd(br, &netlink.Addr{IPNet: ipNet(gatewayAddr)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", bridgeName, gatewayAddr, err)
	}
	if err := n.h.LinkSetUp(br); err != nil {
		return err
	}
	n.bridge = br
	return nil
}

// forwarding turns it on for the two devices packets arrive on: the
// uplink (the host's requests) and the bridge (the guest's answers), as
// the masquerade binding does for the pod interface and its bridge.
func (n *tapNet) forwarding() error {
	up, err := n.h.LinkByName(uplink)
	if err != nil {
		return err
	}
	for _, l := range []netlink.Link{up, n.bridge} {
		if err := netutil.EnableIPv4Forwarding(n.ns, l); err != nil {
			return err
		}
	}
	return nil
}

// route sends the host's packets for the guest's network through the veth;
// the namespace reaches the host's end directly, so no route is needed back.
func (n *tapNet) route() error {
	host, err := netlink.LinkByName(HostLink)
	if err != nil {
		return err
	}
	return netlink.RouteAdd(hostRoute(host.Attrs().Index))
}

func hostRoute(linkIndex int) *netlink.Route {
	return &netlink.Route{LinkIndex: linkIndex, Dst: ipNet(GuestAddr.Masked()), Gw: uplinkAddr.Addr().AsSlice()}
}

// addTap creates the guest's tap, owned by this process's user (raw
// libvirt runs QEMU as root here), as a port of the bridge.
func (n *tapNet) addTap() error {
	tap, err := netutil.EnsureTap(n.ns, n.h, tapName, uint32(os.Getuid()), uint32(os.Getgid()))
	if err != nil {
		return fmt.Errorf("plain-tap network: %w", err)
	}
	if err := netutil.AttachPort(n.h, tap, n.bridge, linkMTU); err != nil {
		return fmt.Errorf("plain-tap network: %w", err)
	}
	return nil
}

// serveDHCP serves the guest NIC mac its lease (GuestAddr, router the
// bridge) with the launcher's DHCP server on the bridge, until close.
func (n *tapNet) serveDHCP(ctx context.Context, mac, hostname string) error {
	cfg, err := dhcp.NewConfig(&apiv1.InterfaceNetwork{
		Name: "default", TapDevice: tapName, MacAddress: mac, Mtu: linkMTU,
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: bridgeName,
			ServerAddress:   gatewayAddr.Addr().String(),
			Address:         GuestAddr.String(),
			Router:          gatewayAddr.Addr().String(),
		},
	}, nil, nil, hostname)
	if err != nil {
		return err
	}
	srv, err := dhcp.NewServer(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var serve func() error
	// The socket is opened in the namespace of the thread that listens.
	if err := netutil.Do(n.ns, func() error {
		var err error
		serve, err = srv.Listen(ctx)
		return err
	}); err != nil {
		cancel()
		return err
	}
	n.dhcp, n.stopDHCP, n.dhcpDone = srv, cancel, make(chan error, 1)
	go func() { n.dhcpDone <- serve() }()
	return nil
}

// leased says whether the guest took its lease.
func (n *tapNet) leased() bool {
	if n.dhcp == nil {
		return false
	}
	_, ok := n.dhcp.Acked()
	return ok
}

// inNS runs fn on a thread switched into the namespace; a process fn
// starts is born there.
func (n *tapNet) inNS(fn func() error) error {
	return netutil.Do(n.ns, fn)
}

// close stops the DHCP server and removes the host's route and veth (which
// takes its peer along); the bridge and the tap go with the namespace once
// the last process in it has exited. It tolerates what is already gone.
func (n *tapNet) close() error {
	var errs []error
	if n.stopDHCP != nil {
		n.stopDHCP()
		errs = append(errs, <-n.dhcpDone)
		n.stopDHCP = nil
	}
	if host, err := netlink.LinkByName(HostLink); err == nil {
		if err := netlink.RouteDel(hostRoute(host.Attrs().Index)); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete the host's route to %s: %w", GuestAddr.Masked(), err))
		}
	}
	errs = append(errs, removeLink(HostLink))
	if n.h != nil {
		n.h.Close()
		n.h = nil
	}
	if n.ns.IsOpen() {
		errs = append(errs, n.ns.Close())
		n.ns = netns.None()
	}
	return errors.Join(errs...)
}

// removeLink deletes the host's link name if there is one.
func removeLink(name string) error {
	l, err := netlink.LinkByName(name)
	if errors.As(err, &netlink.LinkNotFoundError{}) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("look up %s: %w", name, err)
	}
	if err := netlink.LinkDel(l); err != nil {
		return fmt.Errorf("delete %s: %w", name, err)
	}
	return nil
}
