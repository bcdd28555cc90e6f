package masquerade_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/nftables"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"google.golang.org/protobuf/testing/protocmp"
	"k8s.io/apimachinery/pkg/util/wait"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network"
	"kubevirt.dev/virt/node/network/internal/nettest"
	"kubevirt.dev/virt/node/network/masquerade"
	"kubevirt.dev/virt/node/network/netutil"
)

const launcherUID = 107

var guestMAC = net.HardwareAddr{0x02, 0x00, 0x00, 0xc0, 0xff, 0x01}

func iface(ports ...virtv1.Port) network.Interface {
	return network.Interface{
		Name:         "default",
		PodInterface: nettest.PodInterface,
		MAC:          guestMAC,
		Ports:        ports,
		GuestCIDR:    netip.MustParsePrefix("198.19.255.0/24"),
		TapOwner:     launcherUID,
		TapGroup:     launcherUID,
	}
}

var wantNIC = &apiv1.InterfaceNetwork{
	Name:       "default",
	TapDevice:  "tap0",
	MacAddress: "02:00:00:c0:ff:01",
	Mtu:        1400,
	Dhcp: &apiv1.DHCPLease{
		ServerInterface: "k6t-eth0",
		ServerAddress:   "198.19.255.1",
		Address:         "198.19.255.2/24",
		Router:          "198.19.255.1",
	},
}

func setup(t *testing.T, ns netns.NsHandle, iface network.Interface) *apiv1.InterfaceNetwork {
	t.Helper()
	nic, err := masquerade.Binding{}.Setup(ns, iface)
	if err != nil {
		t.Fatalf("Setup: %v", err)
	}
	if diff := cmp.Diff(wantNIC, nic, protocmp.Transform()); diff != "" {
		t.Fatalf("Setup returned (-want +got):\n%s", diff)
	}
	return nic
}

func TestSetupDevices(t *testing.T) {
	pod := nettest.NewPod(t, nettest.Layout{})
	setup(t, pod.NS, iface(virtv1.Port{Port: 80}))
	h := nettest.Handle(t, pod.NS)

	br, err := h.LinkByName("k6t-eth0")
	if err != nil {
		t.Fatal(err)
	}
	if br.Type() != "bridge" || br.Attrs().MTU != 1400 || br.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("k6t-eth0: type %s, MTU %d, flags %v; want an up bridge with MTU 1400", br.Type(), br.Attrs().MTU, br.Attrs().Flags)
	}
	addrs, err := h.AddrList(br, netlink.FAMILY_V4)
	if err != nil || len(addrs) != 1 || addrs[0].IPNet.String() != "198.19.255.1/24" {
		t.Errorf("k6t-eth0 addresses: %v (%v); want 198.19.255.1/24", addrs, err)
	}

	link, err := h.LinkByName("tap0")
	if err != nil {
		t.Fatal(err)
	}
	tap, ok := link.(*netlink.Tuntap)
	if !ok {
		t.Fatalf("tap0 is a %s, not a tap", link.Type())
	}
	if tap.Mode != netlink.TUNTAP_MODE_TAP || tap.NonPersist || tap.Owner != launcherUID || tap.Group != launcherUID {
		t.Errorf("tap0: mode %v, persistent %v, owner %d:%d; want a persistent tap of %d:%d",
			tap.Mode, !tap.NonPersist, tap.Owner, tap.Group, launcherUID, launcherUID)
	}
	if want := netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR; tap.Flags&want != want {
		t.Errorf("tap0 flags %v lack NO_PI or VNET_HDR", tap.Flags)
	}
	if tap.Attrs().MasterIndex != br.Attrs().Index || tap.Attrs().MTU != 1400 || tap.Attrs().Flags&net.FlagUp == 0 {
		t.Errorf("tap0: master %d, MTU %d, flags %v; want an up port of k6t-eth0 (%d) with MTU 1400",
			tap.Attrs().MasterIndex, tap.Attrs().MTU, tap.Attrs().Flags, br.Attrs().Index)
	}

	// Forwarding per device, never namespace-wide.
	for name, want := range map[string]string{
		"net.ipv4.conf.eth0.forwarding":     "1",
		"net.ipv4.conf.k6t-eth0.forwarding": "1",
		"net.ipv4.conf.all.forwarding":      "0",
		"net.ipv4.ip_forward":               "0",
	} {
		if got := nettest.Sysctl(t, pod.NS, name); got != want {
			t.Errorf("%s = %s, want %s", name, got, want)
		}
	}

	assertRules(t, pod.NS, map[string]int{"prerouting": 1, "output": 1, "postrouting": 1})
}

func TestSetupIsIdempotent(t *testing.T) {
	t.Run("run twice", func(t *testing.T) {
		pod := nettest.NewPod(t, nettest.Layout{})
		setup(t, pod.NS, iface(virtv1.Port{Port: 80}, virtv1.Port{Port: 53, Protocol: "UDP"}))
		setup(t, pod.NS, iface(virtv1.Port{Port: 80}, virtv1.Port{Port: 53, Protocol: "UDP"}))
		assertRules(t, pod.NS, map[string]int{"prerouting": 2, "output": 2, "postrouting": 1})
	})
	t.Run("after a half run", func(t *testing.T) {
		pod := nettest.NewPod(t, nettest.Layout{})
		// What a run stopped early leaves: a bridge without its address
		// and MTU, and a table with someone else's chain in it.
		h := nettest.Handle(t, pod.NS)
		if _, err := netutil.EnsureBridge(h, "k6t-eth0", 1500); err != nil {
			t.Fatal(err)
		}
		c, err := nftables.New(nftables.WithNetNSFd(int(pod.NS)))
		if err != nil {
			t.Fatal(err)
		}
		table := c.AddTable(&nftables.Table{Family: nftables.TableFamilyIPv4, Name: masquerade.TableName})
		c.AddChain(&nftables.Chain{Name: "stale", Table: table})
		if err := c.Flush(); err != nil {
			t.Fatal(err)
		}

		setup(t, pod.NS, iface())
		setup(t, pod.NS, iface())
		assertRules(t, pod.NS, map[string]int{"prerouting": 2, "output": 2, "postrouting": 1})
		if br, err := h.LinkByName("k6t-eth0"); err != nil || br.Attrs().MTU != 1400 {
			t.Errorf("k6t-eth0 after the rerun: %v, %v; want MTU 1400", br, err)
		}
	})
}

