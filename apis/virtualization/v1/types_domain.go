package v1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of a guest.
type DomainSpec struct {
	// Resources are the compute resources of the launcher pod. When
	// memory.guest is not set, requests.memory is the guest's memory.
	// +optional
	Resources ResourceRequirements `json:"resources,omitempty" protobuf:"bytes,1,opt,name=resources"`
	// CPU topology and model. Defaults to one core.
	// +optional
	CPU *CPU `json:"cpu,omitempty" protobuf:"bytes,2,opt,name=cpu"`
	// Memory of the guest.
	// +optional
	Memory *Memory `json:"memory,omitempty" protobuf:"bytes,3,opt,name=memory"`
	// Machine type. Defaults to q35.
	// +optional
	Machine *Machine `json:"machine,omitempty" protobuf:"bytes,4,opt,name=machine"`
	// Firmware: identity, boot loader, direct kernel boot.
	// +optional
	Firmware *Firmware `json:"firmware,omitempty" protobuf:"bytes,5,opt,name=firmware"`
	// Devices attached to the guest.
	Devices Devices `json:"devices" protobuf:"bytes,6,opt,name=devices"`
}

// ResourceRequirements are the compute resources of the launcher pod.
type ResourceRequirements struct {
	// Requests of the launcher pod. The platform adds its own overhead on top.
	// +optional
	Requests corev1.ResourceList `json:"requests,omitempty" protobuf:"bytes,1,rep,name=requests,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// Limits of the launcher pod.
	// +optional
	Limits corev1.ResourceList `json:"limits,omitempty" protobuf:"bytes,2,rep,name=limits,casttype=k8s.io/api/core/v1.ResourceList,castkey=k8s.io/api/core/v1.ResourceName"`
	// OvercommitGuestOverhead leaves the platform's overhead out of the pod's
	// memory request (it is still added to the limit).
	// +optional
	OvercommitGuestOverhead bool `json:"overcommitGuestOverhead,omitempty" protobuf:"varint,3,opt,name=overcommitGuestOverhead"`
}

// CPU is the vCPU topology and model. vCPUs = sockets * cores * threads.
type CPU struct {
	// Cores per socket. Defaults to 1.
	// +optional
	Cores uint32 `json:"cores,omitempty" protobuf:"varint,1,opt,name=cores"`
	// Sockets. Defaults to 1.
	// +optional
	Sockets uint32 `json:"sockets,omitempty" protobuf:"varint,2,opt,name=sockets"`
	// Threads per core. Defaults to 1.
	// +optional
	Threads uint32 `json:"threads,omitempty" protobuf:"varint,3,opt,name=threads"`
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// Empty lets the hypervisor choose.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,4,opt,name=model"`
}

// Memory is the memory of the guest.
type Memory struct {
	// Guest is the memory the guest sees. Defaults to resources.requests.memory.
	// +optional
	Guest *resource.Quantity `json:"guest,omitempty" protobuf:"bytes,1,opt,name=guest"`
}

// Machine is the emulated chipset.
type Machine struct {
	// Type is a QEMU machine type, such as q35 or pc-q35-7.2.
	// +optional
	Type string `json:"type" protobuf:"bytes,1,opt,name=type"`
}

// Firmware is the identity and boot path of the guest.
type Firmware struct {
	// UUID is the SMBIOS system UUID the guest sees. When empty the VMI's
	// UID is used; a VirtualMachine sets one derived from its own UID so its
	// guests keep their identity across restarts.
	// +optional
	UUID types.UID `json:"uuid,omitempty" protobuf:"bytes,1,opt,name=uuid,casttype=k8s.io/apimachinery/pkg/types.UID"`
	// Serial is the SMBIOS system serial number.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,2,opt,name=serial"`
	// Bootloader selects BIOS or EFI. Defaults to BIOS.
	// +optional
	Bootloader *Bootloader `json:"bootloader,omitempty" protobuf:"bytes,3,opt,name=bootloader"`
	// KernelBoot boots a kernel and initrd directly, bypassing the boot loader.
	// +optional
	KernelBoot *KernelBoot `json:"kernelBoot,omitempty" protobuf:"bytes,4,opt,name=kernelBoot"`
}

