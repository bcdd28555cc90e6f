package network

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	"kubevirt.dev/virt/node/network/netutil"
)

// requireRoot fails a test that needs network namespaces when it cannot
// have them, rather than pass it without testing anything.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces, veth pairs, a bridge and a host route, and binds port 67: run it as root")
	}
}

// testNetns is a new namespace closed when the test ends.
func testNetns(t *testing.T) netns.NsHandle {
	t.Helper()
	ns, err := newNetns()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// newTestTapNet builds the plain-tap network and checks, when the test
// ends, that closing it left nothing on the host.
func newTestTapNet(t *testing.T) *tapNet {
	t.Helper()
	n, err := newTapNet()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.close(); err != nil {
			t.Errorf("close: %v", err)
		}
		requireNothingLeft(t)
	})
	return n
}

// requireNothingLeft checks the host has neither the veth nor a route to
// the guests' network.
func requireNothingLeft(t *testing.T) {
	t.Helper()
	if _, err := netlink.LinkByName(HostLink); !errors.As(err, &netlink.LinkNotFoundError{}) {
		t.Errorf("%s is still on the host (lookup: %v)", HostLink, err)
	}
	routes, err := netlink.RouteGet(GuestAddr.Addr().AsSlice())
	if err != nil {
		return // no route at all: the host has no default route
	}
	for _, r := range routes {
		if r.Gw != nil && r.Gw.Equal(uplinkAddr.Addr().AsSlice()) {
			t.Errorf("the host still routes %s via %s", GuestAddr.Addr(), r.Gw)
		}
	}
}

// guestPort stands in for the tap: a veth port of the bridge whose peer is
// the "guest's" NIC, eth0 with guestMAC, in a namespace of its own.
func guestPort(t *testing.T, n *tapNet) netns.NsHandle {
	t.Helper()
	guest := testNetns(t)
	mac, err := net.ParseMAC(guestMAC)
	if err != nil {
		t.Fatal(err)
	}
	port := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: tapName, MTU: linkMTU, MasterIndex: n.bridge.Attrs().Index},
		PeerName:         "eth0",
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(guest),
	}
	if err := n.h.LinkAdd(port); err != nil {
		t.Fatalf("add the guest's port: %v", err)
	}
	if err := n.h.LinkSetUp(port); err != nil {
		t.Fatal(err)
	}
	h, err := netlink.NewHandleAt(guest)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, name := range []string{"lo", "eth0"} {
		l, err := h.LinkByName(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.LinkSetUp(l); err != nil {
			t.Fatal(err)
		}
	}
	return guest
}

// configure gives the guest's NIC its lease as a DHCP client would.
func configure(t *testing.T, guest netns.NsHandle, addr netip.Prefix, router netip.Addr) {
	t.Helper()
	h, err := netlink.NewHandleAt(guest)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	eth0, err := h.LinkByName("eth0")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(addr)}); err != nil {
		t.Fatal(err)
	}
	if err := h.RouteAdd(&netlink.Route{LinkIndex: eth0.Attrs().Index, Gw: router.AsSlice()}); err != nil {
		t.Fatal(err)
	}
}

