package v1

// Interface attaches the network of the same name to the guest.
type Interface struct {
	// Name of the interface; a network of the same name must exist.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Model of the emulated NIC: virtio, e1000, e1000e, ne2k_pci, pcnet or
	// rtl8139. Defaults to virtio.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
	// InterfaceBindingMethod connects the NIC to the pod's network.
	InterfaceBindingMethod `json:",inline" protobuf:"bytes,3,opt,name=interfaceBindingMethod"`
	// Ports the masquerade binding forwards from the pod's address to the
	// guest. Empty forwards every TCP and UDP port (KubeVirt's behaviour).
	// +optional
	// +listType=atomic
	Ports []Port `json:"ports,omitempty" protobuf:"bytes,4,rep,name=ports"`
	// MacAddress of the NIC, such as de:ad:00:00:be:af.
	// +optional
	MacAddress string `json:"macAddress,omitempty" protobuf:"bytes,5,opt,name=macAddress"`
	// BootOrder is the position of the NIC in the boot order, from 1.
	// +optional
	BootOrder *uint32 `json:"bootOrder,omitempty" protobuf:"varint,6,opt,name=bootOrder"`
	// Binding names a network binding plugin registered with KubeVirt.
	// Refused: this platform has no binding plugins; use bridge or
	// masquerade.
	// +optional
	Binding *PluginBinding `json:"binding,omitempty" protobuf:"bytes,7,opt,name=binding"`
	// PortRanges the masquerade binding forwards, as ports does. Refused:
	// not implemented yet; list the ports.
	// +optional
	// +listType=atomic
	PortRanges []PortRange `json:"portRanges,omitempty" protobuf:"bytes,8,rep,name=portRanges"`
	// PciAddress places the NIC at a PCI address. Refused: libvirt places
	// the devices here.
	// +optional
	PciAddress string `json:"pciAddress,omitempty" protobuf:"bytes,9,opt,name=pciAddress"`
	// DHCPOptions are extra options the launcher's DHCP server sends the
	// guest. Refused: not implemented yet.
	// +optional
	DHCPOptions *DHCPOptions `json:"dhcpOptions,omitempty" protobuf:"bytes,10,opt,name=dhcpOptions"`
	// Tag is passed to the guest in config drive metadata. This platform
	// has no config drive: the tag is kept and has no effect.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,11,opt,name=tag"`
	// ACPIIndex is the NIC's ACPI index (1 to 16383, unique in the guest):
	// Linux names the NIC eno<index> whatever its PCI address.
	// +optional
	ACPIIndex int32 `json:"acpiIndex,omitempty" protobuf:"varint,12,opt,name=acpiIndex"`
	// State of the NIC's link: up (the default) or down. absent, a request
	// to hot-unplug the NIC, is refused: this platform does not hotplug.
	// +optional
	State InterfaceState `json:"state,omitempty" protobuf:"bytes,13,opt,name=state,casttype=InterfaceState"`
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
	// +optional
	Bridge *InterfaceBridge `json:"bridge,omitempty" protobuf:"bytes,1,opt,name=bridge"`
	// Masquerade puts the guest on a private network (vmNetworkCIDR) behind
	// NAT on the pod's IP address: the pod IP's ports (all, or those listed)
	// lead to the guest, which sees its clients' real addresses.
	// +optional
	Masquerade *InterfaceMasquerade `json:"masquerade,omitempty" protobuf:"bytes,2,opt,name=masquerade"`
	// DeprecatedSlirp is QEMU user networking. KubeVirt removed it in 1.3;
	// refused.
	// +optional
	DeprecatedSlirp *DeprecatedInterfaceSlirp `json:"slirp,omitempty" protobuf:"bytes,3,opt,name=slirp"`
	// SRIOV passes an SR-IOV virtual function through. Refused: this
	// platform has no SR-IOV device plugin.
	// +optional
	SRIOV *InterfaceSRIOV `json:"sriov,omitempty" protobuf:"bytes,4,opt,name=sriov"`
	// DeprecatedMacvtap is the macvtap binding. KubeVirt removed it in 1.3;
	// refused.
	// +optional
	DeprecatedMacvtap *DeprecatedInterfaceMacvtap `json:"macvtap,omitempty" protobuf:"bytes,5,opt,name=macvtap"`
	// DeprecatedPasst is the old passt binding. KubeVirt removed it in 1.3;
	// refused.
	// +optional
	DeprecatedPasst *DeprecatedInterfacePasst `json:"passt,omitempty" protobuf:"bytes,6,opt,name=passt"`
	// PasstBinding connects the NIC through passt (user-mode networking).
	// Refused: the launcher image has no passt; use masquerade.
	// +optional
	PasstBinding *InterfacePasstBinding `json:"passtBinding,omitempty" protobuf:"bytes,7,opt,name=passtBinding"`
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
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
}

// Port is a port forwarded to the guest by the masquerade binding.
type Port struct {
	// Name of the port.
	// +optional
	Name string `json:"name,omitempty" protobuf:"bytes,1,opt,name=name"`
	// Protocol: TCP or UDP. Defaults to TCP.
	// +optional
	Protocol string `json:"protocol,omitempty" protobuf:"bytes,2,opt,name=protocol"`
	// Port number.
	Port int32 `json:"port" protobuf:"varint,3,opt,name=port"`
}

// PortRange is a range of ports forwarded to the guest.
type PortRange struct {
	// Protocol: TCP or UDP.
	Protocol string `json:"protocol" protobuf:"bytes,1,opt,name=protocol"`
	// Start is the first port of the range.
	Start int32 `json:"start" protobuf:"varint,2,opt,name=start"`
	// End is the last port of the range.
	End int32 `json:"end" protobuf:"varint,3,opt,name=end"`
}

// DHCPOptions are extra options of the guest's DHCP lease.
type DHCPOptions struct {
	// BootFileName is DHCP option 67.
	// +optional
	BootFileName string `json:"bootFileName,omitempty" protobuf:"bytes,1,opt,name=bootFileName"`
	// TFTPServerName is DHCP option 66.
	// +optional
	TFTPServerName string `json:"tftpServerName,omitempty" protobuf:"bytes,2,opt,name=tftpServerName"`
	// NTPServers are sent as DHCP option 42.
	// +optional
	// +listType=atomic
	NTPServers []string `json:"ntpServers,omitempty" protobuf:"bytes,3,rep,name=ntpServers"`
	// PrivateOptions are options 224 to 254.
	// +optional
	// +listType=atomic
	PrivateOptions []DHCPPrivateOptions `json:"privateOptions,omitempty" protobuf:"bytes,4,rep,name=privateOptions"`
}

// DHCPPrivateOptions is a private-use DHCP option.
type DHCPPrivateOptions struct {
	// Option number, 224 to 254.
	Option int32 `json:"option" protobuf:"varint,1,opt,name=option"`
	// Value of the option.
	Value string `json:"value" protobuf:"bytes,2,opt,name=value"`
}
