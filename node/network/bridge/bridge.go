package bridge

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"

	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/network"
	"kubevirt.dev/virt/node/network/netutil"
)

// ServerAddress is the bridge's own address (KubeVirt's), a /32 the guest
// never routes to: the launcher's DHCP server answers from it.
var ServerAddress = netip.MustParseAddr("169.254.75.10")

// Binding sets up bridge networking; the zero value is ready to use.
type Binding struct{}

var _ network.Binding = Binding{}

// testHookAfterStep, when set, runs after each step of Setup; an error
// stops Setup there, as a virt-handler that dies would.
var testHookAfterStep func(step string) error

// Setup hands the pod interface's address, routes and MAC to the guest
// of iface: it bridges the pod interface and the tap in ns and returns the
// NIC with the lease that carries them.
func (Binding) Setup(ns netns.NsHandle, iface network.Interface) (*apiv1.InterfaceNetwork, error) {
	h, err := netlink.NewHandleAt(ns)
	if err != nil {
		return nil, fmt.Errorf("bridge: netlink in the pod's netns: %w", err)
	}
	defer h.Close()

	s := &setup{ns: ns, h: h, iface: iface, bridgeName: network.BridgeName(iface.PodInterface)}
	pod := iface.PodInterface
	for _, step := range []struct {
		what string
		run  func() error
	}{
		{"remember the configuration of " + pod + " in the alias of " + s.bridgeName, s.remember},
		{"remove the IPv4 addresses of " + pod, s.removeAddresses},
		{"give " + pod + " a new MAC", s.newMAC},
		{"set up bridge " + s.bridgeName, s.setUpBridge},
		{"add " + pod + " to " + s.bridgeName, s.attachPod},
		{"create tap " + network.TapName(iface.Index), s.createTap},
	} {
		err := step.run()
		if err == nil && testHookAfterStep != nil {
			err = testHookAfterStep(step.what)
		}
		if err != nil {
			return nil, fmt.Errorf("bridge: %s in the pod's netns: %w", step.what, err)
		}
	}
	return s.result(), nil
}

// setup is one run of Setup; each step fills in what the next ones need.
type setup struct {
	ns         netns.NsHandle
	h          *netlink.Handle
	iface      network.Interface
	bridgeName string

	pod    netlink.Link
	config podConfig
	bridge netlink.Link
}

// remember finds the pod interface's configuration: in the bridge's alias
// once a run got that far, else on the interface, which nothing has touched
// yet, and stores it there. The kernel takes no alias in the message that
// creates a link: a run that stops in between leaves a bridge without one,
// next to an interface still untouched.
func (s *setup) remember() error {
	pod, err := s.h.LinkByName(s.iface.PodInterface)
	if err != nil {
		return err
	}
	s.pod = pod
	br, found, err := netutil.Lookup(s.h, s.bridgeName)
	if err != nil {
		return err
	}
	if found {
		if br.Type() != "bridge" {
			return fmt.Errorf("%s exists and is a %s, not a bridge", s.bridgeName, br.Type())
		}
		if config, ok := parseAlias(br.Attrs().Alias); ok {
			s.config = config
			return nil
		}
	}
	if s.config, err = readPodConfig(s.h, pod); err != nil {
		return fmt.Errorf("read %s: %w", s.iface.PodInterface, err)
	}
	alias, err := s.config.alias()
	if err != nil {
		return err
	}
	if !found {
		if br, err = netutil.EnsureBridge(s.h, s.bridgeName, pod.Attrs().MTU); err != nil {
			return err
		}
	}
	if err := s.h.LinkSetAlias(br, alias); err != nil {
		return fmt.Errorf("set the alias of %s: %w", s.bridgeName, err)
	}
	return nil
}

// removeAddresses takes the pod interface's IPv4 addresses away (its
// routes go with them): the guest has the pod's address now.
func (s *setup) removeAddresses() error {
	addrs, err := s.h.AddrList(s.pod, netlink.FAMILY_V4)
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := s.h.AddrDel(s.pod, &a); err != nil {
			return fmt.Errorf("remove %s: %w", a.IPNet, err)
		}
	}
	return nil
}

// newMAC gives the pod interface a random MAC when it still has the
// original, the guest's from now on, so that frames to that MAC cross the
// bridge instead of ending at its port (and the neighbours' ARP caches
// stay right).
func (s *setup) newMAC() error {
	if s.pod.Attrs().HardwareAddr.String() != s.config.MAC {
		return nil
	}
	mac, err := randomMAC()
	if err != nil {
		return err
	}
	// Not every driver changes its address while up.
	if err := s.h.LinkSetDown(s.pod); err != nil {
		return fmt.Errorf("set it down: %w", err)
	}
	return s.h.LinkSetHardwareAddr(s.pod, mac)
}

// randomMAC is a random unicast, locally administered address.
func randomMAC() (net.HardwareAddr, error) {
	mac := make(net.HardwareAddr, 6)
	if _, err := rand.Read(mac); err != nil {
		return nil, err
	}
	mac[0] = mac[0]&^0x01 | 0x02
	return mac, nil
}

func (s *setup) setUpBridge() error {
	br, err := netutil.EnsureBridge(s.h, s.bridgeName, s.pod.Attrs().MTU)
	if err != nil {
		return err
	}
	server := &netlink.Addr{IPNet: &net.IPNet{IP: ServerAddress.AsSlice(), Mask: net.CIDRMask(32, 32)}}
	if err := s.h.AddrReplace(br, server); err != nil {
		return fmt.Errorf("address it with %s: %w", ServerAddress, err)
	}
	if err := s.h.LinkSetUp(br); err != nil {
		return fmt.Errorf("set it up: %w", err)
	}
	s.bridge = br
	return nil
}

func (s *setup) attachPod() error {
	return netutil.AttachPort(s.h, s.pod, s.bridge, s.pod.Attrs().MTU)
}

func (s *setup) createTap() error {
	tap, err := netutil.EnsureTap(s.ns, s.h, network.TapName(s.iface.Index), s.iface.TapOwner, s.iface.TapGroup, s.iface.Queues > 1)
	if err != nil {
		return err
	}
	return netutil.AttachPort(s.h, tap, s.bridge, s.pod.Attrs().MTU)
}

func (s *setup) result() *apiv1.InterfaceNetwork {
	mac := s.config.MAC
	if s.iface.SpecMAC {
		mac = s.iface.MAC.String()
	}
	return &apiv1.InterfaceNetwork{
		Name:       s.iface.Name,
		TapDevice:  network.TapName(s.iface.Index),
		MacAddress: mac,
		Mtu:        uint32(s.pod.Attrs().MTU),
		Dhcp:       s.config.lease(s.bridgeName),
	}
}