// Bootloader selects the firmware. Exactly one member may be set.
type Bootloader struct {
	// BIOS boots with SeaBIOS.
	// +optional
	BIOS *BIOS `json:"bios,omitempty" protobuf:"bytes,1,opt,name=bios"`
	// EFI boots with OVMF.
	// +optional
	EFI *EFI `json:"efi,omitempty" protobuf:"bytes,2,opt,name=efi"`
}

// BIOS is legacy BIOS firmware.
type BIOS struct {
	// UseSerial sends the BIOS's output to the serial console.
	// +optional
	UseSerial *bool `json:"useSerial,omitempty" protobuf:"varint,1,opt,name=useSerial"`
}

// EFI is UEFI firmware.
type EFI struct {
	// SecureBoot enables UEFI Secure Boot. Defaults to false.
	// +optional
	SecureBoot *bool `json:"secureBoot,omitempty" protobuf:"varint,1,opt,name=secureBoot"`
}

// KernelBoot boots a kernel directly.
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	// +optional
	KernelArgs string `json:"kernelArgs,omitempty" protobuf:"bytes,1,opt,name=kernelArgs"`
	// Container is the image the kernel and initrd are taken from.
	// +optional
	Container *KernelBootContainer `json:"container,omitempty" protobuf:"bytes,2,opt,name=container"`
}

// KernelBootContainer is an image holding a kernel and an initrd.
type KernelBootContainer struct {
	// Image reference.
	Image string `json:"image" protobuf:"bytes,1,opt,name=image"`
	// ImagePullSecret names a secret in the VMI's namespace.
	// +optional
	ImagePullSecret string `json:"imagePullSecret,omitempty" protobuf:"bytes,2,opt,name=imagePullSecret"`
	// KernelPath is the absolute path of the kernel inside the image.
	// +optional
	KernelPath string `json:"kernelPath,omitempty" protobuf:"bytes,3,opt,name=kernelPath"`
	// InitrdPath is the absolute path of the initrd inside the image.
	// +optional
	InitrdPath string `json:"initrdPath,omitempty" protobuf:"bytes,4,opt,name=initrdPath"`
	// ImagePullPolicy, as for containers.
	// +optional
	ImagePullPolicy corev1.PullPolicy `json:"imagePullPolicy,omitempty" protobuf:"bytes,5,opt,name=imagePullPolicy,casttype=k8s.io/api/core/v1.PullPolicy"`
}

// Devices are the devices attached to the guest.
type Devices struct {
	// Disks attach volumes to the guest.
	// +optional
	// +listType=map
	// +listMapKey=name
	Disks []Disk `json:"disks,omitempty" protobuf:"bytes,1,rep,name=disks"`
	// Interfaces attach networks to the guest.
	// +optional
	// +listType=map
	// +listMapKey=name
	Interfaces []Interface `json:"interfaces,omitempty" protobuf:"bytes,2,rep,name=interfaces"`
	// AutoattachPodInterface adds a masquerade interface on the pod network
	// when no interface is given. Defaults to true.
	// +optional
	AutoattachPodInterface *bool `json:"autoattachPodInterface,omitempty" protobuf:"varint,3,opt,name=autoattachPodInterface"`
	// AutoattachSerialConsole adds a serial console. Defaults to true.
	// +optional
	AutoattachSerialConsole *bool `json:"autoattachSerialConsole,omitempty" protobuf:"varint,4,opt,name=autoattachSerialConsole"`
	// Rng adds a virtio random number generator fed by the host.
	// +optional
	Rng *Rng `json:"rng,omitempty" protobuf:"bytes,5,opt,name=rng"`
	// Watchdog adds a watchdog device.
	// +optional
	Watchdog *Watchdog `json:"watchdog,omitempty" protobuf:"bytes,6,opt,name=watchdog"`
	// AutoattachGraphicsDevice adds a graphics device the guest's VNC
	// server shows. Defaults to true.
	// +optional
	AutoattachGraphicsDevice *bool `json:"autoattachGraphicsDevice,omitempty" protobuf:"varint,7,opt,name=autoattachGraphicsDevice"`
}

