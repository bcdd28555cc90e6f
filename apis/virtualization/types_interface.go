package virtualization

// Interface attaches the network of the same name to the guest.
type Interface struct {
	// Name of the interface; a network of the same name must exist.
	Name string
	// Model of the emulated NIC: virtio, e1000, e1000e, ne2k_pci, pcnet or
	// rtl8139. Defaults to virtio.
	Model string
	// InterfaceBindingMethod connects the NIC to the pod's network.
	InterfaceBindingMethod
	// Ports the masquerade binding forwards from the pod's address to the
	// guest. Empty forwards every TCP and UDP port (KubeVirt's behaviour).
	Ports []Port
	// MacAddress of the NIC, such as de:ad:00:00:be:af.
	MacAddress string
	// BootOrder is the position of the NIC in the boot order, from 1.
	BootOrder *uint32
	// Binding names a network binding plugin registered with KubeVirt.
	// Refused: this platform has no binding plugins; use bridge or
	// masquerade.
	Binding *PluginBinding
	// PortRanges the masquerade binding forwards, as ports does. Refused:
	// not implemented yet; list the ports.
	PortRanges []PortRange
	// PciAddress places the NIC at a PCI address. Refused: libvirt places
	// the devices here.
	PciAddress string
	// DHCPOptions are extra options the launcher's DHCP server sends the
	// guest. Refused: not implemented yet.
	DHCPOptions *DHCPOptions
	// Tag is passed to the guest in config drive metadata. This platform
	// has no config drive: the tag is kept and has no effect.
	Tag string
	// ACPIIndex is the NIC's ACPI index (1 to 16383, unique in the guest):
	// Linux names the NIC eno<index> whatever its PCI address.
	ACPIIndex int32
	// State of the NIC's link: up (the default) or down. absent, a request
	// to hot-unplug the NIC, is refused: this platform does not hotplug.
	State InterfaceState
}

// InterfaceState is the requested state of a NIC.
// +enum
type InterfaceState string

// NIC states.
const (
	InterfaceStateAbsent   InterfaceState = "absent"
	InterfaceStateLinkUp   InterfaceState = "up"
	InterfaceStateLinkDown InterfaceState = "down"
)

// InterfaceBindingMethod is how a NIC reaches its network. Exactly one member
// may be set.
type InterfaceBindingMethod struct {
	// Bridge connects the NIC to the pod interface on a layer-2 bridge: the
	// guest takes over the pod's IP address (and, unless macAddress is set,
	// its MAC) by DHCP, and every port of the pod IP is the guest's.
	Bridge *InterfaceBridge
	// Masquerade puts the guest on a private network (vmNetworkCIDR) behind
	// NAT on the pod's IP address: the pod IP's ports (all, or those listed)
	// lead to the guest, which sees its clients' real addresses.
	Masquerade *InterfaceMasquerade
	// DeprecatedSlirp is QEMU user networking. KubeVirt removed it in 1.3;
	// refused.
	DeprecatedSlirp *DeprecatedInterfaceSlirp
	// SRIOV passes an SR-IOV virtual function through. Refused: this
	// platform has no SR-IOV device plugin.
	SRIOV *InterfaceSRIOV
	// DeprecatedMacvtap is the macvtap binding. KubeVirt removed it in 1.3;
	// refused.
	DeprecatedMacvtap *DeprecatedInterfaceMacvtap
	// DeprecatedPasst is the old passt binding. KubeVirt removed it in 1.3;
	// refused.
	DeprecatedPasst *DeprecatedInterfacePasst
	// PasstBinding connects the NIC through passt (user-mode networking).
	// Refused: the launcher image has no passt; use masquerade.
	PasstBinding *InterfacePasstBinding
}

// InterfaceBridge is the bridge binding.
type InterfaceBridge struct{}

// InterfaceMasquerade is the masquerade (NAT) binding.
type InterfaceMasquerade struct{}

// DeprecatedInterfaceSlirp is the removed slirp binding.
type DeprecatedInterfaceSlirp struct{}

// InterfaceSRIOV is the SR-IOV binding.
type InterfaceSRIOV struct{}

// DeprecatedInterfaceMacvtap is the removed macvtap binding.
type DeprecatedInterfaceMacvtap struct{}

// DeprecatedInterfacePasst is the removed passt binding.
type DeprecatedInterfacePasst struct{}

// InterfacePasstBinding is the passt binding.
type InterfacePasstBinding struct{}

// PluginBinding names a network binding plugin.
type PluginBinding struct {
	// Name of the plugin.
	Name string
}

// Port is a port forwarded to the guest by the masquerade binding.
type Port struct {
	// Name of the port.
	Name string
	// Protocol: TCP or UDP. Defaults to TCP.
	Protocol string
	// Port number.
	Port int32
}

// PortRange is a range of ports forwarded to the guest.
type PortRange struct {
	// Protocol: TCP or UDP.
	Protocol string
	// Start is the first port of the range.
	Start int32
	// End is the last port of the range.
	End int32
}

// DHCPOptions are extra options of the guest's DHCP lease.
type DHCPOptions struct {
	// BootFileName is DHCP option 67.
	BootFileName string
	// TFTPServerName is DHCP option 66.
	TFTPServerName string
	// NTPServers are sent as DHCP option 42.
	NTPServers []string
	// PrivateOptions are options 224 to 254.
	PrivateOptions []DHCPPrivateOptions
}

// DHCPPrivateOptions is a private-use DHCP option.
type DHCPPrivateOptions struct {
	// Option number, 224 to 254.
	Option int32
	// Value of the option.
	Value string
}
