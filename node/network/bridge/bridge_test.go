package bridge_test

import (
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"google.golang.org/protobuf/testing/protocmp"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network"
	"kubevirt.dev/virt/node/network/bridge"
	"kubevirt.dev/virt/node/network/internal/nettest"
)

const launcherUID = 107

func iface() network.Interface {
	return network.Interface{
		Name:         "default",
		PodInterface: nettest.PodInterface,
		MAC:          net.HardwareAddr{0x02, 0x00, 0x00, 0xc0, 0xff, 0x01},
		TapOwner:     launcherUID,
		TapGroup:     launcherUID,
	}
}

// want is the NIC of the default pod layout: the pod's address, gateway,
// service route and MAC.
func want(pod *nettest.Pod) *apiv1.InterfaceNetwork {
	return &apiv1.InterfaceNetwork{
		Name:       "default",
		TapDevice:  "tap0",
		MacAddress: pod.MAC.String(),
		Mtu:        1400,
		Dhcp: &apiv1.DHCPLease{
			ServerInterface: "k6t-eth0",
			ServerAddress:   "169.254.75.10",
			Address:         "198.18.100.2/24",
			Router:          "198.18.100.1",
			Routes:          []*apiv1.Route{{Destination: "198.18.128.0/17", Gateway: "198.18.100.1"}},
		},
	}
}

func setup(t *testing.T, ns netns.NsHandle, iface network.Interface, want *apiv1.InterfaceNetwork) *apiv1.InterfaceNetwork {
	t.Helper()
	nic, err := bridge.Binding{}.Setup(ns, iface)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if diff := cmp.Diff(want, nic, protocmp.Transform()); diff != "" {
		t.Fatalf("Setup returned (-want +got):\n%s", diff)
	}
	return nic
}

func TestSetupDevices(t *testing.T) {
	pod := nettest.NewPod(t, nettest.Layout{})
	setup(t, pod.NS, iface(), want(pod))
	h := nettest.Handle(t, pod.NS)
	br := link(t, h, "k6t-eth0")
	if br.Type() != "bridge" || br.Attrs().MTU != 1400 || br.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("k6t-eth0: type %s, MTU %d, flags %v; want an up bridge with MTU 1400", br.Type(), br.Attrs().MTU, br.Attrs().Flags)
	}
	if got := addresses(t, h, br); len(got) != 1 || got[0] != "169.254.75.10/32" {
		t.Errorf("k6t-eth0 addresses: %v; want 169.254.75.10/32", got)
	}

	eth0 := link(t, h, "eth0")
	if got := addresses(t, h, eth0); len(got) != 0 {
		t.Errorf("eth0 still has %v; want no IPv4 address", got)
	}
	mac := eth0.Attrs().HardwareAddr
	if mac.String() == pod.MAC.String() || mac[0]&0x03 != 0x02 {
		t.Errorf("eth0's MAC is %v (was %v); want a new locally administered unicast one", mac, pod.MAC)
	}
	assertPort(t, eth0, br)

	tap, ok := link(t, h, "tap0").(*netlink.Tuntap)
	if !ok || tap.Mode != netlink.TUNTAP_MODE_TAP || tap.NonPersist || tap.Owner != launcherUID || tap.Group != launcherUID {
		t.Errorf("tap0: %+v; want a persistent tap of %d:%d", tap, launcherUID, launcherUID)
	} else {
		assertPort(t, tap, br)
	}

	// A second run finds its work done and the same lease, and leaves
	// eth0's new MAC alone.
	setup(t, pod.NS, iface(), want(pod))
	if again := link(t, h, "eth0").Attrs().HardwareAddr; again.String() != mac.String() {
		t.Errorf("the second run changed eth0's MAC from %v to %v", mac, again)
	}
}

func TestSetupSpecMAC(t *testing.T) {
	pod := nettest.NewPod(t, nettest.Layout{})
	i := iface()
	i.SpecMAC = true
	w := want(pod)
	w.MacAddress = "02:00:00:c0:ff:01"
	setup(t, pod.NS, i, w)
}

// TestSetupResumes stops Setup after each of its steps in turn, as a
// virt-handler that dies there, and runs it again: the result is always
// the pod's original configuration.
func TestSetupResumes(t *testing.T) {
	t.Run("between creating the bridge and setting its alias", func(t *testing.T) {
		pod := nettest.NewPod(t, nettest.Layout{})
		if err := nettest.Handle(t, pod.NS).LinkAdd(&netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "k6t-eth0"}}); err != nil {
			t.Fatal(err)
		}
		setup(t, pod.NS, iface(), want(pod))
		setup(t, pod.NS, iface(), want(pod))
	})
	var steps []string
	bridge.RecordSteps(t, &steps)
	first := nettest.NewPod(t, nettest.Layout{})
	setup(t, first.NS, iface(), want(first))
	bridge.Resume()
	if len(steps) < 3 {
		t.Fatalf("Setup ran the steps %q; want more", steps)
	}
	for n, step := range steps {
		t.Run("after "+step, func(t *testing.T) {
			pod := nettest.NewPod(t, nettest.Layout{})
			bridge.StopAfter(t, n+1)
			if _, err := (bridge.Binding{}).Setup(pod.NS, iface()); !errors.Is(err, bridge.ErrStopped) {
				t.Fatalf("Setup: %v; want it stopped after %q", err, step)
			}
			bridge.Resume()
			setup(t, pod.NS, iface(), want(pod))
			setup(t, pod.NS, iface(), want(pod))
		})
	}
}

