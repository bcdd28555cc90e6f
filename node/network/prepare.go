package network

import (
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"net/netip"

	"github.com/vishvananda/netns"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/podfs"
)

// PodInterface is the pod's interface on the pod network: the name every
// CNI plugin gives the interface it adds to a pod.
const PodInterface = "eth0"

// Names of the bindings, as spec.domain.devices.interfaces[] names them.
const (
	Masquerade = "masquerade"
	Bridge     = "bridge"
)

// Bindings maps a binding's name to its plugin.
type Bindings map[string]Binding

// Owner is the user and group a launcher runs as.
type Owner struct{ UID, GID uint32 }

// Prepare runs the binding of every interface of vmi in the network
// namespace ns of its launcher pod, whose launcher runs as owner, and
// returns the NICs for the launcher's Sync, in spec order.
func (b Bindings) Prepare(ns netns.NsHandle, vmi *virtv1.VirtualMachineInstance, owner Owner) ([]*apiv1.InterfaceNetwork, error) {
	networks := map[string]*virtv1.Network{}
	for i := range vmi.Spec.Networks {
		networks[vmi.Spec.Networks[i].Name] = &vmi.Spec.Networks[i]
	}
	var nics []*apiv1.InterfaceNetwork
	for i, spec := range vmi.Spec.Domain.Devices.Interfaces {
		network := networks[spec.Name]
		if network == nil || network.Pod == nil {
			return nil, fmt.Errorf("interface %q: not on the pod network, the only network this node provides", spec.Name)
		}
		name := BindingName(spec)
		binding, ok := b[name]
		if !ok {
			return nil, fmt.Errorf("interface %q: no plugin for binding %q on this node", spec.Name, name)
		}
		iface := Interface{
			Name: spec.Name, Index: i, PodInterface: PodInterface,
			Ports: spec.Ports, TapOwner: owner.UID, TapGroup: owner.GID,
			Queues: nicQueues(vmi),
		}
		if spec.MacAddress != "" {
			mac, err := net.ParseMAC(spec.MacAddress)
			if err != nil {
				return nil, fmt.Errorf("interface %q: macAddress: %w", spec.Name, err)
			}
			iface.MAC, iface.SpecMAC = mac, true
		} else {
			iface.MAC = GuestMAC(string(vmi.UID), spec.Name)
		}
		cidr := network.Pod.VMNetworkCIDR
		if cidr == "" {
			cidr = virtv1.DefaultVMNetworkCIDR
		}
		prefix, err := netip.ParsePrefix(cidr)
		if err != nil || !prefix.Addr().Is4() || prefix.Bits() > 30 {
			return nil, fmt.Errorf("network %q: vmNetworkCIDR %q is not an IPv4 network of at least 4 addresses", network.Name, cidr)
		}
		iface.GuestCIDR = prefix.Masked()
		nic, err := binding.Setup(ns, iface)
		if err != nil {
			return nil, fmt.Errorf("interface %q (%s): %w", spec.Name, name, err)
		}
		nics = append(nics, nic)
	}
	return nics, nil
}

// BindingName is the binding an interface asks for.
func BindingName(iface virtv1.Interface) string {
	switch {
	case iface.Bridge != nil:
		return Bridge
	case iface.Masquerade != nil:
		return Masquerade
	}
	return ""
}

// GuestMAC is the MAC of a guest NIC whose spec names none: stable for the
// VMI (the same at every start and on every node, so a guest's DHCP lease and
// its neighbours' caches stay valid) and distinct between VMIs. 52:54:00 is
// QEMU's locally administered prefix, the one libvirt itself would pick.
func GuestMAC(vmiUID, iface string) net.HardwareAddr {
	sum := sha256.Sum256([]byte(vmiUID + "/" + iface))
	return net.HardwareAddr{0x52, 0x54, 0x00, sum[0], sum[1], sum[2]}
}

// Preparer prepares VMIs' NICs in the network namespaces of their launcher
// pods, found from the launchers' sockets.
type Preparer struct {
	Bindings Bindings
}

// Prepare finds the launcher serving the socket in its pod's private
// directory and runs the bindings of vmi's interfaces in its network
// namespace.
func (p Preparer) Prepare(ctx context.Context, vmi *virtv1.VirtualMachineInstance, privateDir podfs.Dir) ([]*apiv1.InterfaceNetwork, error) {
	if len(vmi.Spec.Domain.Devices.Interfaces) == 0 {
		return nil, nil
	}
	l, err := FindLauncher(ctx, privateDir)
	if err != nil {
		return nil, err
	}
	ns, err := l.NetNS()
	if err != nil {
		return nil, err
	}
	defer ns.Close()
	return p.Bindings.Prepare(ns, vmi, l.Owner)
}

// nicQueues is the queues of vmi's NICs, as the launcher computes them for
// its domain (layout.NICQueues).
func nicQueues(vmi *virtv1.VirtualMachineInstance) uint32 {
	mq := vmi.Spec.Domain.Devices.NetworkInterfaceMultiQueue
	cpu := vmi.Spec.Domain.CPU
	if mq == nil || !*mq || cpu == nil {
		return 1
	}
	return layout.NICQueues(true, cpu.Sockets*cpu.Cores*cpu.Threads)
}
