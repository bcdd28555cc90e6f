package virtualization

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
	// DedicatedIOThread gives this virtio disk a QEMU I/O thread of its own.
	DedicatedIOThread *bool
	// Cache is the host's page cache mode for the disk: none (the host
	// does not cache; needs a file system with O_DIRECT), writethrough or
	// writeback. Empty is QEMU's default (writeback).
	Cache DriverCache
	// IO is QEMU's I/O mode: native (Linux AIO; needs cache none, which it
	// implies when cache is empty), threads, or default.
	IO DriverIO
	// Tag is passed to the guest in config drive metadata. This platform
	// has no config drive: the tag is kept and has no effect.
	Tag string
	// BlockSize is the logical and physical block size the guest sees.
	BlockSize *BlockSize
	// Shareable lets several guests write the disk at once (the host does
	// not cache it, and no lock is taken).
	Shareable *bool
	// ErrorPolicy is what an I/O error of the host does: stop (pause the
	// guest, QEMU's default), ignore, report (to the guest) or enospace
	// (report only "no space left", stop on others).
	ErrorPolicy *DiskErrorPolicy
	// ChangedBlockTracking records the blocks written for incremental
	// backups. Refused: this platform takes no backups.
	ChangedBlockTracking *bool
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
	Custom *CustomBlockSize
	// MatchVolume takes the sizes of the volume's storage. Refused: the
	// launcher does not probe the storage's block sizes yet; give them in
	// custom.
	MatchVolume *FeatureState
}

// CustomBlockSize is a block size given in bytes.
type CustomBlockSize struct {
	// Logical block size in bytes: 512 to 2 MiB, a power of two.
	Logical uint32
	// Physical block size in bytes: at least the logical, a power of two.
	Physical uint32
	// DiscardGranularity in bytes, a multiple of the logical size.
	DiscardGranularity *uint32
}

// DiskDevice is the kind of a disk. At most one member may be set.
type DiskDevice struct {
	// Disk attaches the volume as a disk.
	Disk *DiskTarget
	// CDRom attaches the volume as a CD-ROM.
	CDRom *CDRomTarget
	// LUN passes a SCSI device through. Refused: it needs the raw SCSI
	// device of a Block-mode claim and the privilege to send it SCSI
	// commands, which the unprivileged launcher lacks.
	LUN *LunTarget
}

// DiskTarget is a disk device.
type DiskTarget struct {
	// Bus: virtio, sata, scsi or usb. Defaults to virtio.
	Bus DiskBus
	// ReadOnly exposes the disk read-only.
	ReadOnly bool
	// PciAddress places the disk at a PCI address, such as 0000:81:01.0.
	// Refused: libvirt places the devices here.
	PciAddress string
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
	Bus DiskBus
	// ReadOnly defaults to true; a writable CD-ROM is refused.
	ReadOnly *bool
	// Tray: open or closed. Defaults to closed.
	Tray TrayState
}

// LunTarget is a SCSI device passed through.
type LunTarget struct {
	// Bus: scsi.
	Bus DiskBus
	// ReadOnly exposes the device read-only.
	ReadOnly bool
	// Reservation lets the guest take SCSI persistent reservations.
	Reservation bool
}
