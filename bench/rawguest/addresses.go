package rawguest

import (
	"errors"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// benchmarkingBlock is the only range a plain tap's network may use: the
// local cluster's pod and service ranges (198.18.0.0/24, 198.19.0.0/24)
// take only parts of it.
var benchmarkingBlock = netip.MustParsePrefix("198.18.0.0/15")

// Addresses place one part's plain-tap network. Parts give distinct ones,
// so that their tests may run at the same time.
type Addresses struct {
	// HostLink is the host's end of the veth pair into the namespace, the
	// one device of the network on the host.
	HostLink string
	// Host and Uplink are the veth pair's ends, in one network.
	Host, Uplink netip.Prefix
	// Gateway is the bridge's: the guest's router and DHCP server. Guest
	// is the guest's lease, in the same network.
	Gateway, Guest netip.Prefix
}

// Validate checks that the addresses make one network each for the veth
// pair and the guest, apart, inside 198.18.0.0/15.
func (a Addresses) Validate() error {
	if a.HostLink == "" || len(a.HostLink) > 15 {
		return fmt.Errorf("host link %q: want 1 to 15 characters", a.HostLink)
	}
	for _, p := range []netip.Prefix{a.Host, a.Uplink, a.Gateway, a.Guest} {
		if !p.IsValid() || !p.Addr().Is4() || !benchmarkingBlock.Contains(p.Addr()) || p.Bits() < benchmarkingBlock.Bits() {
			return fmt.Errorf("address %s: want an IPv4 prefix inside %s", p, benchmarkingBlock)
		}
	}
	if a.Host.Masked() != a.Uplink.Masked() || a.Host.Addr() == a.Uplink.Addr() {
		return fmt.Errorf("veth ends %s and %s: want two addresses of one network", a.Host, a.Uplink)
	}
	if a.Gateway.Masked() != a.Guest.Masked() || a.Gateway.Addr() == a.Guest.Addr() {
		return fmt.Errorf("gateway %s and guest %s: want two addresses of one network", a.Gateway, a.Guest)
	}
	if a.Host.Overlaps(a.Guest.Masked()) {
		return fmt.Errorf("veth network %s overlaps the guest's %s", a.Host.Masked(), a.Guest.Masked())
	}
	return nil
}

// Left says what of a's network is still on the host: the veth, or a
// route to the guest through it. Nil once Net.Close (or the end of every
// process in the namespace) removed it.
func Left(a Addresses) error {
	var errs []error
	if _, err := netlink.LinkByName(a.HostLink); !errors.As(err, &netlink.LinkNotFoundError{}) {
		errs = append(errs, fmt.Errorf("%s is still on the host (lookup: %v)", a.HostLink, err))
	}
	// No route at all is fine: the host has no default route.
	routes, _ := netlink.RouteGet(a.Guest.Addr().AsSlice())
	for _, r := range routes {
		if r.Gw != nil && r.Gw.Equal(a.Uplink.Addr().AsSlice()) {
			errs = append(errs, fmt.Errorf("the host still routes %s via %s", a.Guest.Addr(), r.Gw))
		}
	}
	return errors.Join(errs...)
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
