package rawguest

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/dhcp"
	"kubevirt.dev/virt/node/network/netutil"
)

// Names of the devices in the namespace, which go with it; only the
// host's end of the veth pair (Addresses.HostLink) is on the host.
const (
	uplink = "uplink"
	// BridgeName is the bridge that holds the tap and serves DHCP.
	BridgeName = "br0"
	// TapName is the guest's tap, which the domain's interface opens.
	TapName = "tap0"
	// LinkMTU is every link's MTU: the pod network's (the cluster's bridge
	// CNI leaves 1500), so that the platform's and the raw guests' NICs
	// carry the same frames.
	LinkMTU = 1500
)

// Net is a plain tap's network: a namespace of its own, reached from the
// host through a veth pair and a route, with a bridge that holds the
// guest's tap and serves its DHCP lease. Forwarding is on per device in
// the namespace; nothing is translated.
type Net struct {
	addrs Addresses
	ns    netns.NsHandle
	// h works in ns.
	h      *netlink.Handle
	bridge netlink.Link

	dhcp     *dhcp.Server
	stopDHCP context.CancelFunc
	dhcpDone chan error
}

// NewNet builds the network at a: it refuses to when the host already
// uses its addresses, and removes a veth a killed earlier run left. On
// failure it removes what it made.
func NewNet(a Addresses) (n *Net, err error) {
	if err := a.Validate(); err != nil {
		return nil, fmt.Errorf("plain-tap network: %w", err)
	}
	if err := removeLink(a.HostLink); err != nil {
		return nil, fmt.Errorf("remove a leftover %s: %w", a.HostLink, err)
	}
	host, err := netlink.NewHandle()
	if err != nil {
		return nil, fmt.Errorf("netlink on the host: %w", err)
	}
	err = checkFree(host, a.Host.Masked(), a.Guest.Masked())
	host.Close()
	if err != nil {
		return nil, err
	}
	n = &Net{addrs: a, ns: netns.None()}
	defer func() {
		if err != nil {
			err = errors.Join(err, n.Close())
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
		{"create veth " + a.HostLink + "/" + uplink, n.veth},
		{"create bridge " + BridgeName, n.createBridge},
		{"enable forwarding", n.forwarding},
		{"route " + a.Guest.Masked().String() + " on the host", n.route},
	} {
		if err := step.run(); err != nil {
			return n, fmt.Errorf("plain-tap network: %s: %w", step.what, err)
		}
	}
	return n, nil
}

// Addresses are the network's.
func (n *Net) Addresses() Addresses { return n.addrs }

// newNetns creates an anonymous network namespace. It lives as long as a
// handle, a process or a mount holds it: the bench's handle and the raw
// guest's processes, nothing that survives them.
func newNetns() (netns.NsHandle, error) {
	return netutil.NewNS()
}

func (n *Net) loopback() error {
	lo, err := n.h.LinkByName("lo")
	if err != nil {
		return err
	}
	return n.h.LinkSetUp(lo)
}

// veth creates the pair with its namespace end in place, and addresses
// and raises both ends.
func (n *Net) veth() error {
	a := n.addrs
	v := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.HostLink, MTU: LinkMTU}, PeerName: uplink, PeerNamespace: netlink.NsFd(n.ns)}
	if err := netlink.LinkAdd(v); err != nil {
		return err
	}
	host, err := netlink.LinkByName(a.HostLink)
	if err != nil {
		return err
	}
	if err := netlink.AddrAdd(host, &netlink.Addr{IPNet: ipNet(a.Host)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", a.HostLink, a.Host, err)
	}
	if err := netlink.LinkSetUp(host); err != nil {
		return err
	}
	up, err := n.h.LinkByName(uplink)
	if err != nil {
		return err
	}
	if err := n.h.LinkSetMTU(up, LinkMTU); err != nil {
		return err
	}
	if err := n.h.AddrAdd(up, &netlink.Addr{IPNet: ipNet(a.Uplink)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", uplink, a.Uplink, err)
	}
	return n.h.LinkSetUp(up)
}

func (n *Net) createBridge() error {
	br, err := netutil.EnsureBridge(n.h, BridgeName, LinkMTU)
	if err != nil {
		return err
	}
	if err := n.h.AddrAdd(br, &netlink.Addr{IPNet: ipNet(n.addrs.Gateway)}); err != nil {
		return fmt.Errorf("address %s with %s: %w", BridgeName, n.addrs.Gateway, err)
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
func (n *Net) forwarding() error {
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
func (n *Net) route() error {
	host, err := netlink.LinkByName(n.addrs.HostLink)
	if err != nil {
		return err
	}
	return netlink.RouteAdd(hostRoute(n.addrs, host.Attrs().Index))
}

func hostRoute(a Addresses, linkIndex int) *netlink.Route {
	return &netlink.Route{LinkIndex: linkIndex, Dst: ipNet(a.Guest.Masked()), Gw: a.Uplink.Addr().AsSlice()}
}

// AddTap creates the guest's tap (TapName), owned by this process's user
// (raw libvirt runs QEMU as root here), as a port of the bridge.
func (n *Net) AddTap() error {
	tap, err := netutil.EnsureTap(n.ns, n.h, TapName, uint32(os.Getuid()), uint32(os.Getgid()), false)
	if err != nil {
		return fmt.Errorf("plain-tap network: %w", err)
	}
	if err := netutil.AttachPort(n.h, tap, n.bridge, LinkMTU); err != nil {
		return fmt.Errorf("plain-tap network: %w", err)
	}
	return nil
}

// ServeDHCP serves the guest NIC mac its lease (Addresses.Guest, router
// the bridge, no DNS server) with the launcher's DHCP server on the
// bridge, until Close.
func (n *Net) ServeDHCP(ctx context.Context, mac, hostname string) error {
	cfg, err := dhcp.NewConfig(&apiv1.InterfaceNetwork{
		Name: "default", TapDevice: TapName, MacAddress: mac, Mtu: LinkMTU,
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: BridgeName,
			ServerAddress:   n.addrs.Gateway.Addr().String(),
			Address:         n.addrs.Guest.String(),
			Router:          n.addrs.Gateway.Addr().String(),
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

// Leased says whether the guest took its lease.
func (n *Net) Leased() bool {
	if n.dhcp == nil {
		return false
	}
	_, ok := n.dhcp.Acked()
	return ok
}

// inNS runs fn on a thread switched into the namespace; a process fn
// starts is born there.
func (n *Net) inNS(fn func() error) error {
	return netutil.Do(n.ns, fn)
}

// Close stops the DHCP server and removes the host's route and veth (which
// takes its peer along); the bridge and the tap go with the namespace once
// the last process in it has exited. It tolerates what is already gone.
func (n *Net) Close() error {
	var errs []error
	if n.stopDHCP != nil {
		n.stopDHCP()
		errs = append(errs, <-n.dhcpDone)
		n.stopDHCP = nil
	}
	a := n.addrs
	if host, err := netlink.LinkByName(a.HostLink); err == nil {
		if err := netlink.RouteDel(hostRoute(a, host.Attrs().Index)); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("delete the host's route to %s: %w", a.Guest.Masked(), err))
		}
	}
	errs = append(errs, removeLink(a.HostLink))
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
