package rawguest

import (
	"io"
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

// testAddresses are network's (part 6) on a link of the tests' own: should
// both run at once, the second fails on the addresses in use rather than
// remove the other's veth.
var testAddresses = Addresses{
	HostLink: "vb-test0",
	Host:     netip.MustParsePrefix("198.19.253.1/30"),
	Uplink:   netip.MustParsePrefix("198.19.253.2/30"),
	Gateway:  netip.MustParsePrefix("198.19.254.1/24"),
	Guest:    netip.MustParsePrefix("198.19.254.2/24"),
}

// Names the tests' guest NIC uses.
const (
	testMAC      = "02:62:65:6e:00:09"
	testHostname = "rawguest-test"
)

// newTestNet builds the plain-tap network and checks, when the test ends,
// that closing it left nothing on the host.
func newTestNet(t *testing.T) *Net {
	t.Helper()
	n, err := NewNet(testAddresses)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
		if err := Left(testAddresses); err != nil {
			t.Error(err)
		}
	})
	return n
}

// guestPort stands in for the tap: a veth port of the bridge whose peer is
// the "guest's" NIC, eth0 with testMAC, in a namespace of its own.
func guestPort(t *testing.T, n *Net) netns.NsHandle {
	t.Helper()
	guest := testNetns(t)
	mac, err := net.ParseMAC(testMAC)
	if err != nil {
		t.Fatal(err)
	}
	port := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: TapName, MTU: LinkMTU, MasterIndex: n.bridge.Attrs().Index},
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
func TestNetRoutesTheHostToTheGuest(t *testing.T) {
	requireRoot(t)
	n := newTestNet(t)
	a := n.Addresses()
	guest := guestPort(t, n)
	if err := n.ServeDHCP(t.Context(), testMAC, testHostname); err != nil {
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
	if !ack.YourIPAddr.Equal(a.Guest.Addr().AsSlice()) || mask != a.Guest.Bits() || len(ack.Router()) != 1 || !ack.Router()[0].Equal(a.Gateway.Addr().AsSlice()) || ack.HostName() != testHostname {
		t.Fatalf("lease %s/%d router %v host name %q; want %s, router %s, %s", ack.YourIPAddr, mask, ack.Router(), ack.HostName(), a.Guest, a.Gateway.Addr(), testHostname)
	}
	// The server records the lease once it has sent the ACK, which the
	// guest may read first: wait for it, with a deadline.
	for deadline := time.Now().Add(5 * time.Second); !n.Leased(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Error("the server does not say the guest took its lease")
			break
		}
	}
	configure(t, guest, a.Guest, a.Gateway.Addr())

	var mu sync.Mutex
	var clients []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		clients = append(clients, r.RemoteAddr)
		mu.Unlock()
		_, _ = w.Write([]byte("hello from the guest\n"))
	}))
	if err := netutil.Do(guest, func() error {
		l, err := net.Listen("tcp4", net.JoinHostPort(a.Guest.Addr().String(), "80"))
		srv.Listener = l
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv.Start()
	t.Cleanup(srv.Close)

	url := "http://" + net.JoinHostPort(a.Guest.Addr().String(), "80") + "/"
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	var body []byte
	for i := range 3 {
		resp, err := client.Get(url)
		if err != nil {
			t.Fatalf("GET %d from the host: %v", i+1, err)
		}
		body, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %d from the host: %s, %v", i+1, resp.Status, err)
		}
	}
	if string(body) != "hello from the guest\n" {
		t.Errorf("the guest answered %q", body)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(clients) != 3 {
		t.Fatalf("the guest saw %d requests, want 3", len(clients))
	}
	for _, c := range clients {
		if host, _, _ := net.SplitHostPort(c); host != a.Host.Addr().String() {
			t.Errorf("the guest saw a client at %s, want the host's %s: nothing may translate", c, a.Host.Addr())
		}
	}
}

// A host that already has an address or a route in the network's ranges
// is refused.
func TestCheckFree(t *testing.T) {
	requireRoot(t)
	nets := []netip.Prefix{testAddresses.Host.Masked(), testAddresses.Guest.Masked()}
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

func TestAddressesValidate(t *testing.T) {
	valid := testAddresses
	for _, tc := range []struct {
		name   string
		change func(*Addresses)
		err    string
	}{
		{name: "valid", change: func(*Addresses) {}},
		{name: "no host link", change: func(a *Addresses) { a.HostLink = "" }, err: "host link"},
		{name: "host link too long for Linux", change: func(a *Addresses) { a.HostLink = "vb-0123456789abc" }, err: "host link"},
		{name: "outside the benchmarking block", change: func(a *Addresses) { a.Guest = netip.MustParsePrefix("203.0.113.2/24") }, err: "inside 198.18.0.0/15"},
		{name: "wider than the block", change: func(a *Addresses) { a.Gateway = netip.MustParsePrefix("198.19.254.1/14") }, err: "inside 198.18.0.0/15"},
		{name: "veth ends in two networks", change: func(a *Addresses) { a.Uplink = netip.MustParsePrefix("198.19.253.6/30") }, err: "veth ends"},
		{name: "veth ends the same", change: func(a *Addresses) { a.Uplink = a.Host }, err: "veth ends"},
		{name: "guest outside the gateway's network", change: func(a *Addresses) { a.Guest = netip.MustParsePrefix("198.19.250.2/24") }, err: "gateway"},
		{name: "networks overlap", change: func(a *Addresses) {
			a.Host, a.Uplink = netip.MustParsePrefix("198.19.254.129/30"), netip.MustParsePrefix("198.19.254.130/30")
		}, err: "overlaps"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := valid
			tc.change(&a)
			err := a.Validate()
			if tc.err == "" && err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Validate = %v, want an error saying %q", err, tc.err)
			}
		})
	}
}
