package virtualization

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/types"
)

// DomainSpec is the virtual hardware of a guest.
type DomainSpec struct {
	// Resources are the compute resources of the launcher pod. When
	// memory.guest is not set, requests.memory is the guest's memory.
	Resources ResourceRequirements
	// CPU topology and model. Defaults to one core.
	CPU *CPU
	// Memory of the guest.
	Memory *Memory
	// Machine type. Defaults to q35.
	Machine *Machine
	// Firmware: identity, boot loader, direct kernel boot.
	Firmware *Firmware
	// Devices attached to the guest.
	Devices Devices
}

// ResourceRequirements are the compute resources of the launcher pod.
type ResourceRequirements struct {
	// Requests of the launcher pod. The platform adds its own overhead on top.
	Requests corev1.ResourceList
	// Limits of the launcher pod.
	Limits corev1.ResourceList
	// OvercommitGuestOverhead leaves the platform's overhead out of the pod's
	// memory request (it is still added to the limit).
	OvercommitGuestOverhead bool
}

// CPU is the vCPU topology and model. vCPUs = sockets * cores * threads.
type CPU struct {
	// Cores per socket. Defaults to 1.
	Cores uint32
	// Sockets. Defaults to 1.
	Sockets uint32
	// Threads per core. Defaults to 1.
	Threads uint32
	// Model is a libvirt CPU model name, or host-model / host-passthrough.
	// Empty lets the hypervisor choose.
	Model string
}

// Memory is the memory of the guest.
type Memory struct {
	// Guest is the memory the guest sees. Defaults to resources.requests.memory.
	Guest *resource.Quantity
}

// Machine is the emulated chipset.
type Machine struct {
	// Type is a QEMU machine type, such as q35 or pc-q35-7.2.
	Type string
}

// Firmware is the identity and boot path of the guest.
type Firmware struct {
	// UUID is the SMBIOS system UUID the guest sees. When empty the VMI's
	// UID is used; a VirtualMachine sets one derived from its own UID so its
	// guests keep their identity across restarts.
	UUID types.UID
	// Serial is the SMBIOS system serial number.
	Serial string
	// Bootloader selects BIOS or EFI. Defaults to BIOS.
	Bootloader *Bootloader
	// KernelBoot boots a kernel and initrd directly, bypassing the boot loader.
	KernelBoot *KernelBoot
}

// Bootloader selects the firmware. Exactly one member may be set.
type Bootloader struct {
	// BIOS boots with SeaBIOS.
	BIOS *BIOS
	// EFI boots with OVMF.
	EFI *EFI
}

// BIOS is legacy BIOS firmware.
type BIOS struct {
	// UseSerial sends the BIOS's output to the serial console.
	UseSerial *bool
}

// EFI is UEFI firmware.
type EFI struct {
	// SecureBoot enables UEFI Secure Boot. Defaults to false.
	SecureBoot *bool
}

// KernelBoot boots a kernel directly.
type KernelBoot struct {
	// KernelArgs is the kernel command line.
	KernelArgs string
	// Container is the image the kernel and initrd are taken from.
	Container *KernelBootContainer
}

// KernelBootContainer is an image holding a kernel and an initrd.
type KernelBootContainer struct {
	// Image reference.
	Image string
	// ImagePullSecret names a secret in the VMI's namespace.
	ImagePullSecret string
	// KernelPath is the absolute path of the kernel inside the image.
	KernelPath string
	// InitrdPath is the absolute path of the initrd inside the image.
	InitrdPath string
	// ImagePullPolicy, as for containers.
	ImagePullPolicy corev1.PullPolicy
}

// Devices are the devices attached to the guest.
type Devices struct {
	// Disks attach volumes to the guest.
	Disks []Disk
	// Interfaces attach networks to the guest.
	Interfaces []Interface
	// AutoattachPodInterface adds a masquerade interface on the pod network
	// when no interface is given. Defaults to true.
	AutoattachPodInterface *bool
	// AutoattachSerialConsole adds a serial console. Defaults to true.
	AutoattachSerialConsole *bool
	// AutoattachGraphicsDevice adds a graphics device the guest's VNC
	// server shows. Defaults to true.
	AutoattachGraphicsDevice *bool
	// Rng adds a virtio random number generator fed by the host.
	Rng *Rng
	// Watchdog adds a watchdog device.
	Watchdog *Watchdog
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
	Name string
	// DiskDevice is the kind of device. Defaults to a virtio disk.
	DiskDevice
	// BootOrder is the position of the disk in the boot order, from 1.
	// Devices without one are not booted from.
	BootOrder *uint32
	// Serial number the guest sees.
	Serial string
}

// DiskDevice is the kind of a disk. At most one member may be set.
type DiskDevice struct {
	// Disk attaches the volume as a disk.
	Disk *DiskTarget
	// CDRom attaches the volume as a CD-ROM.
	CDRom *CDRomTarget
}

// DiskTarget is a disk device.
type DiskTarget struct {
	// Bus: virtio, sata, scsi or usb. Defaults to virtio.
	Bus DiskBus
	// ReadOnly exposes the disk read-only.
	ReadOnly bool
}

// CDRomTarget is a CD-ROM device.
type CDRomTarget struct {
	// Bus: sata, scsi or usb. Defaults to sata.
	Bus DiskBus
	// ReadOnly defaults to true; a writable CD-ROM is refused.
	ReadOnly *bool
}

// Interface attaches the network of the same name to the guest.
type Interface struct {
	// Name of the interface; a network of the same name must exist.
	Name string
	// Model of the emulated NIC: virtio, e1000, e1000e or rtl8139.
	// Defaults to virtio.
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
}

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
}

// InterfaceBridge is the bridge binding.
type InterfaceBridge struct{}

// InterfaceMasquerade is the masquerade (NAT) binding.
type InterfaceMasquerade struct{}

// Port is a port forwarded to the guest by the masquerade binding.
type Port struct {
	// Name of the port.
	Name string
	// Protocol: TCP or UDP. Defaults to TCP.
	Protocol string
	// Port number.
	Port int32
}

// Rng is a virtio random number generator.
type Rng struct{}

// Watchdog is a watchdog device.
type Watchdog struct {
	// Name of the watchdog.
	Name string
	// WatchdogDevice is the model. Exactly one member may be set.
	WatchdogDevice
}

// WatchdogDevice is the model of a watchdog.
type WatchdogDevice struct {
	// I6300ESB is an Intel 6300ESB watchdog.
	I6300ESB *I6300ESBWatchdog
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
	Action WatchdogAction
}
