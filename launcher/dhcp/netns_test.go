package dhcp

import (
	"context"
	"net"
	"net/netip"
	"os"
	"runtime"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// The pod side of the test link: the binding's bridge with the guest's "tap"
// (a veth here) as its port; the other end is the guest's NIC in its own
// network namespace.
const (
	serverBridge = "k6t-eth0"
	serverPort   = "tap0"
	guestLink    = "eth0"
)

// requireRoot fails a test that needs network namespaces when it cannot have
// them, rather than pass it without testing anything.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces, veth pairs and a bridge, and binds port 67: run it as root")
	}
}

// inNetns runs fn on an OS thread inside ns. The thread is thrown away
// afterwards (its goroutine ends locked to it), so nothing else of the test
// ever runs in ns by accident. Sockets fn opens stay in ns.
func inNetns(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := netns.Set(ns); err != nil {
			errc <- err
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// newNetns is a new, anonymous network namespace that lives until the test
// ends (and whatever sockets it holds are closed).
func newNetns(t *testing.T) netns.NsHandle {
	t.Helper()
	type result struct {
		ns  netns.NsHandle
		err error
	}
	c := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // thrown away: it ends in the new namespace
		ns, err := netns.New()
		c <- result{ns, err}
	}()
	r := <-c
	if r.err != nil {
		t.Fatalf("create network namespace: %v", r.err)
	}
	t.Cleanup(func() { r.ns.Close() })
	return r.ns
}

// link is a server namespace and a guest namespace joined as the launcher's
// pod and its guest are: a bridge with the server's address, whose port's
// peer is the guest's NIC with the guest's MAC.
type link struct {
	server, guest netns.NsHandle
}

func newLink(t *testing.T, serverAddr netip.Prefix, mac net.HardwareAddr) link {
	t.Helper()
	l := link{server: newNetns(t), guest: newNetns(t)}
	srv, err := netlink.NewHandleAt(l.server)
	if err != nil {
		t.Fatalf("netlink in the server namespace: %v", err)
	}
	defer srv.Close()
	guest, err := netlink.NewHandleAt(l.guest)
	if err != nil {
		t.Fatalf("netlink in the guest namespace: %v", err)
	}
	defer guest.Close()

	bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: serverBridge}}
	if err := srv.LinkAdd(bridge); err != nil {
		t.Fatalf("add bridge %s: %v", serverBridge, err)
	}
	port := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: serverPort, MasterIndex: bridge.Index},
		PeerName:         guestLink,
		PeerHardwareAddr: mac,
		PeerNamespace:    netlink.NsFd(l.guest),
	}
	if err := srv.LinkAdd(port); err != nil {
		t.Fatalf("add veth %s/%s: %v", serverPort, guestLink, err)
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: serverAddr.Addr().AsSlice(), Mask: net.CIDRMask(serverAddr.Bits(), 32)}}
	if err := srv.AddrAdd(bridge, addr); err != nil {
		t.Fatalf("add %s to %s: %v", serverAddr, serverBridge, err)
	}
	for _, l := range []netlink.Link{bridge, port} {
		if err := srv.LinkSetUp(l); err != nil {
			t.Fatalf("set %s up: %v", l.Attrs().Name, err)
		}
	}
	nic, err := guest.LinkByName(guestLink)
	if err != nil {
		t.Fatalf("guest NIC: %v", err)
	}
	if err := guest.LinkSetUp(nic); err != nil {
		t.Fatalf("set the guest NIC up: %v", err)
	}
	return l
}

// addGuestAddress configures the guest's NIC as a DHCP client does once it
// has its lease.
func (l link) addGuestAddress(t *testing.T, p netip.Prefix) {
	t.Helper()
	guest, err := netlink.NewHandleAt(l.guest)
	if err != nil {
		t.Fatalf("netlink in the guest namespace: %v", err)
	}
	defer guest.Close()
	nic, err := guest.LinkByName(guestLink)
	if err != nil {
		t.Fatalf("guest NIC: %v", err)
	}
	if err := guest.AddrAdd(nic, &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}}); err != nil {
		t.Fatalf("add %s to the guest NIC: %v", p, err)
	}
}

// serve runs srv in the server namespace until the test ends, and fails the
// test if it stops for any other reason.
func (l link) serve(t *testing.T, srv *Server) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- inNetns(l.server, func() error { return srv.Serve(ctx) }) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
}
