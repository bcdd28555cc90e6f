package dhcp

import (
	"encoding/binary"
	"net"
	"net/netip"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/rfc1035label"
)

// ipUDPHeaders is the size of the IPv4 (without options) and UDP headers
// that carry a DHCP message.
const ipUDPHeaders = 20 + 8

// minMaxMessageSize is the DHCP message every client must accept (RFC 2131,
// section 2: an IP datagram of 576 octets). busybox udhcpc drops anything
// much larger as "oversized" unless it asked for more.
const minMaxMessageSize = 576 - ipUDPHeaders

// leaseReply is the OFFER or ACK (msgType) of the lease for req. A pod may
// have search domains enough to overflow what the client accepts; those that
// do not fit are left out, last first, as they matter least to the
// resolver. It reports how many it left out.
func (c Config) leaseReply(req *dhcpv4.DHCPv4, msgType dhcpv4.MessageType) (reply *dhcpv4.DHCPv4, droppedSearch int, err error) {
	limit := maxMessageSize(req)
	for n := len(c.SearchDomains); ; n-- {
		reply, err = dhcpv4.NewReplyFromRequest(req, c.leaseModifiers(msgType, c.SearchDomains[:n])...)
		if err != nil || n == 0 || len(reply.ToBytes()) <= limit {
			return reply, len(c.SearchDomains) - n, err
		}
	}
}

func (c Config) leaseModifiers(msgType dhcpv4.MessageType, search []string) []dhcpv4.Modifier {
	prefix := c.Address
	mods := []dhcpv4.Modifier{
		dhcpv4.WithMessageType(msgType),
		dhcpv4.WithYourIP(prefix.Addr().AsSlice()),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(c.ServerAddress.AsSlice())),
		dhcpv4.WithOption(dhcpv4.OptIPAddressLeaseTime(c.leaseTime())),
		dhcpv4.WithNetmask(net.CIDRMask(prefix.Bits(), 32)),
	}
	// A /31 (RFC 3021) or /32 has no broadcast address of its own.
	if prefix.Bits() <= 30 {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptBroadcastAddress(broadcastAddress(prefix).AsSlice())))
	}
	if c.Router.IsValid() {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptRouter(c.Router.AsSlice())))
	}
	if routes := c.classlessRoutes(); len(routes) > 0 {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptClasslessStaticRoute(routes...)))
	}
	if len(c.DNSServers) > 0 {
		servers := make([]net.IP, len(c.DNSServers))
		for i, s := range c.DNSServers {
			servers[i] = s.AsSlice()
		}
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptDNS(servers...)))
	}
	if len(search) > 0 {
		mods = append(mods,
			dhcpv4.WithOption(dhcpv4.OptDomainSearch(&rfc1035label.Labels{Labels: search})),
			// For clients without option 119, which then search their
			// domain name alone.
			dhcpv4.WithOption(dhcpv4.OptDomainName(search[0])))
	}
	if c.Hostname != "" {
		mods = append(mods, dhcpv4.WithOption(dhcpv4.OptHostName(c.Hostname)))
	}
	if c.MTU != 0 {
		mods = append(mods, dhcpv4.WithGeneric(dhcpv4.OptionInterfaceMTU, binary.BigEndian.AppendUint16(nil, c.MTU)))
	}
	return mods
}

// classlessRoutes is option 121: the configured routes and, as a client that
// understands 121 ignores the router option (RFC 3442), the default route
// through the router. On-link routes come first, as some clients install
// routes in order and a gateway must be reachable before a route through it.
func (c Config) classlessRoutes() []*dhcpv4.Route {
	if len(c.Routes) == 0 {
		return nil
	}
	var onLink, viaGateway []*dhcpv4.Route
	hasDefault := false
	for _, r := range c.Routes {
		hasDefault = hasDefault || r.Destination.Bits() == 0
		route := &dhcpv4.Route{
			Dest:   &net.IPNet{IP: r.Destination.Addr().AsSlice(), Mask: net.CIDRMask(r.Destination.Bits(), 32)},
			Router: net.IPv4zero.To4(),
		}
		if r.Gateway.IsValid() {
			route.Router = r.Gateway.AsSlice()
			viaGateway = append(viaGateway, route)
			continue
		}
		onLink = append(onLink, route)
	}
	if c.Router.IsValid() && !hasDefault {
		viaGateway = append(viaGateway, &dhcpv4.Route{
			Dest:   &net.IPNet{IP: net.IPv4zero.To4(), Mask: net.CIDRMask(0, 32)},
			Router: c.Router.AsSlice(),
		})
	}
	return append(onLink, viaGateway...)
}

// nak refuses req, saying why.
func (c Config) nak(req *dhcpv4.DHCPv4, reason string) (*dhcpv4.DHCPv4, error) {
	return dhcpv4.NewReplyFromRequest(req,
		dhcpv4.WithMessageType(dhcpv4.MessageTypeNak),
		dhcpv4.WithOption(dhcpv4.OptServerIdentifier(c.ServerAddress.AsSlice())),
		dhcpv4.WithOption(dhcpv4.OptMessage(reason)))
}

func (c Config) leaseTime() time.Duration {
	if c.LeaseTime == 0 {
		return InfiniteLease
	}
	return c.LeaseTime
}

func broadcastAddress(p netip.Prefix) netip.Addr {
	a := p.Addr().As4()
	host := ^binary.BigEndian.Uint32(net.CIDRMask(p.Bits(), 32))
	binary.BigEndian.PutUint32(a[:], binary.BigEndian.Uint32(a[:])|host)
	return netip.AddrFrom4(a)
}

// maxMessageSize is how large a reply to req may be: what the client says it
// accepts (option 57, counting the IP and UDP headers), at least 576 octets.
func maxMessageSize(req *dhcpv4.DHCPv4) int {
	if size, err := req.MaxMessageSize(); err == nil && int(size)-ipUDPHeaders > minMaxMessageSize {
		return int(size) - ipUDPHeaders
	}
	return minMaxMessageSize
}
