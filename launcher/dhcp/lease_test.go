package dhcp

import (
	"fmt"
	"net"
	"net/netip"
	"testing"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"
)

func testConfig(t *testing.T) Config {
	t.Helper()
	cfg, err := NewConfig(podAddressNIC(), podDNS, podSearch, guestHostname)
	if err != nil {
		t.Fatalf("NewConfig: %v", err)
	}
	return cfg
}

func discover(t *testing.T, mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
	t.Helper()
	req, err := dhcpv4.NewDiscovery(guestMAC, mods...)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestLeaseReplyFitsTheClient(t *testing.T) {
	cfg := testConfig(t)
	cfg.SearchDomains = nil
	for i := range 20 {
		cfg.SearchDomains = append(cfg.SearchDomains, fmt.Sprintf("team-%02d.corp-%02d.example.test", i, i))
	}
	tests := []struct {
		name        string
		req         *dhcpv4.DHCPv4
		wantLimit   int
		wantDropped bool
	}{
		{"no maximum message size: 576 octets", discover(t), 548, true},
		{"option 57 of 1500", discover(t, dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(1500))), 1472, false},
		{"option 57 below 576 counts as 576", discover(t, dhcpv4.WithOption(dhcpv4.OptMaxMessageSize(300))), 548, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, dropped, err := cfg.leaseReply(tt.req, dhcpv4.MessageTypeOffer)
			if err != nil {
				t.Fatal(err)
			}
			if size := len(reply.ToBytes()); size > tt.wantLimit {
				t.Errorf("reply of %d octets, want at most %d", size, tt.wantLimit)
			}
			if (dropped > 0) != tt.wantDropped {
				t.Errorf("dropped %d search domains, want some: %t", dropped, tt.wantDropped)
			}
			got := reply.DomainSearch().Labels
			if diff := cmp.Diff(cfg.SearchDomains[:len(cfg.SearchDomains)-dropped], got); diff != "" {
				t.Errorf("the search list is not the configured one less its last %d (-want +got):\n%s", dropped, diff)
			}
			if reply.DomainName() != cfg.SearchDomains[0] || reply.HostName() != guestHostname {
				t.Errorf("domain name %q and host name %q left out with the search domains", reply.DomainName(), reply.HostName())
			}
		})
	}
}

func TestClasslessRoutes(t *testing.T) {
	route := func(dst, gw string) Route {
		r := Route{Destination: netip.MustParsePrefix(dst)}
		if gw != "" {
			r.Gateway = netip.MustParseAddr(gw)
		}
		return r
	}
	tests := []struct {
		name   string
		router string
		routes []Route
		want   []string
	}{
		{name: "no routes: no option 121, the router in option 3 alone", router: "198.18.7.1"},
		{
			name:   "a default route of its own is not doubled",
			router: "198.18.7.1",
			routes: []Route{route("0.0.0.0/0", "198.18.7.254"), route("198.18.7.254/32", "")},
			want:   []string{"198.18.7.254/32 via 0.0.0.0", "0.0.0.0/0 via 198.18.7.254"},
		},
		{
			name:   "no router: no default route",
			routes: []Route{route("198.19.0.0/16", "198.18.7.254")},
			want:   []string{"198.19.0.0/16 via 198.18.7.254"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Router = netip.Addr{}
			if tt.router != "" {
				cfg.Router = netip.MustParseAddr(tt.router)
			}
			cfg.Routes = tt.routes
			var got []string
			for _, r := range cfg.classlessRoutes() {
				got = append(got, r.Dest.String()+" via "+r.Router.String())
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("option 121 (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBroadcastAddressOption(t *testing.T) {
	for prefix, want := range map[string]string{
		"198.18.7.20/24": "198.18.7.255",
		"198.18.7.20/30": "198.18.7.23",
		"198.18.7.20/31": "",
		"198.18.7.20/32": "",
	} {
		cfg := testConfig(t)
		cfg.Address = netip.MustParsePrefix(prefix)
		reply, _, err := cfg.leaseReply(discover(t), dhcpv4.MessageTypeOffer)
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if b := reply.BroadcastAddress(); b != nil {
			got = b.String()
		}
		if got != want {
			t.Errorf("%s: broadcast address %q, want %q", prefix, got, want)
		}
	}
}

// TestAnswer covers the requests of RFC 2131's client states that the
// real-client tests do not reach.
func TestAnswer(t *testing.T) {
	srv, err := NewServer(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	lease := net.ParseIP("198.18.7.20")
	request := func(mods ...dhcpv4.Modifier) *dhcpv4.DHCPv4 {
		return discover(t, append([]dhcpv4.Modifier{dhcpv4.WithMessageType(dhcpv4.MessageTypeRequest)}, mods...)...)
	}
	tests := []struct {
		name    string
		req     *dhcpv4.DHCPv4
		want    string // message type, "" for silence
		wantDst string
	}{
		{"INIT-REBOOT for the lease", request(dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(lease))), "ACK", "255.255.255.255:68"},
		{"INIT-REBOOT for another address", request(dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP("198.18.7.21")))), "NAK", "255.255.255.255:68"},
		{"REBINDING with the lease", request(dhcpv4.WithClientIP(lease)), "ACK", "198.18.7.20:68"},
		{"REBINDING with another address", request(dhcpv4.WithClientIP(net.ParseIP("198.18.7.21"))), "NAK", "255.255.255.255:68"},
		{"DECLINE", discover(t, dhcpv4.WithMessageType(dhcpv4.MessageTypeDecline)), "", ""},
		{"RELEASE", discover(t, dhcpv4.WithMessageType(dhcpv4.MessageTypeRelease), dhcpv4.WithClientIP(lease)), "", ""},
		{"INFORM", discover(t, dhcpv4.WithMessageType(dhcpv4.MessageTypeInform), dhcpv4.WithClientIP(lease)), "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reply, err := srv.answer(logr.Discard(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			got, gotDst := "", ""
			if reply != nil {
				got = reply.MessageType().String()
				gotDst = destination(tt.req, reply).String()
			}
			if got != tt.want || gotDst != tt.wantDst {
				t.Errorf("answer: %q to %q, want %q to %q", got, gotDst, tt.want, tt.wantDst)
			}
		})
	}
}
