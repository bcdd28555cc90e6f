// Package nettest builds, for the bindings' tests, what virt-handler finds
// on a node: a pod network namespace joined by a veth pair to a "node"
// namespace that plays the pod network, and a guest that opens the
// binding's tap. Everything is torn down at the test's cleanup.
package nettest

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"kubevirt.dev/virt/node/network/netutil"
)

// RequireRoot fails the test when it cannot build network namespaces.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("this test creates network namespaces, links and nftables rules: run it as root")
	}
}

// NewNS returns a new, anonymous network namespace with lo up; it goes when
// the test ends and nothing holds it any more.
func NewNS(t testing.TB) netns.NsHandle {
	t.Helper()
	ns, err := netutil.NewNS()
	if err != nil {
		t.Fatalf("create a network namespace: %v", err)
	}
	t.Cleanup(func() { ns.Close() })
	h := Handle(t, ns)
	lo, err := h.LinkByName("lo")
	if err == nil {
		err = h.LinkSetUp(lo)
	}
	if err != nil {
		t.Fatalf("set lo up: %v", err)
	}
	return ns
}

// Handle is a netlink handle working in ns, closed at cleanup.
func Handle(t testing.TB, ns netns.NsHandle) *netlink.Handle {
	t.Helper()
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		t.Fatalf("netlink handle in %s: %v", ns, err)
	}
	t.Cleanup(h.Close)
	return h
}

// Sysctl reads a /proc/sys/net entry as the namespace ns sees it.
func Sysctl(t testing.TB, ns netns.NsHandle, name string) string {
	t.Helper()
	var value []byte
	err := netutil.Do(ns, func() (err error) {
		value, err = os.ReadFile(sysctlPath(name))
		return err
	})
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return strings.TrimSpace(string(value))
}

// SetSysctl writes a /proc/sys/net entry of the namespace ns.
func SetSysctl(t testing.TB, ns netns.NsHandle, name, value string) {
	t.Helper()
	err := netutil.Do(ns, func() error { return os.WriteFile(sysctlPath(name), []byte(value), 0) })
	if err != nil {
		t.Fatalf("write %s=%s: %v", name, value, err)
	}
}

func sysctlPath(name string) string {
	return filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
}

// Listen listens on TCP address addr in ns.
func Listen(t testing.TB, ns netns.NsHandle, addr string) *net.TCPListener {
	t.Helper()
	var l net.Listener
	err := netutil.Do(ns, func() (err error) {
		l, err = net.Listen("tcp4", addr)
		return err
	})
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { l.Close() })
	return l.(*net.TCPListener)
}

// ListenUDP listens on UDP address addr in ns.
func ListenUDP(t testing.TB, ns netns.NsHandle, addr string) *net.UDPConn {
	t.Helper()
	var c net.PacketConn
	err := netutil.Do(ns, func() (err error) {
		c, err = net.ListenPacket("udp4", addr)
		return err
	})
	if err != nil {
		t.Fatalf("listen on udp %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c.(*net.UDPConn)
}

// Dial connects from ns to addr ("tcp4" or "udp4"); a connection nobody
// answers fails within a few seconds.
func Dial(ns netns.NsHandle, network, addr string) (net.Conn, error) {
	var c net.Conn
	err := netutil.Do(ns, func() (err error) {
		c, err = net.DialTimeout(network, addr, 3*time.Second)
		return err
	})
	return c, err
}

// Accept waits a few seconds for a connection on l and returns the
// address of its peer.
func Accept(t testing.TB, l *net.TCPListener) netip.AddrPort {
	t.Helper()
	if err := l.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	c, err := l.Accept()
	if err != nil {
		t.Fatalf("accept on %s: %v", l.Addr(), err)
	}
	defer c.Close()
	return c.RemoteAddr().(*net.TCPAddr).AddrPort()
}

// openTap attaches to the tap name in the calling thread's namespace,
// creating a non-persistent one if there is none, with the flags QEMU uses
// (those of the bindings' taps, which an open must not change).
func openTap(name string) (*os.File, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	ifr, err := unix.NewIfreq(name)
	if err == nil {
		ifr.SetUint16(unix.IFF_TAP | uint16(netutil.TapFlags))
		err = unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr)
	}
	if err == nil {
		// Non-blocking before os.NewFile, so that the file uses the poller
		// and a Close ends a pending Read.
		err = unix.SetNonblock(fd, true)
	}
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("attach to tap %s: %w", name, err)
	}
	return os.NewFile(uintptr(fd), name), nil
}

// AssertReaches connects from ns to ip:port and checks that l accepts the
// connection from source.
func AssertReaches(t testing.TB, ns netns.NsHandle, ip netip.Addr, port uint16, l *net.TCPListener, source netip.Addr) {
	t.Helper()
	c, err := Dial(ns, "tcp4", netip.AddrPortFrom(ip, port).String())
	if err != nil {
		t.Fatalf("dial %v:%d: %v", ip, port, err)
	}
	defer c.Close()
	if got := Accept(t, l).Addr(); got != source {
		t.Errorf("connection to %v:%d arrived from %v, want %v", ip, port, got, source)
	}
}
