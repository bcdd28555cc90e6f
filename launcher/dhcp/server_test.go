package dhcp

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/insomniacslk/dhcp/dhcpv4"
	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netns"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

var otherMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0xc0, 0xff, 0x02}

func masqueradeNIC() *apiv1.InterfaceNetwork {
	return &apiv1.InterfaceNetwork{
		Name:       "default",
		TapDevice:  "tap0",
		MacAddress: guestMAC.String(),
		Mtu:        1400,
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: serverBridge,
			ServerAddress:   "198.19.255.1",
			Address:         "198.19.255.2/24",
			Router:          "198.19.255.1",
		},
	}
}

// leaseView is what a guest learns from an OFFER or ACK.
type leaseView struct {
	Type       string
	Address    string
	Mask       string
	Broadcast  string
	Routers    []string
	Routes     []string // option 121
	DNS        []string
	Search     []string
	DomainName string
	Hostname   string
	MTU        int
	ServerID   string
	LeaseTime  time.Duration
}

func viewLease(m *dhcpv4.DHCPv4) leaseView {
	v := leaseView{
		Type:       m.MessageType().String(),
		Address:    m.YourIPAddr.String(),
		DomainName: m.DomainName(),
		Hostname:   m.HostName(),
		LeaseTime:  m.IPAddressLeaseTime(0),
	}
	if mask := m.SubnetMask(); mask != nil {
		v.Mask = net.IP(mask).String()
	}
	if b := m.BroadcastAddress(); b != nil {
		v.Broadcast = b.String()
	}
	if id := m.ServerIdentifier(); id != nil {
		v.ServerID = id.String()
	}
	for _, r := range m.Router() {
		v.Routers = append(v.Routers, r.String())
	}
	for _, r := range m.ClasslessStaticRoute() {
		v.Routes = append(v.Routes, r.Dest.String()+" via "+r.Router.String())
	}
	for _, s := range m.DNS() {
		v.DNS = append(v.DNS, s.String())
	}
	if labels := m.DomainSearch(); labels != nil {
		v.Search = labels.Labels
	}
	if mtu := m.GetOneOption(dhcpv4.OptionInterfaceMTU); len(mtu) == 2 {
		v.MTU = int(binary.BigEndian.Uint16(mtu))
	}
	return v
}

