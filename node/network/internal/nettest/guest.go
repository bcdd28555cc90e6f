package nettest

import (
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network/netutil"
)

// GuestInterface is the guest's NIC in its namespace.
const GuestInterface = "eth0"

// NewGuest plays the VM of the NIC nic, whose binding ran in the pod
// namespace podNS: it opens nic's tap there as QEMU would and relays every
// frame to and from a tap in a new guest namespace, whose interface it
// configures from nic's lease as a DHCP client would.
func NewGuest(t testing.TB, podNS netns.NsHandle, nic *apiv1.InterfaceNetwork) netns.NsHandle {
	t.Helper()
	guest := NewNS(t)
	var podTap, guestTap *os.File
	must(t, "open "+nic.TapDevice, netutil.Do(podNS, func() (err error) {
		podTap, err = openTap(nic.TapDevice)
		return err
	}))
	t.Cleanup(func() { podTap.Close() })
	must(t, "create the guest's tap", netutil.Do(guest, func() (err error) {
		guestTap, err = openTap(GuestInterface)
		return err
	}))
	t.Cleanup(func() { guestTap.Close() })

	var relays sync.WaitGroup
	relays.Go(func() { relay(guestTap, podTap) })
	relays.Go(func() { relay(podTap, guestTap) })
	// Runs before the taps close (cleanups run last-in first-out): close
	// them here and wait, so no relay outlives the test.
	t.Cleanup(func() {
		podTap.Close()
		guestTap.Close()
		relays.Wait()
	})

	configure(t, guest, nic)
	return guest
}

// relay copies frames, virtio-net header included (both taps have one),
// from src to dst until either closes. A frame the other side drops (its
// tap is still down) is lost, as on a wire.
func relay(dst, src *os.File) {
	frame := make([]byte, 1<<16)
	for {
		n, err := src.Read(frame)
		if err != nil {
			return
		}
		if _, err := dst.Write(frame[:n]); errors.Is(err, os.ErrClosed) {
			return
		}
	}
}

// configure applies nic's MAC, MTU and lease to the guest's interface.
func configure(t testing.TB, guest netns.NsHandle, nic *apiv1.InterfaceNetwork) {
	t.Helper()
	h := Handle(t, guest)
	link, err := h.LinkByName(GuestInterface)
	must(t, "look up the guest's interface", err)
	mac, err := net.ParseMAC(nic.MacAddress)
	must(t, "parse the guest's MAC", err)
	must(t, "set the guest's MAC", h.LinkSetHardwareAddr(link, mac))
	must(t, "set the guest's MTU", h.LinkSetMTU(link, int(nic.Mtu)))
	address, err := netip.ParsePrefix(nic.Dhcp.Address)
	must(t, "parse the lease's address", err)
	must(t, "address the guest", h.AddrAdd(link, addr(address)))
	must(t, "set the guest's interface up", h.LinkSetUp(link))

	index := link.Attrs().Index
	for _, r := range nic.Dhcp.Routes {
		dst, err := netip.ParsePrefix(r.Destination)
		must(t, "parse a route", err)
		route := &netlink.Route{LinkIndex: index, Dst: ipNet(dst), Scope: netlink.SCOPE_LINK}
		if r.Gateway != "" {
			route.Gw, route.Scope = net.ParseIP(r.Gateway), netlink.SCOPE_UNIVERSE
		}
		must(t, "add the route to "+r.Destination, h.RouteAdd(route))
	}
	if nic.Dhcp.Router != "" {
		must(t, "add the default route", h.RouteAdd(&netlink.Route{
			LinkIndex: index, Dst: ipNet(netip.MustParsePrefix("0.0.0.0/0")), Gw: net.ParseIP(nic.Dhcp.Router),
		}))
	}
}
