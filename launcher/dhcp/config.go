package dhcp

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/netip"
	"time"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// InfiniteLease is the lease time RFC 2131 reserves for "infinity"
// (0xffffffff seconds), the default (see the package documentation).
const InfiniteLease = time.Duration(math.MaxUint32) * time.Second

// minMTU is the smallest MTU option 26 allows (RFC 2132, section 5.1).
const minMTU = 68

// Config is the one lease a Server hands out and where it listens.
type Config struct {
	// ServerInterface is the interface the server listens on.
	ServerInterface string
	// ServerAddress is the server's own address on ServerInterface: its
	// identifier in every reply.
	ServerAddress netip.Addr
	// MAC is the guest NIC's hardware address, the only client served.
	MAC net.HardwareAddr
	// Address is the guest's address with its prefix length.
	Address netip.Prefix
	// Router is the default gateway; the zero Addr for none.
	Router netip.Addr
	// Routes are offered as classless static routes (option 121).
	Routes []Route
	// MTU of the guest's link; 0 leaves it to the guest.
	MTU uint16
	// DNSServers and SearchDomains are the pod's (ReadResolvConf).
	DNSServers    []netip.Addr
	SearchDomains []string
	// Hostname is the guest's host name; empty for none.
	Hostname string
	// LeaseTime is the lease's duration; 0 means InfiniteLease.
	LeaseTime time.Duration
	// OnAck, when set, is called after each acknowledgement sent to the
	// guest, with its address: the launcher reports the lease taken.
	OnAck func(netip.Addr)
}

// Route is a classless static route.
type Route struct {
	Destination netip.Prefix
	// Gateway is the next hop; the zero Addr for an on-link route.
	Gateway netip.Addr
}

// NewConfig is the Config for a NIC that virt-handler prepared, with the
// pod's DNS servers and search domains and the guest's host name.
func NewConfig(nic *apiv1.InterfaceNetwork, dnsServers []netip.Addr, searchDomains []string, hostname string) (Config, error) {
	lease := nic.GetDhcp()
	if lease == nil {
		return Config{}, fmt.Errorf("interface %q: no DHCP lease", nic.GetName())
	}
	cfg := Config{
		ServerInterface: lease.GetServerInterface(),
		DNSServers:      dnsServers,
		SearchDomains:   searchDomains,
		Hostname:        hostname,
	}
	var errs []error
	var err error
	if cfg.MAC, err = net.ParseMAC(nic.GetMacAddress()); err != nil {
		errs = append(errs, fmt.Errorf("MAC address: %w", err))
	}
	if nic.GetMtu() > math.MaxUint16 {
		errs = append(errs, fmt.Errorf("MTU %d: more than %d", nic.GetMtu(), math.MaxUint16))
	} else {
		cfg.MTU = uint16(nic.GetMtu())
	}
	if cfg.ServerAddress, err = netip.ParseAddr(lease.GetServerAddress()); err != nil {
		errs = append(errs, fmt.Errorf("server address: %w", err))
	}
	if cfg.Address, err = netip.ParsePrefix(lease.GetAddress()); err != nil {
		errs = append(errs, fmt.Errorf("address: %w", err))
	}
	if lease.GetRouter() != "" {
		if cfg.Router, err = netip.ParseAddr(lease.GetRouter()); err != nil {
			errs = append(errs, fmt.Errorf("router: %w", err))
		}
	}
	for _, r := range lease.GetRoutes() {
		route, err := parseRoute(r)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		cfg.Routes = append(cfg.Routes, route)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, fmt.Errorf("interface %q: %w", nic.GetName(), err)
	}
	if err := cfg.Validate(); err != nil {
		return Config{}, fmt.Errorf("interface %q: %w", nic.GetName(), err)
	}
	return cfg, nil
}

func parseRoute(r *apiv1.Route) (Route, error) {
	dst, err := netip.ParsePrefix(r.GetDestination())
	if err != nil {
		return Route{}, fmt.Errorf("route destination: %w", err)
	}
	route := Route{Destination: dst.Masked()}
	if r.GetGateway() != "" {
		if route.Gateway, err = netip.ParseAddr(r.GetGateway()); err != nil {
			return Route{}, fmt.Errorf("route to %s: gateway: %w", dst, err)
		}
	}
	return route, nil
}

// Validate reports what makes c unusable: what is missing, and addresses
// that are not IPv4.
func (c Config) Validate() error {
	var errs []error
	if c.ServerInterface == "" {
		errs = append(errs, errors.New("no server interface"))
	}
	if !c.ServerAddress.Is4() {
		errs = append(errs, fmt.Errorf("server address %q is not IPv4", c.ServerAddress))
	}
	if len(c.MAC) != 6 {
		errs = append(errs, fmt.Errorf("MAC address %q is not an Ethernet address", c.MAC))
	}
	switch {
	case !c.Address.IsValid() || !c.Address.Addr().Is4():
		errs = append(errs, fmt.Errorf("address %q is not IPv4", c.Address))
	case c.Address.Bits() == 0:
		errs = append(errs, fmt.Errorf("address %s has no prefix length", c.Address))
	case c.Address.Addr() == c.ServerAddress:
		errs = append(errs, fmt.Errorf("address %s is the server's", c.Address.Addr()))
	}
	if c.Router.IsValid() && !c.Router.Is4() {
		errs = append(errs, fmt.Errorf("router %s is not IPv4", c.Router))
	}
	for _, r := range c.Routes {
		if !r.Destination.IsValid() || !r.Destination.Addr().Is4() || (r.Gateway.IsValid() && !r.Gateway.Is4()) {
			errs = append(errs, fmt.Errorf("route to %s via %s is not IPv4", r.Destination, r.Gateway))
		}
	}
	if c.MTU != 0 && c.MTU < minMTU {
		errs = append(errs, fmt.Errorf("MTU %d: less than %d", c.MTU, minMTU))
	}
	for _, s := range c.DNSServers {
		if !s.Is4() {
			errs = append(errs, fmt.Errorf("DNS server %s is not IPv4", s))
		}
	}
	if c.LeaseTime < 0 || c.LeaseTime > InfiniteLease {
		errs = append(errs, fmt.Errorf("lease time %s: not between 0 and %s", c.LeaseTime, InfiniteLease))
	}
	return errors.Join(errs...)
}
