package bridge

import (
	"encoding/json"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// podConfig is the pod interface's IPv4 configuration as the CNI plugin
// left it: what the guest takes over. It is stored as JSON in an interface
// alias, so the keys are short.
type podConfig struct {
	Address netip.Prefix `json:"ip"`
	MAC     string       `json:"mac"`
	Gateway netip.Addr   `json:"gw,omitzero"`
	// Routes through the interface but the default and the subnet's.
	Routes []route `json:"routes,omitempty"`
}

// route is a route of the pod interface; Via is zero for an on-link one.
// It reads as "198.18.128.0/17 via 198.18.100.1" or "198.18.100.1/32".
type route struct {
	Dst netip.Prefix
	Via netip.Addr
}

func (r route) MarshalText() ([]byte, error) {
	if !r.Via.IsValid() {
		return r.Dst.MarshalText()
	}
	return []byte(r.Dst.String() + " via " + r.Via.String()), nil
}

func (r *route) UnmarshalText(text []byte) error {
	dst, via, hasVia := strings.Cut(string(text), " via ")
	var err error
	if r.Dst, err = netip.ParsePrefix(dst); err != nil {
		return err
	}
	r.Via = netip.Addr{}
	if hasVia {
		r.Via, err = netip.ParseAddr(via)
	}
	return err
}

// maxAlias is the longest interface alias the kernel takes (IFALIASZ - 1).
const maxAlias = 255

func (c podConfig) alias() (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	if len(b) > maxAlias {
		return "", fmt.Errorf("the configuration (%d routes) takes %d bytes, more than the %d of an interface alias", len(c.Routes), len(b), maxAlias)
	}
	return string(b), nil
}

// parseAlias reads back what alias stored; false when alias is not ours.
func parseAlias(alias string) (podConfig, bool) {
	var c podConfig
	if err := json.Unmarshal([]byte(alias), &c); err != nil || !c.Address.IsValid() {
		return podConfig{}, false
	}
	if _, err := net.ParseMAC(c.MAC); err != nil {
		return podConfig{}, false
	}
	return c, true
}

// readPodConfig reads link's first IPv4 address, its MAC and its IPv4
// routes in the main table.
func readPodConfig(h *netlink.Handle, link netlink.Link) (podConfig, error) {
	c := podConfig{MAC: link.Attrs().HardwareAddr.String()}
	addrs, err := h.AddrList(link, netlink.FAMILY_V4)
	if err != nil {
		return c, fmt.Errorf("list its addresses: %w", err)
	}
	for _, a := range addrs {
		if a.Scope == int(netlink.SCOPE_UNIVERSE) {
			c.Address = prefix(a.IPNet)
			break
		}
	}
	if !c.Address.IsValid() {
		return c, fmt.Errorf("it has no IPv4 address")
	}

	routes, err := h.RouteListFiltered(netlink.FAMILY_V4,
		&netlink.Route{LinkIndex: link.Attrs().Index, Table: unix.RT_TABLE_MAIN},
		netlink.RT_FILTER_OIF|netlink.RT_FILTER_TABLE)
	if err != nil {
		return c, fmt.Errorf("list its routes: %w", err)
	}
	for _, r := range routes {
		if r.Type != unix.RTN_UNICAST {
			continue
		}
		dst := netip.MustParsePrefix("0.0.0.0/0")
		if r.Dst != nil {
			dst = prefix(r.Dst)
		}
		via, _ := netip.AddrFromSlice(r.Gw.To4())
		switch {
		case dst.Bits() == 0:
			// The first default route is the one in use.
			if !c.Gateway.IsValid() {
				c.Gateway = via
			}
		case !via.IsValid() && dst == c.Address.Masked():
			// The subnet's route: the guest's address implies it.
		default:
			c.Routes = append(c.Routes, route{Dst: dst, Via: via})
		}
	}
	return c, nil
}

func prefix(n *net.IPNet) netip.Prefix {
	ip, _ := netip.AddrFromSlice(n.IP.To4())
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(ip, ones)
}

// lease is c as a DHCP lease served from serverInterface. On-link routes
// come first, as a client installs routes in order and a gateway must be
// reachable before a route through it; a gateway outside the subnet (a /32
// pod's, for one) gets an on-link route of its own.
func (c podConfig) lease(serverInterface string) *apiv1.DHCPLease {
	routes := slices.Clone(c.Routes)
	onLink := func(r route) bool { return !r.Via.IsValid() }
	if gw := c.Gateway; gw.IsValid() && !c.Address.Contains(gw) &&
		!slices.ContainsFunc(routes, func(r route) bool { return onLink(r) && r.Dst.Contains(gw) }) {
		routes = append([]route{{Dst: netip.PrefixFrom(gw, 32)}}, routes...)
	}
	slices.SortStableFunc(routes, func(a, b route) int {
		switch {
		case onLink(a) == onLink(b):
			return 0
		case onLink(a):
			return -1
		default:
			return 1
		}
	})
	lease := &apiv1.DHCPLease{
		ServerInterface: serverInterface,
		ServerAddress:   ServerAddress.String(),
		Address:         c.Address.String(),
	}
	if c.Gateway.IsValid() {
		lease.Router = c.Gateway.String()
	}
	for _, r := range routes {
		lr := &apiv1.Route{Destination: r.Dst.String()}
		if r.Via.IsValid() {
			lr.Gateway = r.Via.String()
		}
		lease.Routes = append(lease.Routes, lr)
	}
	return lease
}
