package nettest

import (
	"net"
	"net/netip"
	"testing"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Layout is the pod's side of the pod network; the zero value gives the
// defaults below.
type Layout struct {
	// Address is the pod's address on its interface; 198.18.100.2/24.
	Address netip.Prefix
	// Gateway is the node's address, the pod's default gateway;
	// 198.18.100.1. Outside Address's subnet it is reached on-link, as
	// Calico does for /32 pods.
	Gateway netip.Addr
	// MTU of the veth pair; 1400, so that a binding copying 1500 shows.
	MTU int
}

// ServiceRoute is a network the pod reaches through its gateway besides
// the default route, like a cluster's service CIDR; ServiceAddress in it
// answers in the node namespace.
var (
	ServiceRoute   = netip.MustParsePrefix("198.18.128.0/17")
	ServiceAddress = netip.MustParseAddr("198.18.128.1")
)

// PodInterface is the pod's interface, as a CNI plugin names it.
const PodInterface = "eth0"

// Pod is a pod's network namespace joined by a veth pair to a node
// namespace that holds its gateway.
type Pod struct {
	Layout
	NS, Node netns.NsHandle
	// MAC is the hardware address the pod interface was created with.
	MAC net.HardwareAddr
}

// NewPod builds a pod namespace with PodInterface addressed as layout
// says, a default route and a route to ServiceRoute through the gateway.
// IPv4 forwarding is off in the pod namespace, on every device, as a
// kernel may create it: whatever forwards there, a binding turned on.
func NewPod(t testing.TB, layout Layout) *Pod {
	t.Helper()
	RequireRoot(t)
	if !layout.Address.IsValid() {
		layout.Address = netip.MustParsePrefix("198.18.100.2/24")
	}
	if !layout.Gateway.IsValid() {
		layout.Gateway = netip.MustParseAddr("198.18.100.1")
	}
	if layout.MTU == 0 {
		layout.MTU = 1400
	}
	p := &Pod{Layout: layout, NS: NewNS(t), Node: NewNS(t)}
	// Before the veth exists, so that it starts with "default".
	SetSysctl(t, p.NS, "net.ipv4.conf.all.forwarding", "0")
	SetSysctl(t, p.NS, "net.ipv4.conf.default.forwarding", "0")

	node, pod := Handle(t, p.Node), Handle(t, p.NS)
	veth := &netlink.Veth{
		LinkAttrs:     netlink.LinkAttrs{Name: "node0", MTU: layout.MTU},
		PeerName:      PodInterface,
		PeerNamespace: netlink.NsFd(p.NS),
	}
	must(t, "create the veth pair", node.LinkAdd(veth))

	nodeLink, err := node.LinkByName("node0")
	must(t, "look up node0", err)
	onLink := !layout.Address.Contains(layout.Gateway)
	gatewayPrefix := netip.PrefixFrom(layout.Gateway, layout.Address.Bits())
	if onLink {
		gatewayPrefix = netip.PrefixFrom(layout.Gateway, 32)
	}
	must(t, "address node0", node.AddrAdd(nodeLink, addr(gatewayPrefix)))
	must(t, "set node0 up", node.LinkSetUp(nodeLink))
	if onLink {
		must(t, "route to the pod", node.RouteAdd(&netlink.Route{
			LinkIndex: nodeLink.Attrs().Index, Dst: ipNet(netip.PrefixFrom(layout.Address.Addr(), 32)), Scope: netlink.SCOPE_LINK,
		}))
	}
	lo, err := node.LinkByName("lo")
	must(t, "look up lo", err)
	must(t, "address lo", node.AddrAdd(lo, addr(netip.PrefixFrom(ServiceAddress, 32))))

	podLink, err := pod.LinkByName(PodInterface)
	must(t, "look up "+PodInterface, err)
	p.MAC = podLink.Attrs().HardwareAddr
	must(t, "address "+PodInterface, pod.AddrAdd(podLink, addr(layout.Address)))
	must(t, "set "+PodInterface+" up", pod.LinkSetUp(podLink))
	flags := 0
	if onLink {
		flags = int(netlink.FLAG_ONLINK)
	}
	gw := net.IP(layout.Gateway.AsSlice())
	for _, dst := range []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), ServiceRoute} {
		must(t, "route to "+dst.String(), pod.RouteAdd(&netlink.Route{
			LinkIndex: podLink.Attrs().Index, Dst: ipNet(dst), Gw: gw, Flags: flags, Family: unix.AF_INET,
		}))
	}
	return p
}

func must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func addr(p netip.Prefix) *netlink.Addr { return &netlink.Addr{IPNet: ipNet(p)} }