// DiskBus is the bus a disk is attached to.
// +enum
type DiskBus string

const (
	DiskBusVirtio DiskBus = "virtio"
	DiskBusSATA   DiskBus = "sata"
	DiskBusSCSI   DiskBus = "scsi"
	DiskBusUSB    DiskBus = "usb"
)

// Disk attaches the volume of the same name to the guest.
type Disk struct {
	// Name of the disk; a volume of the same name must exist.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DiskDevice is the kind of device. Defaults to a virtio disk.
	DiskDevice `json:",inline" protobuf:"bytes,2,opt,name=diskDevice"`
	// BootOrder is the position of the disk in the boot order, from 1.
	// Devices without one are not booted from.
	// +optional
	BootOrder *uint32 `json:"bootOrder,omitempty" protobuf:"varint,3,opt,name=bootOrder"`
	// Serial number the guest sees.
	// +optional
	Serial string `json:"serial,omitempty" protobuf:"bytes,4,opt,name=serial"`
}

// DiskDevice is the kind of a disk. At most one member may be set.
type DiskDevice struct {
	// Disk attaches the volume as a disk.
	// +optional
	Disk *DiskTarget `json:"disk,omitempty" protobuf:"bytes,1,opt,name=disk"`
	// CDRom attaches the volume as a CD-ROM.
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty" protobuf:"bytes,2,opt,name=cdrom"`
}

// DiskTarget is a disk device.
type DiskTarget struct {
	// Bus: virtio, sata, scsi or usb. Defaults to virtio.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the disk read-only.
	// +optional
	ReadOnly bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
}

// CDRomTarget is a CD-ROM device.
type CDRomTarget struct {
	// Bus: sata, scsi or usb. Defaults to sata.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly defaults to true; a writable CD-ROM is refused.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
}

// Interface attaches the network of the same name to the guest.
type Interface struct {
	// Name of the interface; a network of the same name must exist.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Model of the emulated NIC: virtio, e1000, e1000e or rtl8139.
	// Defaults to virtio.
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
}

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
}

// InterfaceBridge is the bridge binding.
type InterfaceBridge struct{}

// InterfaceMasquerade is the masquerade (NAT) binding.
type InterfaceMasquerade struct{}

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

// Rng is a virtio random number generator.
type Rng struct{}

// Watchdog is a watchdog device.
type Watchdog struct {
	// Name of the watchdog.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// WatchdogDevice is the model. Exactly one member may be set.
	WatchdogDevice `json:",inline" protobuf:"bytes,2,opt,name=watchdogDevice"`
}

// WatchdogDevice is the model of a watchdog.
type WatchdogDevice struct {
	// I6300ESB is an Intel 6300ESB watchdog.
	// +optional
	I6300ESB *I6300ESBWatchdog `json:"i6300esb,omitempty" protobuf:"bytes,1,opt,name=i6300esb"`
}

// WatchdogAction is what happens when the watchdog fires.
// +enum
type WatchdogAction string

const (
	WatchdogActionPoweroff WatchdogAction = "poweroff"
	WatchdogActionReset    WatchdogAction = "reset"
	WatchdogActionShutdown WatchdogAction = "shutdown"
)

// I6300ESBWatchdog is an Intel 6300ESB watchdog.
type I6300ESBWatchdog struct {
	// Action when the watchdog fires: poweroff, reset or shutdown.
	// Defaults to reset.
	// +optional
	Action WatchdogAction `json:"action,omitempty" protobuf:"bytes,1,opt,name=action,casttype=WatchdogAction"`
}