// newClient is a DHCP client on the guest's NIC; by default it asks with
// the NIC's MAC.
func newClient(t *testing.T, guest netns.NsHandle, opts ...nclient4.ClientOpt) *nclient4.Client {
	t.Helper()
	var client *nclient4.Client
	err := inNetns(guest, func() error {
		var err error
		client, err = nclient4.New(guestLink, opts...)
		return err
	})
	if err != nil {
		t.Fatalf("DHCP client on %s: %v", guestLink, err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func TestServer(t *testing.T) {
	requireRoot(t)
	infinite := time.Duration(0xffffffff) * time.Second
	tests := []struct {
		name       string
		serverAddr netip.Prefix
		nic        *apiv1.InterfaceNetwork
		want       leaseView
	}{
		{
			name:       "masquerade: a private subnet, the server its gateway",
			serverAddr: netip.MustParsePrefix("198.19.255.1/24"),
			nic:        masqueradeNIC(),
			want: leaseView{
				Address:    "198.19.255.2",
				Mask:       "255.255.255.0",
				Broadcast:  "198.19.255.255",
				Routers:    []string{"198.19.255.1"},
				DNS:        []string{"198.18.0.10", "198.18.0.11"},
				Search:     []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"},
				DomainName: "default.svc.cluster.local",
				Hostname:   "testvmi",
				MTU:        1400,
				ServerID:   "198.19.255.1",
				LeaseTime:  infinite,
			},
		},
		{
			name:       "the pod's address from a link-local server, with routes",
			serverAddr: netip.MustParsePrefix("169.254.75.10/32"),
			nic:        podAddressNIC(),
			want: leaseView{
				Address:   "198.18.7.20",
				Mask:      "255.255.255.0",
				Broadcast: "198.18.7.255",
				Routers:   []string{"198.18.7.1"},
				// The default route too, as a client that reads option
				// 121 ignores option 3; on-link routes first.
				Routes: []string{
					"169.254.75.10/32 via 0.0.0.0",
					"198.19.0.0/16 via 198.18.7.254",
					"0.0.0.0/0 via 198.18.7.1",
				},
				DNS:        []string{"198.18.0.10", "198.18.0.11"},
				Search:     []string{"default.svc.cluster.local", "svc.cluster.local", "cluster.local"},
				DomainName: "default.svc.cluster.local",
				Hostname:   "testvmi",
				MTU:        1400,
				ServerID:   "169.254.75.10",
				LeaseTime:  infinite,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := NewConfig(tt.nic, podDNS, podSearch, guestHostname)
			if err != nil {
				t.Fatalf("NewConfig: %v", err)
			}
			acks := make(chan netip.Addr, 16)
			cfg.OnAck = func(a netip.Addr) { acks <- a }
			srv, err := NewServer(cfg)
			if err != nil {
				t.Fatalf("NewServer: %v", err)
			}
			if addr, ok := srv.Acked(); ok {
				t.Fatalf("Acked before any request: %s", addr)
			}
			l := newLink(t, tt.serverAddr, guestMAC)
			l.serve(t, srv)
			link := sniff(t, l.guest, guestLink)
			broadcast := netip.MustParseAddr("255.255.255.255")
			guestAddr := netip.MustParseAddr(tt.want.Address)
			serverID := net.ParseIP(tt.want.ServerID)

			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			// Retries cover the server's start: Serve gives no signal
			// when it listens.
			client := newClient(t, l.guest, nclient4.WithTimeout(time.Second), nclient4.WithRetry(10))
			lease, err := client.Request(ctx)
			if err != nil {
				t.Fatalf("DISCOVER, OFFER, REQUEST, ACK: %v", err)
			}
			for _, m := range []*dhcpv4.DHCPv4{lease.Offer, lease.ACK} {
				want := tt.want
				want.Type = m.MessageType().String()
				if diff := cmp.Diff(want, viewLease(m)); diff != "" {
					t.Errorf("%s (-want +got):\n%s", want.Type, diff)
				}
				if dst := link.destination(t, m.TransactionID, m.MessageType()); dst != broadcast {
					t.Errorf("%s sent to %s, want %s: the guest has no address yet", want.Type, dst, broadcast)
				}
			}
			if lease.Offer.MessageType() != dhcpv4.MessageTypeOffer || lease.ACK.MessageType() != dhcpv4.MessageTypeAck {
				t.Errorf("got %s and %s, want an OFFER and an ACK", lease.Offer.MessageType(), lease.ACK.MessageType())
			}
			select {
			case a := <-acks:
				if a != guestAddr {
					t.Errorf("OnAck called with %s, want %s", a, guestAddr)
				}
			case <-time.After(10 * time.Second):
				// It runs right after the send, maybe after the client read;
				// Acked holds from then on.
				t.Error("OnAck was not called for the ACK the client received")
			}
			if addr, ok := srv.Acked(); !ok || addr != guestAddr {
				t.Errorf("Acked: got %s, %t; want %s, true", addr, ok, guestAddr)
			}

			// Clients that must hear nothing give up after a second.
			quiet := []nclient4.ClientOpt{nclient4.WithTimeout(500 * time.Millisecond), nclient4.WithRetry(2)}

			t.Run("another MAC gets nothing", func(t *testing.T) {
				other := newClient(t, l.guest, append(quiet, nclient4.WithHWAddr(otherMAC))...)
				if offer, err := other.DiscoverOffer(ctx); !errors.Is(err, nclient4.ErrNoResponse) {
					t.Errorf("DISCOVER from %s: got %v, %v; want no response", otherMAC, offer, err)
				}
				// A REQUEST for the guest's own lease is no better.
				if _, err := other.RequestFromOffer(ctx, lease.Offer, dhcpv4.WithHwAddr(otherMAC)); !errors.Is(err, nclient4.ErrNoResponse) {
					t.Errorf("REQUEST from %s: got %v, want no response", otherMAC, err)
				}
			})

			t.Run("a request for another address gets a NAK", func(t *testing.T) {
				offer, err := client.DiscoverOffer(ctx)
				if err != nil {
					t.Fatalf("DISCOVER: %v", err)
				}
				_, err = client.RequestFromOffer(ctx, offer, dhcpv4.WithOption(dhcpv4.OptRequestedIPAddress(net.ParseIP("198.18.7.99"))))
				var nak *nclient4.ErrNak
				if !errors.As(err, &nak) {
					t.Fatalf("REQUEST for 198.18.7.99: got %v, want a NAK", err)
				}
				if id := nak.Nak.ServerIdentifier(); !id.Equal(serverID) {
					t.Errorf("NAK server identifier: got %s, want %s", id, serverID)
				}
				if dst := link.destination(t, nak.Nak.TransactionID, dhcpv4.MessageTypeNak); dst != broadcast {
					t.Errorf("NAK sent to %s, want %s", dst, broadcast)
				}
			})

			t.Run("a request to another server gets nothing", func(t *testing.T) {
				other := newClient(t, l.guest, quiet...)
				elsewhere := dhcpv4.WithOption(dhcpv4.OptServerIdentifier(net.ParseIP("198.19.255.99")))
				if _, err := other.RequestFromOffer(ctx, lease.Offer, elsewhere); !errors.Is(err, nclient4.ErrNoResponse) {
					t.Errorf("REQUEST naming server 198.19.255.99: got %v, want no response", err)
				}
			})

			t.Run("a configured guest renews by unicast", func(t *testing.T) {
				l.addGuestAddress(t, netip.MustParsePrefix(tt.nic.GetDhcp().GetAddress()))
				renewed, err := client.Renew(ctx, lease)
				if err != nil {
					t.Fatalf("renew: %v", err)
				}
				want := tt.want
				want.Type = dhcpv4.MessageTypeAck.String()
				if diff := cmp.Diff(want, viewLease(renewed.ACK)); diff != "" {
					t.Errorf("renewal ACK (-want +got):\n%s", diff)
				}
				if dst := link.destination(t, renewed.ACK.TransactionID, dhcpv4.MessageTypeAck); dst != guestAddr {
					t.Errorf("renewal ACK sent to %s, want the guest's %s", dst, guestAddr)
				}
			})

			if addr, ok := srv.Acked(); !ok || addr != guestAddr {
				t.Errorf("Acked at the end: got %s, %t; want %s, true", addr, ok, guestAddr)
			}
		})
	}
}