func TestSetupErrors(t *testing.T) {
	t.Run("no address", func(t *testing.T) {
		pod := nettest.NewPod(t, nettest.Layout{})
		h := nettest.Handle(t, pod.NS)
		eth0 := link(t, h, "eth0")
		addrs, err := h.AddrList(eth0, netlink.FAMILY_V4)
		if err != nil || len(addrs) != 1 {
			t.Fatalf("eth0's addresses: %v, %v", addrs, err)
		}
		if err := h.AddrDel(eth0, &addrs[0]); err != nil {
			t.Fatal(err)
		}
		assertError(t, pod.NS, "bridge: remember the configuration of eth0 in the alias of k6t-eth0 in the pod's netns: read eth0: it has no IPv4 address")
	})
	t.Run("more routes than an alias holds", func(t *testing.T) {
		pod := nettest.NewPod(t, nettest.Layout{})
		h := nettest.Handle(t, pod.NS)
		eth0 := link(t, h, "eth0")
		for i := range 10 {
			err := h.RouteAdd(&netlink.Route{
				LinkIndex: eth0.Attrs().Index,
				Dst:       &net.IPNet{IP: net.IPv4(198, 18, byte(200+i), 0), Mask: net.CIDRMask(24, 32)},
				Gw:        net.IP(pod.Gateway.AsSlice()),
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		assertError(t, pod.NS, "bridge: remember the configuration of eth0 in the alias of k6t-eth0 in the pod's netns: the configuration (11 routes) takes")
		if _, err := h.LinkByName("k6t-eth0"); err == nil {
			t.Error("a bridge was created although the configuration could not be stored")
		}
	})
}

func assertError(t *testing.T, ns netns.NsHandle, want string) {
	t.Helper()
	_, err := bridge.Binding{}.Setup(ns, iface())
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Setup error %v, want one starting with %q", err, want)
	}
}

// TestTraffic plays the guest behind the tap, configured from the lease:
// it is reachable on the pod IP from the client's address and reaches the
// pod network from the pod IP, through the pod's routes.
func TestTraffic(t *testing.T) {
	for _, tc := range []struct {
		name   string
		layout nettest.Layout
		routes []*apiv1.Route
	}{
		{
			name: "subnet",
			routes: []*apiv1.Route{
				{Destination: "198.18.128.0/17", Gateway: "198.18.100.1"},
			},
		},
		{
			name:   "point to point with an on-link gateway",
			layout: nettest.Layout{Address: netip.MustParsePrefix("198.18.100.2/32")},
			routes: []*apiv1.Route{
				{Destination: "198.18.100.1/32"},
				{Destination: "198.18.128.0/17", Gateway: "198.18.100.1"},
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := nettest.NewPod(t, tc.layout)
			w := want(pod)
			w.Dhcp.Address = pod.Address.String()
			w.Dhcp.Routes = tc.routes
			nic := setup(t, pod.NS, iface(), w)
			guest := nettest.NewGuest(t, pod.NS, nic)
			podIP, client := pod.Address.Addr(), pod.Gateway

			http := nettest.Listen(t, guest, ":80")
			nettest.AssertReaches(t, pod.Node, podIP, 80, http, client)
			service := nettest.Listen(t, pod.Node, netip.AddrPortFrom(nettest.ServiceAddress, 9000).String())
			nettest.AssertReaches(t, guest, nettest.ServiceAddress, 9000, service, podIP)
		})
	}
}

func link(t *testing.T, h *netlink.Handle, name string) netlink.Link {
	t.Helper()
	l, err := h.LinkByName(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func addresses(t *testing.T, h *netlink.Handle, l netlink.Link) []string {
	t.Helper()
	addrs, err := h.AddrList(l, netlink.FAMILY_V4)
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, a := range addrs {
		s = append(s, a.IPNet.String())
	}
	return s
}

func assertPort(t *testing.T, port, br netlink.Link) {
	t.Helper()
	a := port.Attrs()
	if a.MasterIndex != br.Attrs().Index || a.MTU != 1400 || a.Flags&net.FlagUp == 0 {
		t.Errorf("%s: master %d, MTU %d, flags %v; want an up port of %s (%d) with MTU 1400",
			a.Name, a.MasterIndex, a.MTU, a.Flags, br.Attrs().Name, br.Attrs().Index)
	}
}
