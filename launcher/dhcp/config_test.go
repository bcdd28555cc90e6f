package dhcp

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

var (
	guestMAC      = net.HardwareAddr{0x52, 0x54, 0x00, 0xc0, 0xff, 0x01}
	podDNS        = []netip.Addr{netip.MustParseAddr("198.18.0.10"), netip.MustParseAddr("198.18.0.11")}
	podSearch     = []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"}
	guestHostname = "testvmi"
)

// netipComparers let cmp compare netip values, whose fields are unexported.
var netipComparers = cmp.Options{
	cmp.Comparer(func(a, b netip.Addr) bool { return a == b }),
	cmp.Comparer(func(a, b netip.Prefix) bool { return a == b }),
}

func podAddressNIC() *apiv1.InterfaceNetwork {
	return &apiv1.InterfaceNetwork{
		Name:       "default",
		TapDevice:  "tap0",
		MacAddress: guestMAC.String(),
		Mtu:        1400,
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: "k6t-eth0",
			ServerAddress:   "169.254.75.10",
			Address:         "198.18.7.20/24",
			Router:          "198.18.7.1",
			Routes: []*apiv1.Route{
				{Destination: "198.19.0.0/16", Gateway: "198.18.7.254"},
				{Destination: "169.254.75.10/32"},
			},
		},
	}
}

func TestNewConfig(t *testing.T) {
	got, err := NewConfig(podAddressNIC(), podDNS, podSearch, guestHostname)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	want := Config{
		ServerInterface: "k6t-eth0",
		ServerAddress:   netip.MustParseAddr("169.254.75.10"),
		MAC:             guestMAC,
		Address:         netip.MustParsePrefix("198.18.7.20/24"),
		Router:          netip.MustParseAddr("198.18.7.1"),
		Routes: []Route{
			{Destination: netip.MustParsePrefix("198.19.0.0/16"), Gateway: netip.MustParseAddr("198.18.7.254")},
			{Destination: netip.MustParsePrefix("169.254.75.10/32")},
		},
		MTU:           1400,
		DNSServers:    podDNS,
		SearchDomains: podSearch,
		Hostname:      guestHostname,
	}
	if diff := cmp.Diff(want, got, netipComparers); diff != "" {
		t.Errorf("NewConfig (-want +got):\n%s", diff)
	}
	if got.leaseTime() != InfiniteLease {
		t.Errorf("lease time: got %s, want InfiniteLease", got.leaseTime())
	}
}

func TestNewConfigInvalid(t *testing.T) {
	tests := []struct {
		name    string
		modify  func(*apiv1.InterfaceNetwork)
		dns     []netip.Addr
		wantErr string
	}{
		{"no lease", func(n *apiv1.InterfaceNetwork) { n.Dhcp = nil }, nil, `interface "default": no DHCP lease`},
		{"no server interface", func(n *apiv1.InterfaceNetwork) { n.Dhcp.ServerInterface = "" }, nil, "no server interface"},
		{"bad MAC", func(n *apiv1.InterfaceNetwork) { n.MacAddress = "52:54:00" }, nil, "MAC address"},
		{"InfiniBand MAC", func(n *apiv1.InterfaceNetwork) {
			n.MacAddress = "00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"
		}, nil, "not an Ethernet address"},
		{"server address with a prefix", func(n *apiv1.InterfaceNetwork) { n.Dhcp.ServerAddress = "169.254.75.10/32" }, nil, "server address"},
		{"address without a prefix", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Address = "198.18.7.20" }, nil, "address"},
		{"IPv6 address", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Address = "2001:db8::2/64" }, nil, `address "2001:db8::2/64" is not IPv4`},
		{"address /0", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Address = "198.18.7.20/0" }, nil, "no prefix length"},
		{"address is the server's", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Address = "169.254.75.10/16" }, nil, "is the server's"},
		{"bad router", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Router = "198.18.7" }, nil, "router"},
		{"IPv6 router", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Router = "fe80::1" }, nil, "router fe80::1 is not IPv4"},
		{"bad route", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Routes[0].Destination = "198.19.0.0" }, nil, "route destination"},
		{"bad gateway", func(n *apiv1.InterfaceNetwork) { n.Dhcp.Routes[0].Gateway = "gw" }, nil, "route to 198.19.0.0/16: gateway"},
		{"MTU too small", func(n *apiv1.InterfaceNetwork) { n.Mtu = 67 }, nil, "MTU 67: less than 68"},
		{"MTU too large", func(n *apiv1.InterfaceNetwork) { n.Mtu = 65536 }, nil, "MTU 65536: more than 65535"},
		{"IPv6 DNS server", func(*apiv1.InterfaceNetwork) {}, []netip.Addr{netip.MustParseAddr("2001:db8::53")}, "DNS server 2001:db8::53 is not IPv4"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nic := podAddressNIC()
			tt.modify(nic)
			_, err := NewConfig(nic, tt.dns, nil, "")
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("NewConfig: got error %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}
