package v1

// Devices are the devices attached to the guest.
type Devices struct {
	// Disks attach volumes to the guest. A volume without a disk of its
	// name gets a virtio disk (KubeVirt's defaulting).
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
	// UseVirtioTransitional attaches virtio devices in their transitional
	// form (virtio 0.9 and 1.0), for guests as old as CentOS 6.
	// +optional
	UseVirtioTransitional *bool `json:"useVirtioTransitional,omitempty" protobuf:"varint,8,opt,name=useVirtioTransitional"`
	// DisableHotplug keeps disks from being hotplugged. This platform never
	// hotplugs disks, so the guest is the same either way.
	// +optional
	DisableHotplug bool `json:"disableHotplug,omitempty" protobuf:"varint,9,opt,name=disableHotplug"`
	// Inputs are input devices: a tablet (absolute pointer, so the VNC
	// cursor follows the mouse) or a keyboard, on the usb or virtio bus.
	// +optional
	// +listType=map
	// +listMapKey=name
	Inputs []Input `json:"inputs,omitempty" protobuf:"bytes,10,rep,name=inputs"`
	// LogSerialConsole appends what the guest writes to its serial console
	// to a log file. Defaults to true.
	// +optional
	LogSerialConsole *bool `json:"logSerialConsole,omitempty" protobuf:"varint,11,opt,name=logSerialConsole"`
	// AutoattachMemBalloon adds a virtio memory balloon (which reports the
	// guest's memory statistics). Defaults to false here: the guest keeps
	// all the memory its pod was sized for.
	// +optional
	AutoattachMemBalloon *bool `json:"autoattachMemBalloon,omitempty" protobuf:"varint,12,opt,name=autoattachMemBalloon"`
	// AutoattachInputDevice adds a USB tablet when no input is given.
	// Defaults to false.
	// +optional
	AutoattachInputDevice *bool `json:"autoattachInputDevice,omitempty" protobuf:"varint,13,opt,name=autoattachInputDevice"`
	// AutoattachVSOCK gives the guest a virtio VSOCK device with a CID of
	// its own. true is refused: the nodes allocate no VSOCK CIDs.
	// +optional
	AutoattachVSOCK *bool `json:"autoattachVSOCK,omitempty" protobuf:"varint,14,opt,name=autoattachVSOCK"`
	// BlockMultiQueue gives each virtio disk one queue per vCPU.
	// +optional
	BlockMultiQueue *bool `json:"blockMultiQueue,omitempty" protobuf:"varint,15,opt,name=blockMultiQueue"`
	// NetworkInterfaceMultiQueue gives each virtio NIC one queue per vCPU,
	// at most 8.
	// +optional
	NetworkInterfaceMultiQueue *bool `json:"networkInterfaceMultiqueue,omitempty" protobuf:"varint,16,opt,name=networkInterfaceMultiqueue"`
	// GPUs passes GPUs through to the guest. Refused: this platform has no
	// device plugin or DRA driver for them.
	// +optional
	// +listType=atomic
	GPUs []GPU `json:"gpus,omitempty" protobuf:"bytes,17,rep,name=gpus"`
	// DownwardMetrics adds a virtio serial port with host metrics (vhostmd).
	// Refused: no node component serves the metrics.
	// +optional
	DownwardMetrics *DownwardMetrics `json:"downwardMetrics,omitempty" protobuf:"bytes,18,opt,name=downwardMetrics"`
	// PanicDevices report a guest crash to the host (isa, hyperv, pvpanic).
	// +optional
	// +listType=atomic
	PanicDevices []PanicDevice `json:"panicDevices,omitempty" protobuf:"bytes,19,rep,name=panicDevices"`
	// Filesystems share a volume with the guest as a file system
	// (virtiofs). Refused: the launcher runs no virtiofsd.
	// +optional
	// +listType=atomic
	Filesystems []Filesystem `json:"filesystems,omitempty" protobuf:"bytes,20,rep,name=filesystems"`
	// HostDevices passes host devices (PCI, mediated, USB) through to the
	// guest. Refused: this platform has no device plugin or DRA driver for
	// them.
	// +optional
	// +listType=atomic
	HostDevices []HostDevice `json:"hostDevices,omitempty" protobuf:"bytes,21,rep,name=hostDevices"`
	// ClientPassthrough redirects USB devices of a client (usbredir).
	// Refused: no client connection carries USB redirection here.
	// +optional
	ClientPassthrough *ClientPassthroughDevices `json:"clientPassthrough,omitempty" protobuf:"bytes,22,opt,name=clientPassthrough"`
	// Sound adds an emulated sound card (ich9 or ac97).
	// +optional
	Sound *SoundDevice `json:"sound,omitempty" protobuf:"bytes,23,opt,name=sound"`
	// TPM adds an emulated TPM 2.0 (swtpm).
	// +optional
	TPM *TPMDevice `json:"tpm,omitempty" protobuf:"bytes,24,opt,name=tpm"`
	// Video is the model of the graphics card: vga (the default), bochs,
	// cirrus, virtio or ramfb.
	// +optional
	Video *VideoDevice `json:"video,omitempty" protobuf:"bytes,25,opt,name=video"`
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
	// Diag288 is the s390x watchdog. Refused: the launcher runs x86_64 guests.
	// +optional
	Diag288 *Diag288Watchdog `json:"diag288,omitempty" protobuf:"bytes,2,opt,name=diag288"`
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

// Diag288Watchdog is the s390x watchdog.
type Diag288Watchdog struct {
	// Action when the watchdog fires: poweroff, reset or shutdown.
	// +optional
	Action WatchdogAction `json:"action,omitempty" protobuf:"bytes,1,opt,name=action,casttype=WatchdogAction"`
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
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Bus: usb or virtio. Defaults to usb.
	// +optional
	Bus InputBus `json:"bus,omitempty" protobuf:"bytes,2,opt,name=bus,casttype=InputBus"`
	// Type: tablet or keyboard. Defaults to tablet.
	// +optional
	Type InputType `json:"type" protobuf:"bytes,3,opt,name=type,casttype=InputType"`
}

// SoundDevice is an emulated sound card.
type SoundDevice struct {
	// Name of the device.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Model: ich9 or ac97. Defaults to ich9.
	// +optional
	Model string `json:"model,omitempty" protobuf:"bytes,2,opt,name=model"`
}

// TPMDevice is an emulated TPM.
type TPMDevice struct {
	// Enabled set to false removes the TPM. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// Persistent keeps the TPM's state across restarts of the VM.
	// +optional
	Persistent *bool `json:"persistent,omitempty" protobuf:"varint,2,opt,name=persistent"`
}

// VideoDevice is the graphics card.
type VideoDevice struct {
	// Type of the card: vga, bochs, cirrus, virtio or ramfb. Defaults to
	// vga.
	// +optional
	Type string `json:"type,omitempty" protobuf:"bytes,1,opt,name=type"`
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
	// +optional
	Model *PanicDeviceModel `json:"model,omitempty" protobuf:"bytes,1,opt,name=model,casttype=PanicDeviceModel"`
}

// Filesystem shares the volume of its name with the guest.
type Filesystem struct {
	// Name of the file system; a volume of the same name must exist.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// Virtiofs shares it through virtiofs.
	Virtiofs *FilesystemVirtiofs `json:"virtiofs" protobuf:"bytes,2,opt,name=virtiofs"`
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
	// +optional
	ClaimName string `json:"claimName,omitempty" protobuf:"bytes,1,opt,name=claimName"`
	// RequestName is the name of a request in that claim.
	// +optional
	RequestName string `json:"requestName,omitempty" protobuf:"bytes,2,opt,name=requestName"`
}

// GPU is a GPU passed through to the guest.
type GPU struct {
	// Name of the GPU in the guest's domain.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DeviceName is the resource name a device plugin offers it under.
	// +optional
	DeviceName string `json:"deviceName,omitempty" protobuf:"bytes,2,opt,name=deviceName"`
	// ClaimRequest takes the GPU from a DRA ResourceClaim instead.
	// +optional
	ClaimRequest `json:",inline" protobuf:"bytes,3,opt,name=claimRequest"`
	// VirtualGPUOptions configures a mediated (virtual) GPU.
	// +optional
	VirtualGPUOptions *VGPUOptions `json:"virtualGPUOptions,omitempty" protobuf:"bytes,4,opt,name=virtualGPUOptions"`
	// Tag is passed to the guest in config drive metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,5,opt,name=tag"`
}

// VGPUOptions configures a virtual GPU.
type VGPUOptions struct {
	// Display configures the vGPU's display.
	// +optional
	Display *VGPUDisplayOptions `json:"display,omitempty" protobuf:"bytes,1,opt,name=display"`
}

// VGPUDisplayOptions configures a vGPU's display.
type VGPUDisplayOptions struct {
	// Enabled turns the display on. Defaults to true.
	// +optional
	Enabled *bool `json:"enabled,omitempty" protobuf:"varint,1,opt,name=enabled"`
	// RamFB adds a boot framebuffer until the guest's GPU driver loads.
	// +optional
	RamFB *FeatureState `json:"ramFB,omitempty" protobuf:"bytes,2,opt,name=ramFB"`
}

// HostDevice is a host device passed through to the guest.
type HostDevice struct {
	// Name of the device in the guest's domain.
	Name string `json:"name" protobuf:"bytes,1,opt,name=name"`
	// DeviceName is the resource name a device plugin offers it under.
	// +optional
	DeviceName string `json:"deviceName,omitempty" protobuf:"bytes,2,opt,name=deviceName"`
	// ClaimRequest takes the device from a DRA ResourceClaim instead.
	// +optional
	ClaimRequest `json:",inline" protobuf:"bytes,3,opt,name=claimRequest"`
	// Tag is passed to the guest in config drive metadata.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,4,opt,name=tag"`
}
