package domain

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// Domain types Host.Type may hold.
const (
	// TypeKVM runs the guest with hardware virtualisation.
	TypeKVM = "kvm"
	// TypeQEMU runs the guest under software emulation (QEMU TCG).
	TypeQEMU = "qemu"
	// TypeTest is libvirt's in-process test driver (unit tests only).
	TypeTest = "test"
)

// Disk formats of Disk.Format.
const (
	FormatRaw   = "raw"
	FormatQCOW2 = "qcow2"
)

// AliasPrefix starts the alias of every device made from a spec device:
// libvirt keeps user aliases only when they start with "ua-", and the alias
// maps a device back to its spec name.
const AliasPrefix = "ua-"

// Host is what Convert needs to know about the place the domain runs in.
type Host struct {
	// Type is the domain type: TypeKVM, TypeQEMU or TypeTest.
	Type string
	// Disks maps each volume name to the file that backs it. The caller
	// prepares the files (copies, empty disks, ISOs) and detects formats.
	Disks map[string]Disk
	// Kernel and Initrd are the files of spec.domain.firmware.kernelBoot.
	Kernel, Initrd string
	// SerialSocket is the unix socket the serial console listens on, and
	// SerialLog the file its output is appended to.
	SerialSocket, SerialLog string
	// VNCSocket is the unix socket the VNC server of the graphics device
	// listens on.
	VNCSocket string
	// EFI holds the OVMF firmware files for spec.domain.firmware.bootloader.efi.
	EFI EFIFirmware
	// Interfaces maps each spec interface's name to the NIC prepared for it
	// in the pod's network namespace.
	Interfaces map[string]Interface
}

// Interface is a guest NIC's side in the pod: the tap it opens.
type Interface struct {
	// Tap is the existing tap device, owned by the launcher's user.
	Tap string
	// MAC is the guest's address; empty takes the spec's macAddress.
	MAC string
	// MTU of the link, 0 for QEMU's default.
	MTU uint
}

// Disk is the file behind a volume.
type Disk struct {
	Path string
	// Format is FormatRaw or FormatQCOW2.
	Format string
	// Block says Path is a block device (a Block-mode claim), not a file.
	Block bool
	// ReadOnly makes the guest's disk read-only whatever the spec says: a
	// config volume's ISO or a config drive is the launcher's, rebuilt at
	// each start, never the guest's to write.
	ReadOnly bool
}

// EFIFirmware are the OVMF images: code and the template of the variable
// store, without and with Secure Boot.
type EFIFirmware struct {
	Code, Vars             string
	SecureCode, SecureVars string
}

// DebianOVMF is where Debian's ovmf package installs the firmware.
var DebianOVMF = EFIFirmware{
	Code:       "/usr/share/OVMF/OVMF_CODE_4M.fd",
	Vars:       "/usr/share/OVMF/OVMF_VARS_4M.fd",
	SecureCode: "/usr/share/OVMF/OVMF_CODE_4M.secboot.fd",
	SecureVars: "/usr/share/OVMF/OVMF_VARS_4M.ms.fd",
}

// Name is the libvirt domain name of a VMI. Several launchers share a node,
// and QEMU's cgroups and the node's process list are named after the domain,
// so the name carries the namespace and part of the UID, not only the name.
func Name(namespace, name string, uid types.UID) string {
	short := strings.ReplaceAll(string(uid), "-", "")
	if len(short) > 8 {
		short = short[:8]
	}
	return fmt.Sprintf("%s_%s_%s", namespace, name, short)
}