// The host reaches the guest's address by routing alone: the guest takes
// its lease from the launcher's DHCP server on the bridge, serves HTTP, and
// sees the host's own address as the client's (nothing is translated).
// Closing the network leaves nothing on the host.
func TestTapNetRoutesTheHostToTheGuest(t *testing.T) {
	requireRoot(t)
	n := newTestTapNet(t)
	guest := guestPort(t, n)
	if err := n.serveDHCP(t.Context(), guestMAC, rawName); err != nil {
		t.Fatal(err)
	}

	var lease *nclient4.Lease
	err := netutil.Do(guest, func() error {
		c, err := nclient4.New("eth0", nclient4.WithTimeout(time.Second), nclient4.WithRetry(10))
		if err != nil {
			return err
		}
		defer c.Close()
		lease, err = c.Request(t.Context())
		return err
	})
	if err != nil {
		t.Fatalf("DHCP exchange: %v", err)
	}
	ack := lease.ACK
	mask, _ := net.IPMask(ack.SubnetMask()).Size()
	if !ack.YourIPAddr.Equal(GuestAddr.Addr().AsSlice()) || mask != GuestAddr.Bits() || len(ack.Router()) != 1 || !ack.Router()[0].Equal(gatewayAddr.Addr().AsSlice()) || ack.HostName() != rawName {
		t.Fatalf("lease %s/%d router %v host name %q; want %s, router %s, %s", ack.YourIPAddr, mask, ack.Router(), ack.HostName(), GuestAddr, gatewayAddr.Addr(), rawName)
	}
	if !n.leased() {
		t.Error("the server does not say the guest took its lease")
	}
	configure(t, guest, GuestAddr, gatewayAddr.Addr())

	const size = 4 << 20
	var mu sync.Mutex
	var clients []string
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		clients = append(clients, r.RemoteAddr)
		mu.Unlock()
		_, _ = w.Write([]byte("VIRT-GUEST-HTTP net-raw\n"))
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(make([]byte, size)) })
	srv := httptest.NewUnstartedServer(mux)
	if err := netutil.Do(guest, func() error {
		l, err := net.Listen("tcp4", net.JoinHostPort(GuestAddr.Addr().String(), "80"))
		srv.Listener = l
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Close)

	addr := net.JoinHostPort(GuestAddr.Addr().String(), "80")
	if err := waitHTTP(t.Context(), addr, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := measure(t.Context(), []target{{Raw, addr}}, 2, 5, size)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := res.Row(Raw); len(r.MBps) != 2 || r.Requests != 5 || r.MedianMBps <= 0 {
		t.Errorf("measured %+v, want 2 downloads and 5 requests", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(clients) < 5 {
		t.Fatalf("the guest saw %d requests, want at least 5", len(clients))
	}
	for _, c := range clients {
		if host, _, _ := net.SplitHostPort(c); host != hostAddr.Addr().String() {
			t.Errorf("the guest saw a client at %s, want the host's %s: nothing may translate", c, hostAddr.Addr())
		}
	}
}

// A host that already has an address or a route in the network's ranges
// is refused.
func TestCheckFree(t *testing.T) {
	requireRoot(t)
	nets := []netip.Prefix{hostAddr.Masked(), GuestAddr.Masked()}
	for _, tc := range []struct {
		name  string
		addr  string
		route string
		err   string
	}{
		{name: "elsewhere in the benchmarking block", addr: "198.18.5.1/24", route: "198.19.0.0/24"},
		{name: "an address in the guests' network", addr: "198.19.254.9/24", err: "the host has 198.19.254.0/24"},
		{name: "an address covering the veth", addr: "198.19.253.1/24", err: "the host has 198.19.253.0/24"},
		{name: "a route into the guests' network", addr: "198.18.5.1/24", route: "198.19.254.128/25", err: "the host routes 198.19.254.128/25"},
		{name: "a route covering both", addr: "198.18.5.1/24", route: "198.19.0.0/16", err: "the host routes 198.19.0.0/16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns := testNetns(t)
			h, err := netlink.NewHandleAt(ns)
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			// A veth pair, both ends here: this kernel may lack the dummy driver.
			dummy := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: "other0"}, PeerName: "other1"}
			if err := h.LinkAdd(dummy); err != nil {
				t.Fatal(err)
			}
			if err := h.LinkSetUp(dummy); err != nil {
				t.Fatal(err)
			}
			if err := h.AddrAdd(dummy, &netlink.Addr{IPNet: ipNet(netip.MustParsePrefix(tc.addr))}); err != nil {
				t.Fatal(err)
			}
			if tc.route != "" {
				r := &netlink.Route{LinkIndex: dummy.Index, Dst: ipNet(netip.MustParsePrefix(tc.route)), Gw: net.ParseIP("198.18.5.2")}
				if err := h.RouteAdd(r); err != nil {
					t.Fatal(err)
				}
			}
			err = checkFree(h, nets...)
			if tc.err == "" && err != nil {
				t.Fatalf("checkFree: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("checkFree = %v, want an error saying %q", err, tc.err)
			}
		})
	}
}
