package virtualization

// Devices are the devices attached to the guest.
type Devices struct {
	// Disks attach volumes to the guest. A volume without a disk of its
	// name gets a virtio disk (KubeVirt's defaulting).
	Disks []Disk
	// Interfaces attach networks to the guest.
	Interfaces []Interface
	// AutoattachPodInterface adds a masquerade interface on the pod network
	// when no interface is given. Defaults to true.
	AutoattachPodInterface *bool
	// AutoattachSerialConsole adds a serial console. Defaults to true.
	AutoattachSerialConsole *bool
	// Rng adds a virtio random number generator fed by the host.
	Rng *Rng
	// Watchdog adds a watchdog device.
	Watchdog *Watchdog
	// AutoattachGraphicsDevice adds a graphics device the guest's VNC
	// server shows. Defaults to true.
	AutoattachGraphicsDevice *bool
	// UseVirtioTransitional attaches virtio devices in their transitional
	// form (virtio 0.9 and 1.0), for guests as old as CentOS 6.
	UseVirtioTransitional *bool
	// DisableHotplug keeps disks from being hotplugged. This platform never
	// hotplugs disks, so the guest is the same either way.
	DisableHotplug bool
	// Inputs are input devices: a tablet (absolute pointer, so the VNC
	// cursor follows the mouse) or a keyboard, on the usb or virtio bus.
	Inputs []Input
	// LogSerialConsole appends what the guest writes to its serial console
	// to a log file. Defaults to true.
	LogSerialConsole *bool
	// AutoattachMemBalloon adds a virtio memory balloon (which reports the
	// guest's memory statistics). Defaults to false here: the guest keeps
	// all the memory its pod was sized for.
	AutoattachMemBalloon *bool
	// AutoattachInputDevice adds a USB tablet when no input is given.
	// Defaults to false.
	AutoattachInputDevice *bool
	// AutoattachVSOCK gives the guest a virtio VSOCK device with a CID of
	// its own. true is refused: the nodes allocate no VSOCK CIDs.
	AutoattachVSOCK *bool
	// BlockMultiQueue gives each virtio disk one queue per vCPU.
	BlockMultiQueue *bool
	// NetworkInterfaceMultiQueue gives each virtio NIC one queue per vCPU,
	// at most 8.
	NetworkInterfaceMultiQueue *bool
	// GPUs passes GPUs through to the guest. Refused: this platform has no
	// device plugin or DRA driver for them.
	GPUs []GPU
	// DownwardMetrics adds a virtio serial port with host metrics (vhostmd).
	// Refused: no node component serves the metrics.
	DownwardMetrics *DownwardMetrics
	// PanicDevices report a guest crash to the host (isa, hyperv, pvpanic).
	PanicDevices []PanicDevice
	// Filesystems share a volume with the guest as a file system
	// (virtiofs). Refused: the launcher runs no virtiofsd.
	Filesystems []Filesystem
	// HostDevices passes host devices (PCI, mediated, USB) through to the
	// guest. Refused: this platform has no device plugin or DRA driver for
	// them.
	HostDevices []HostDevice
	// ClientPassthrough redirects USB devices of a client (usbredir).
	// Refused: no client connection carries USB redirection here.
	ClientPassthrough *ClientPassthroughDevices
	// Sound adds an emulated sound card (ich9 or ac97).
	Sound *SoundDevice
	// TPM adds an emulated TPM 2.0 (swtpm).
	TPM *TPMDevice
	// Video is the model of the graphics card: vga (the default), bochs,
	// cirrus, virtio or ramfb.
	Video *VideoDevice
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
	// Diag288 is the s390x watchdog. Refused: the launcher runs x86_64 guests.
	Diag288 *Diag288Watchdog
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

// Diag288Watchdog is the s390x watchdog.
type Diag288Watchdog struct {
	// Action when the watchdog fires: poweroff, reset or shutdown.
	Action WatchdogAction
}

// InputBus is the bus of an input device.
// +enum
type InputBus string

// InputType is the kind of an input device.
// +enum
type InputType string

// Input buses and types.
const (
	InputBusUSB       InputBus  = "usb"
	InputBusVirtio    InputBus  = "virtio"
	InputTypeTablet   InputType = "tablet"
	InputTypeKeyboard InputType = "keyboard"
)

// Input is an input device.
type Input struct {
	// Name of the device.
	Name string
	// Bus: usb or virtio. Defaults to usb.
	Bus InputBus
	// Type: tablet or keyboard. Defaults to tablet.
	Type InputType
}

// SoundDevice is an emulated sound card.
type SoundDevice struct {
	// Name of the device.
	Name string
	// Model: ich9 or ac97. Defaults to ich9.
	Model string
}

// TPMDevice is an emulated TPM.
type TPMDevice struct {
	// Enabled set to false removes the TPM. Defaults to true.
	Enabled *bool
	// Persistent keeps the TPM's state across restarts of the VM.
	Persistent *bool
}

// VideoDevice is the graphics card.
type VideoDevice struct {
	// Type of the card: vga, bochs, cirrus, virtio or ramfb. Defaults to
	// vga.
	Type string
}

// PanicDeviceModel is the model of a panic device.
// +enum
type PanicDeviceModel string

// Panic device models.
const (
	PanicDeviceHyperv  PanicDeviceModel = "hyperv"
	PanicDeviceIsa     PanicDeviceModel = "isa"
	PanicDevicePvpanic PanicDeviceModel = "pvpanic"
)

// PanicDevice reports a guest crash to the host.
type PanicDevice struct {
	// Model: isa, hyperv or pvpanic. Defaults to isa on x86_64.
	Model *PanicDeviceModel
}

// Filesystem shares the volume of its name with the guest.
type Filesystem struct {
	// Name of the file system; a volume of the same name must exist.
	Name string
	// Virtiofs shares it through virtiofs.
	Virtiofs *FilesystemVirtiofs
}

// FilesystemVirtiofs shares a volume through virtiofs.
type FilesystemVirtiofs struct{}

// DownwardMetrics is a virtio serial port carrying host metrics.
type DownwardMetrics struct{}

// ClientPassthroughDevices redirects a client's USB devices.
type ClientPassthroughDevices struct{}

// ClaimRequest names a request of a ResourceClaim of spec.resourceClaims.
type ClaimRequest struct {
	// ClaimName is the name of an entry of spec.resourceClaims.
	ClaimName string
	// RequestName is the name of a request in that claim.
	RequestName string
}

// GPU is a GPU passed through to the guest.
type GPU struct {
	// Name of the GPU in the guest's domain.
	Name string
	// DeviceName is the resource name a device plugin offers it under.
	DeviceName string
	// ClaimRequest takes the GPU from a DRA ResourceClaim instead.
	ClaimRequest
	// VirtualGPUOptions configures a mediated (virtual) GPU.
	VirtualGPUOptions *VGPUOptions
	// Tag is passed to the guest in config drive metadata.
	Tag string
}

// VGPUOptions configures a virtual GPU.
type VGPUOptions struct {
	// Display configures the vGPU's display.
	Display *VGPUDisplayOptions
}

// VGPUDisplayOptions configures a vGPU's display.
type VGPUDisplayOptions struct {
	// Enabled turns the display on. Defaults to true.
	Enabled *bool
	// RamFB adds a boot framebuffer until the guest's GPU driver loads.
	RamFB *FeatureState
}

// HostDevice is a host device passed through to the guest.
type HostDevice struct {
	// Name of the device in the guest's domain.
	Name string
	// DeviceName is the resource name a device plugin offers it under.
	DeviceName string
	// ClaimRequest takes the device from a DRA ResourceClaim instead.
	ClaimRequest
	// Tag is passed to the guest in config drive metadata.
	Tag string
}
