package v1

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
	// DedicatedIOThread gives this virtio disk a QEMU I/O thread of its own.
	// +optional
	DedicatedIOThread *bool `json:"dedicatedIOThread,omitempty" protobuf:"varint,5,opt,name=dedicatedIOThread"`
	// Cache is the host's page cache mode for the disk: none (the host
	// does not cache; needs a file system with O_DIRECT), writethrough or
	// writeback. Empty is QEMU's default (writeback).
	// +optional
	Cache DriverCache `json:"cache,omitempty" protobuf:"bytes,6,opt,name=cache,casttype=DriverCache"`
	// IO is QEMU's I/O mode: native (Linux AIO; needs cache none, which it
	// implies when cache is empty), threads, or default.
	// +optional
	IO DriverIO `json:"io,omitempty" protobuf:"bytes,7,opt,name=io,casttype=DriverIO"`
	// Tag is passed to the guest in config drive metadata. This platform
	// has no config drive: the tag is kept and has no effect.
	// +optional
	Tag string `json:"tag,omitempty" protobuf:"bytes,8,opt,name=tag"`
	// BlockSize is the logical and physical block size the guest sees.
	// +optional
	BlockSize *BlockSize `json:"blockSize,omitempty" protobuf:"bytes,9,opt,name=blockSize"`
	// Shareable lets several guests write the disk at once (the host does
	// not cache it, and no lock is taken).
	// +optional
	Shareable *bool `json:"shareable,omitempty" protobuf:"varint,10,opt,name=shareable"`
	// ErrorPolicy is what an I/O error of the host does: stop (pause the
	// guest, QEMU's default), ignore, report (to the guest) or enospace
	// (report only "no space left", stop on others).
	// +optional
	ErrorPolicy *DiskErrorPolicy `json:"errorPolicy,omitempty" protobuf:"bytes,11,opt,name=errorPolicy,casttype=DiskErrorPolicy"`
	// ChangedBlockTracking records the blocks written for incremental
	// backups. Refused: this platform takes no backups.
	// +optional
	ChangedBlockTracking *bool `json:"changedBlockTracking,omitempty" protobuf:"varint,12,opt,name=changedBlockTracking"`
}

// DriverCache is a host cache mode of a disk.
// +enum
type DriverCache string

// DriverIO is a QEMU I/O mode of a disk.
// +enum
type DriverIO string

// DiskErrorPolicy is what an I/O error of the host does to the guest.
// +enum
type DiskErrorPolicy string

// Cache modes, I/O modes and error policies.
const (
	CacheNone         DriverCache     = "none"
	CacheWriteThrough DriverCache     = "writethrough"
	CacheWriteBack    DriverCache     = "writeback"
	IONative          DriverIO        = "native"
	IOThreads         DriverIO        = "threads"
	IODefault         DriverIO        = "default"
	DiskErrorStop     DiskErrorPolicy = "stop"
	DiskErrorIgnore   DiskErrorPolicy = "ignore"
	DiskErrorReport   DiskErrorPolicy = "report"
	DiskErrorEnospace DiskErrorPolicy = "enospace"
)

// BlockSize is the block size a disk shows the guest. Exactly one member
// may be set.
type BlockSize struct {
	// Custom sizes.
	// +optional
	Custom *CustomBlockSize `json:"custom,omitempty" protobuf:"bytes,1,opt,name=custom"`
	// MatchVolume takes the sizes of the volume's storage. Refused: the
	// launcher does not probe the storage's block sizes yet; give them in
	// custom.
	// +optional
	MatchVolume *FeatureState `json:"matchVolume,omitempty" protobuf:"bytes,2,opt,name=matchVolume"`
}

// CustomBlockSize is a block size given in bytes.
type CustomBlockSize struct {
	// Logical block size in bytes: 512 to 2 MiB, a power of two.
	// +optional
	Logical uint32 `json:"logical,omitempty" protobuf:"varint,1,opt,name=logical"`
	// Physical block size in bytes: at least the logical, a power of two.
	// +optional
	Physical uint32 `json:"physical,omitempty" protobuf:"varint,2,opt,name=physical"`
	// DiscardGranularity in bytes, a multiple of the logical size.
	// +optional
	DiscardGranularity *uint32 `json:"discardGranularity,omitempty" protobuf:"varint,3,opt,name=discardGranularity"`
}

// DiskDevice is the kind of a disk. At most one member may be set.
type DiskDevice struct {
	// Disk attaches the volume as a disk.
	// +optional
	Disk *DiskTarget `json:"disk,omitempty" protobuf:"bytes,1,opt,name=disk"`
	// CDRom attaches the volume as a CD-ROM.
	// +optional
	CDRom *CDRomTarget `json:"cdrom,omitempty" protobuf:"bytes,2,opt,name=cdrom"`
	// LUN passes a SCSI device through. Refused: it needs the raw SCSI
	// device of a Block-mode claim and the privilege to send it SCSI
	// commands, which the unprivileged launcher lacks.
	// +optional
	LUN *LunTarget `json:"lun,omitempty" protobuf:"bytes,3,opt,name=lun"`
}

// DiskTarget is a disk device.
type DiskTarget struct {
	// Bus: virtio, sata, scsi or usb. Defaults to virtio.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the disk read-only.
	// +optional
	ReadOnly bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// PciAddress places the disk at a PCI address, such as 0000:81:01.0.
	// Refused: libvirt places the devices here.
	// +optional
	PciAddress string `json:"pciAddress,omitempty" protobuf:"bytes,3,opt,name=pciAddress"`
}

// TrayState says whether a CD-ROM's tray is open.
// +enum
type TrayState string

// Tray states.
const (
	TrayStateOpen   TrayState = "open"
	TrayStateClosed TrayState = "closed"
)

// CDRomTarget is a CD-ROM device.
type CDRomTarget struct {
	// Bus: sata, scsi or usb. Defaults to sata.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly defaults to true; a writable CD-ROM is refused.
	// +optional
	ReadOnly *bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// Tray: open or closed. Defaults to closed.
	// +optional
	Tray TrayState `json:"tray,omitempty" protobuf:"bytes,3,opt,name=tray,casttype=TrayState"`
}

// LunTarget is a SCSI device passed through.
type LunTarget struct {
	// Bus: scsi.
	// +optional
	Bus DiskBus `json:"bus,omitempty" protobuf:"bytes,1,opt,name=bus,casttype=DiskBus"`
	// ReadOnly exposes the device read-only.
	// +optional
	ReadOnly bool `json:"readonly,omitempty" protobuf:"varint,2,opt,name=readonly"`
	// Reservation lets the guest take SCSI persistent reservations.
	// +optional
	Reservation bool `json:"reservation,omitempty" protobuf:"varint,3,opt,name=reservation"`
}