// assertRules checks that the namespace holds one table, ours, with
// exactly the chains and numbers of rules of want.
func assertRules(t *testing.T, ns netns.NsHandle, want map[string]int) {
	t.Helper()
	c, err := nftables.New(nftables.WithNetNSFd(int(ns)))
	if err != nil {
		t.Fatal(err)
	}
	tables, err := c.ListTables()
	if err != nil {
		t.Fatal(err)
	}
	if len(tables) != 1 || tables[0].Name != masquerade.TableName || tables[0].Family != nftables.TableFamilyIPv4 {
		t.Fatalf("tables: %v; want only ip %s", tables, masquerade.TableName)
	}
	chains, err := c.ListChains()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, chain := range chains {
		rules, err := c.GetRules(tables[0], chain)
		if err != nil {
			t.Fatal(err)
		}
		got[chain.Name] = len(rules)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rules per chain (-want +got):\n%s", diff)
	}
}

func TestSetupErrors(t *testing.T) {
	pod := nettest.NewPod(t, nettest.Layout{})
	for _, tc := range []struct {
		name string
		edit func(*network.Interface)
		want string
	}{
		{"no such pod interface", func(i *network.Interface) { i.PodInterface = "eth9" },
			"masquerade: read the pod interface eth9 in the pod's netns: "},
		{"guest CIDR too small", func(i *network.Interface) { i.GuestCIDR = netip.MustParsePrefix("198.19.255.0/31") },
			`masquerade: guest CIDR "198.19.255.0/31" is not an IPv4 network with room for two hosts`},
		{"unknown protocol", func(i *network.Interface) { i.Ports = []virtv1.Port{{Port: 80, Protocol: "SCTP"}} },
			`masquerade: port 80: protocol "SCTP" is neither TCP nor UDP`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			i := iface()
			tc.edit(&i)
			_, err := masquerade.Binding{}.Setup(pod.NS, i)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("Setup error %v, want one starting with %q", err, tc.want)
			}
		})
	}
}

// TestTraffic plays the guest behind the tap and checks what reaches it
// and what leaves it.
func TestTraffic(t *testing.T) {
	pod := nettest.NewPod(t, nettest.Layout{})
	nic := setup(t, pod.NS, iface(virtv1.Port{Port: 80}, virtv1.Port{Port: 5353, Protocol: "UDP"}))
	guest := nettest.NewGuest(t, pod.NS, nic)
	podIP, client := pod.Address.Addr(), pod.Gateway
	http := nettest.Listen(t, guest, ":80")
	other := nettest.Listen(t, guest, ":81")

	t.Run("a listed port reaches the guest from the client's address", func(t *testing.T) {
		nettest.AssertReaches(t, pod.Node, podIP, 80, http, client)
	})
	t.Run("an unlisted port stays in the pod", func(t *testing.T) {
		c, err := nettest.Dial(pod.Node, "tcp4", netip.AddrPortFrom(podIP, 81).String())
		if err == nil {
			c.Close()
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("dial port 81 of the pod: %v; want it refused by the pod, where nothing listens", err)
		}
	})
	t.Run("a listed UDP port reaches the guest from the client's address", func(t *testing.T) {
		u := nettest.ListenUDP(t, guest, ":5353")
		c, err := nettest.Dial(pod.Node, "udp4", netip.AddrPortFrom(podIP, 5353).String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var from netip.AddrPort
		// A datagram may go before the neighbours are resolved: send
		// until one arrives.
		err = wait.PollUntilContextTimeout(t.Context(), 0, 5*time.Second, true, func(context.Context) (bool, error) {
			if _, err := c.Write([]byte("ping")); err != nil {
				return false, err
			}
			if err := u.SetReadDeadline(time.Now().Add(200 * time.Millisecond)); err != nil {
				return false, err
			}
			_, from, err = u.ReadFromUDPAddrPort(make([]byte, 16))
			var timeout net.Error
			if errors.As(err, &timeout) && timeout.Timeout() {
				return false, nil
			}
			return err == nil, err
		})
		if err != nil || from.Addr() != client {
			t.Errorf("datagram to the pod's port 5353: from %v, %v; want it at the guest from %v", from, err, client)
		}
	})
	t.Run("the pod's own processes reach the guest on the pod IP", func(t *testing.T) {
		nettest.AssertReaches(t, pod.NS, podIP, 80, http, podIP)
	})
	t.Run("the guest's traffic leaves with the pod IP", func(t *testing.T) {
		// Through the pod's route to the service network, not only the
		// default one.
		service := nettest.Listen(t, pod.Node, netip.AddrPortFrom(nettest.ServiceAddress, 9000).String())
		nettest.AssertReaches(t, guest, nettest.ServiceAddress, 9000, service, podIP)
	})

	// Again, while "QEMU" holds the tap, with every port forwarded.
	setup(t, pod.NS, iface())
	t.Run("with no ports listed every port reaches the guest", func(t *testing.T) {
		nettest.AssertReaches(t, pod.Node, podIP, 81, other, client)
		nettest.AssertReaches(t, pod.Node, podIP, 80, http, client)
	})
}
