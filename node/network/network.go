package network

import (
	"net"
	"net/netip"
	"strconv"

	"github.com/vishvananda/netns"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
)

// Binding connects a guest NIC to the pod's network.
type Binding interface {
	// Setup makes the network namespace ns ready for iface and returns what
	// the launcher needs to attach the NIC and serve its lease. It is
	// idempotent and safe to run again after a partial run.
	Setup(ns netns.NsHandle, iface Interface) (*apiv1.InterfaceNetwork, error)
}

// Interface is one VMI interface on the pod network, as a binding sees it.
type Interface struct {
	// Name in spec.domain.devices.interfaces.
	Name string
	// Index is the interface's position among the VMI's interfaces; device
	// names derive from it (TapName).
	Index int
	// PodInterface is the pod's own interface, such as "eth0".
	PodInterface string
	// MAC is the guest's hardware address: the spec's macAddress, else a
	// stable one generated from the VMI. A binding that gives the guest the
	// pod interface's own address may give it that interface's MAC when the
	// spec names none (SpecMAC false).
	MAC     net.HardwareAddr
	SpecMAC bool
	// Ports to forward from the pod's address to the guest (masquerade);
	// none forwards every port.
	Ports []virtv1.Port
	// GuestCIDR is the guest-internal network of masquerade
	// (spec.networks[].pod.vmNetworkCIDR).
	GuestCIDR netip.Prefix
	// TapOwner is the UID and GID the tap belongs to: the launcher's, so
	// that the unprivileged launcher can open it.
	TapOwner, TapGroup uint32
	// Queues of the guest's NIC (layout.NICQueues): more than one needs a
	// multi-queue tap.
	Queues uint32
}

// TapName is the tap device of the interface at index.
func TapName(index int) string { return "tap" + strconv.Itoa(index) }

// BridgeName is the in-pod bridge that connects a guest NIC to the pod
// interface podInterface (KubeVirt's name).
func BridgeName(podInterface string) string { return "k6t-" + podInterface }
