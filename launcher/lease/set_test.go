package lease

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/insomniacslk/dhcp/dhcpv4/nclient4"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"k8s.io/apimachinery/pkg/util/wait"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// The test's pod and guest: a veth pair whose pod end is the server
// interface and whose other end, in a namespace of its own, is the guest's
// NIC with the guest's MAC.
const (
	serverLink = "k6t-eth0"
	guestLink  = "eth0"
)

var guestMAC = net.HardwareAddr{0x52, 0x54, 0x00, 0xc0, 0xff, 0x01}

func nic(address string) *apiv1.InterfaceNetwork {
	return &apiv1.InterfaceNetwork{
		Name: "default", TapDevice: "tap0", MacAddress: guestMAC.String(), Mtu: 1500,
		Dhcp: &apiv1.DHCPLease{ServerInterface: serverLink, ServerAddress: "198.19.255.1", Address: address, Router: "198.19.255.1"},
	}
}

// inNetns runs fn on an OS thread inside ns; the thread is thrown away
// afterwards, so nothing else of the test runs in ns by accident.
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

func newNetns(t *testing.T) netns.NsHandle {
	t.Helper()
	var ns netns.NsHandle
	c := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // thrown away: it ends in the new namespace
		var err error
		ns, err = netns.New()
		c <- err
	}()
	if err := <-c; err != nil {
		t.Fatalf("create network namespace: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	return ns
}

// link is the pod's and the guest's namespaces, joined.
func link(t *testing.T) (pod, guest netns.NsHandle) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces and a veth pair, and binds port 67: run it as root")
	}
	pod, guest = newNetns(t), newNetns(t)
	h, err := netlink.NewHandleAt(pod)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: serverLink}, PeerName: guestLink,
		PeerHardwareAddr: guestMAC, PeerNamespace: netlink.NsFd(guest)}
	if err := h.LinkAdd(veth); err != nil {
		t.Fatalf("add veth: %v", err)
	}
	if err := h.AddrAdd(veth, &netlink.Addr{IPNet: &net.IPNet{IP: net.IP{198, 19, 255, 1}, Mask: net.CIDRMask(24, 32)}}); err != nil {
		t.Fatal(err)
	}
	if err := h.LinkSetUp(veth); err != nil {
		t.Fatal(err)
	}
	g, err := netlink.NewHandleAt(guest)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	l, err := g.LinkByName(guestLink)
	if err == nil {
		err = g.LinkSetUp(l)
	}
	if err != nil {
		t.Fatalf("guest NIC: %v", err)
	}
	return pod, guest
}

// A Set serves each NIC's lease once, however often asked, tells who took
// it, and stops with its background context.
func TestServe(t *testing.T) {
	pod, guest := link(t)
	var mu sync.Mutex
	var acked []string
	ctx, stop := context.WithCancel(t.Context())
	defer stop()
	s := New(Config{Background: ctx, OnAck: func(name string) {
		mu.Lock()
		defer mu.Unlock()
		acked = append(acked, name)
	}})
	for range 2 {
		// The second Serve would fail with EADDRINUSE if it listened again.
		if err := inNetns(pod, func() error { return s.Serve(t.Context(), "vm", []*apiv1.InterfaceNetwork{nic("198.19.255.2/24")}) }); err != nil {
			t.Fatalf("Serve: %v", err)
		}
	}
	if _, ok := s.Acked("default"); ok {
		t.Error("a lease is taken before the guest asked")
	}

	var lease *nclient4.Lease
	err := inNetns(guest, func() error {
		c, err := nclient4.New(guestLink, nclient4.WithTimeout(2*time.Second), nclient4.WithRetry(5))
		if err != nil {
			return err
		}
		defer c.Close()
		lease, err = c.Request(t.Context())
		return err
	})
	if err != nil {
		t.Fatalf("the guest's DHCP request: %v", err)
	}
	if got := lease.ACK.YourIPAddr.String(); got != "198.19.255.2" {
		t.Errorf("the guest got %s", got)
	}
	err = wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(acked) == 1, nil
	})
	if err != nil || acked[0] != "default" {
		t.Errorf("OnAck calls: %v (%v), want one for default", acked, err)
	}
	if addr, ok := s.Acked("default"); !ok || addr != netip.MustParseAddr("198.19.255.2") {
		t.Errorf("Acked = %v, %v", addr, ok)
	}
}

// A lease that can never be served is ErrInvalid and serves nothing; a
// socket that cannot be bound is the pod's problem, not ErrInvalid; a NIC
// without a lease needs no server.
func TestServeErrors(t *testing.T) {
	pod, _ := link(t)
	s := New(Config{Background: t.Context()})
	serve := func(nics ...*apiv1.InterfaceNetwork) error {
		return inNetns(pod, func() error { return s.Serve(t.Context(), "vm", nics) })
	}
	if err := serve(nic("not-an-address")); !errors.Is(err, ErrInvalid) {
		t.Errorf("Serve of a bad lease: %v, want ErrInvalid", err)
	}
	missing := nic("198.19.255.2/24")
	missing.Dhcp.ServerInterface = "no-such-link"
	if err := serve(missing); err == nil || errors.Is(err, ErrInvalid) {
		t.Errorf("Serve on a missing interface: %v, want an error that is not ErrInvalid", err)
	}
	if _, ok := s.Acked("default"); ok {
		t.Error("a failed Serve left a lease")
	}
	if err := serve(&apiv1.InterfaceNetwork{Name: "plain", TapDevice: "tap1", MacAddress: "52:54:00:00:00:02"}); err != nil {
		t.Errorf("Serve of a NIC without a lease: %v", err)
	}
}
