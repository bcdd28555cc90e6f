package layout

import (
	"path/filepath"
	"strconv"
	"time"
)

// ComputeContainer is the name of the launcher pod's container that runs
// virt-launcher: the controller builds it, the node reads its termination.
const ComputeContainer = "compute"

// StartupTimeout bounds a launcher's start, to its ready file: libvirt
// probing QEMU with a cold capabilities cache takes tens of seconds on a
// loaded node, and a container disk's image is pulled meanwhile. The
// launcher exits failed past it (and the kubelet's startup probe, which a
// VMI with probes has, kills it).
const StartupTimeout = 300 * time.Second

// Volumes of the launcher pod and where the launcher container mounts them.
const (
	// PrivateVolume is an emptyDir holding the launcher's socket, the
	// embedded libvirt's state and the serial log. The node daemon reaches
	// the socket through this volume's directory on the host.
	PrivateVolume = "virt-private"
	// PrivateDir is where PrivateVolume is mounted in the launcher container.
	PrivateDir = "/var/run/virt"

	// DisksVolume is an emptyDir holding the disk files the launcher
	// prepares: the writable overlays of container disks, empty disks,
	// cloud-init ISOs; and the records through which the containers of
	// containerDisk volumes say where their disks are
	// (ContainerDiskRecord).
	DisksVolume = "virt-disks"
	// DisksDir is where DisksVolume is mounted in every container of the pod.
	DisksDir = "/var/run/virt-disks"

	// KernelBootVolume is an emptyDir where the container of the
	// kernel-boot image offers its kernel and initrd (KernelBootRecord)
	// and the launcher links them (Kernel, Initrd).
	KernelBootVolume = "virt-kernel-boot"
	// KernelBootDir is where KernelBootVolume is mounted.
	KernelBootDir = "/var/run/virt-kernel-boot"

	// ToolsVolume is an emptyDir the launcher image's static tool
	// (virt-imagecopy) is placed in, so that containers running
	// container-disk and kernel-boot images (which contain nothing but
	// their files) have something to run: it holds their files for the
	// launcher. The launcher installs it (a postStart hook).
	ToolsVolume = "virt-tools"
	// ToolsDir is where ToolsVolume is mounted.
	ToolsDir = "/var/run/virt-tools"

	// CapabilitiesSeedDir is where the launcher image keeps the QEMU
	// capabilities libvirt cached when the image was built, read-only
	// (launcher/hypervisor.SeedCapabilities): a launcher seeds its private
	// libvirt root from it instead of probing QEMU for seconds. Nothing of
	// it is on the node or shared between pods.
	CapabilitiesSeedDir = "/usr/share/virt-launcher/capabilities-seed"

	// NodeFactsFile is where virt-handler's init container, the launcher
	// image run with --probe-node, writes what this node's hypervisor says
	// of itself (an InfoResponse as JSON), in an emptyDir of virt-handler's
	// pod that the handler mounts read-only and labels its Node from
	// (node/nodelabel). No launcher pod sees it.
	NodeFactsFile = "/var/run/virt-capabilities/facts.json"
	// NodeFactsMaxBytes bounds what the handler reads of NodeFactsFile.
	NodeFactsMaxBytes = 64 << 10

	// SecretDirRoot is the parent of the mounts of cloud-init secrets: the
	// secretRef of volume V at UserDataSecretDir and its
	// networkDataSecretRef at NetworkDataSecretDir, each holding the
	// secret's keys as files.
	SecretDirRoot = "/var/run/virt-secrets"

	// ConfigDirRoot is the parent of the mounts of config volumes
	// (configMap, secret, downwardAPI, serviceAccount, sysprep): volume V
	// is projected by the kubelet, read-only, at ConfigDir(ConfigDirRoot, V)
	// and the launcher turns that directory into the ISO ConfigISO.
	ConfigDirRoot = "/var/run/virt-config"
	// AccessCredentialDirRoot is the parent of the mounts of the secrets of
	// spec.accessCredentials: the i-th credential's secret is at
	// AccessCredentialDir(AccessCredentialDirRoot, i). The kubelet keeps
	// them current, so the launcher re-applies a changed one through the
	// guest agent.
	AccessCredentialDirRoot = "/var/run/virt-access"

	// PVCDirRoot is the parent of the mount points of persistentVolumeClaim
	// volumes: the claim of volume V is mounted at PVCDirRoot/V and its disk
	// image is the file disk.img inside (KubeVirt's filesystem-PVC convention).
	PVCDirRoot = "/var/run/virt-pvcs"
	// PVCDeviceRoot is the parent of the device nodes of Block-mode
	// persistentVolumeClaim volumes: the claim of volume V is the compute
	// container's volumeDevice at PVCDeviceRoot/V, and the guest's disk is
	// that device, raw.
	PVCDeviceRoot = "/dev/virt-pvcs"
)

// Files under PrivateDir.
const (
	// SocketDirName is the directory of the launcher's unix socket.
	SocketDirName = "sockets"
	// LauncherSocketName is the gRPC socket of launcher/api/v1, mode 0600.
	LauncherSocketName = "launcher.sock"
	// ReadyFileName exists once the launcher serves its socket and its
	// volumes are there; the node waits for it before its first call.
	ReadyFileName = "launcher.ready"
	// LibvirtDirName is the root of the embedded libvirt (qemu:///embed).
	LibvirtDirName = "libvirt"
	// LibvirtDaemonDirName is the root of a migration target's private
	// libvirtd (its XDG directories). Short: QEMU's monitor and guest agent
	// sockets end up four levels below it.
	LibvirtDaemonDirName = "lvd"
	// SerialLogName is the guest's serial console output, appended to. The
	// launcher keeps it under SerialLogMaxBytes (launcher/logrotation): past
	// that, its last SerialLogMaxBytes move to SerialLogName+".1" and it
	// starts empty.
	SerialLogName = "serial0.log"
	// SerialSocketName is the guest's serial console as a unix socket.
	SerialSocketName = "serial0.sock"
	// VNCSocketName is the guest's graphics console (QEMU's VNC server) as
	// a unix socket.
	VNCSocketName = "vnc.sock"
	// FinalStateName is the domain as it ended (protojson of the
	// launcher/api/v1 Domain message), written by the launcher when its guest
	// stops, before it exits. It outlives the launcher process.
	FinalStateName = "domain.final.json"
	// MigrationDirName holds a live migration's unix sockets (docs/migration.md):
	// in a source pod the ones virt-handler's source proxy listens on, in a
	// target pod the private libvirtd's and the incoming QEMU's. Names are
	// short so every path stays far below the 108-byte limit of a unix
	// socket address, whatever the kubelet root.
	MigrationDirName = "mig"
	// MigrationLibvirtSocketName: in a source pod the proxy to the target's
	// libvirtd; in a target pod that libvirtd's own socket.
	MigrationLibvirtSocketName = "libvirt"
	// MigrationQEMUSocketName: QEMU's migration stream. The same path in
	// both pods: the target's QEMU listens on it, the source's connects to
	// it (where the proxy listens).
	MigrationQEMUSocketName = "qemu"
	// MigrationBlockSocketName: the block copy (NBD) of the pod-local
	// writable disks (container disk overlays, empty disks), which the
	// target's QEMU serves and the source's writes to; the same path in both
	// pods, as MigrationQEMUSocketName.
	MigrationBlockSocketName = "nbd"
)

// SerialLogMaxBytes bounds the serial log, and QEMU's own log in the
// embedded libvirt's log directory, each: with their older generation, a
// guest that prints forever holds at most twice this on the node's disk,
// plus what it prints in the second between two checks (virtlogd's default
// max_size, as KubeVirt's launchers use it, is the same 2 MiB).
const SerialLogMaxBytes = 2 << 20

// Names inside DisksDir, KernelBootDir and SecretDirRoot.
const (
	// DiskImageName is the disk file of a volume, in DisksDir/<volume>/.
	DiskImageName = "disk.img"
	// NoCloudISOName is the cloud-init NoCloud ISO of a volume.
	NoCloudISOName = "nocloud.iso"
	// ConfigISOName is the ISO of a config volume or a config drive.
	ConfigISOName = "config.iso"
	// KernelName and InitrdName are the files of KernelBootDir.
	KernelName = "kernel"
	InitrdName = "initrd"
	// CopyToolName is the static tool in ToolsDir (virt-imagecopy).
	CopyToolName = "virt-imagecopy"
	// UserDataSecretName and NetworkDataSecretName are the mount points of
	// a volume's cloud-init secrets in SecretDirRoot/<volume>/.
	UserDataSecretName    = "userdata"
	NetworkDataSecretName = "networkdata"
)

// LauncherSocket is the launcher's socket path below a PrivateVolume directory
// (PrivateDir inside the pod; the emptyDir's host directory on the node).
func LauncherSocket(privateDir string) string {
	return filepath.Join(privateDir, SocketDirName, LauncherSocketName)
}

// ReadyFile is the readiness marker below a PrivateVolume directory.
func ReadyFile(privateDir string) string {
	return filepath.Join(privateDir, ReadyFileName)
}

// SerialLog is the serial log below a PrivateVolume directory.
func SerialLog(privateDir string) string {
	return filepath.Join(privateDir, SerialLogName)
}

// SerialSocket is the serial console socket below a PrivateVolume directory.
func SerialSocket(privateDir string) string {
	return filepath.Join(privateDir, SerialSocketName)
}

// VNCSocket is the VNC socket below a PrivateVolume directory. Like
// SerialSocket it sits in the emptyDir itself, so the node daemon reaches it
// through the volume's host directory.
func VNCSocket(privateDir string) string {
	return filepath.Join(privateDir, VNCSocketName)
}

// FinalStateFile is the final-state record below a PrivateVolume directory.
func FinalStateFile(privateDir string) string {
	return filepath.Join(privateDir, FinalStateName)
}

// MigrationDir is the migration sockets' directory below a PrivateVolume
// directory.
func MigrationDir(privateDir string) string {
	return filepath.Join(privateDir, MigrationDirName)
}

// MigrationLibvirtSocket is the libvirt socket of a migration below a
// PrivateVolume directory (see MigrationLibvirtSocketName).
func MigrationLibvirtSocket(privateDir string) string {
	return filepath.Join(privateDir, MigrationDirName, MigrationLibvirtSocketName)
}

// MigrationQEMUSocket is QEMU's migration stream below a PrivateVolume
// directory (see MigrationQEMUSocketName).
func MigrationQEMUSocket(privateDir string) string {
	return filepath.Join(privateDir, MigrationDirName, MigrationQEMUSocketName)
}

// MigrationBlockSocket is the block copy's socket below a PrivateVolume
// directory (see MigrationBlockSocketName).
func MigrationBlockSocket(privateDir string) string {
	return filepath.Join(privateDir, MigrationDirName, MigrationBlockSocketName)
}

// LibvirtRoot is the embedded libvirt's root below a PrivateVolume directory.
func LibvirtRoot(privateDir string) string {
	return filepath.Join(privateDir, LibvirtDirName)
}

// LibvirtDaemonRoot is a migration target's private libvirtd's root below a
// PrivateVolume directory.
func LibvirtDaemonRoot(privateDir string) string {
	return filepath.Join(privateDir, LibvirtDaemonDirName)
}

// DiskImage is the disk image of a volume below a directory of volumes:
// DisksDir for container and empty disks, PVCDirRoot for claims.
func DiskImage(dir, volume string) string {
	return filepath.Join(dir, volume, DiskImageName)
}

// PVCDevice is the device node of a Block-mode claim's volume below
// PVCDeviceRoot.
func PVCDevice(deviceRoot, volume string) string {
	return filepath.Join(deviceRoot, volume)
}

// NoCloudISO is the cloud-init NoCloud ISO of a volume below DisksDir.
func NoCloudISO(disksDir, volume string) string {
	return filepath.Join(disksDir, volume, NoCloudISOName)
}

// ConfigISO is the ISO of a config volume (or a cloudInitConfigDrive) below
// DisksDir.
func ConfigISO(disksDir, volume string) string {
	return filepath.Join(disksDir, volume, ConfigISOName)
}

// ConfigDir is where config volume V is projected below ConfigDirRoot.
func ConfigDir(configDirRoot, volume string) string {
	return filepath.Join(configDirRoot, volume)
}

// AccessCredentialDir is where the secret of the i-th access credential is
// projected below AccessCredentialDirRoot.
func AccessCredentialDir(root string, i int) string {
	return filepath.Join(root, strconv.Itoa(i))
}

// UserDataSecretDir is where the user-data secret (cloudInitNoCloud
// secretRef) of a volume is mounted below SecretDirRoot: a directory of the
// secret's keys.
func UserDataSecretDir(secretDirRoot, volume string) string {
	return filepath.Join(secretDirRoot, volume, UserDataSecretName)
}

// NetworkDataSecretDir is where the network-data secret (cloudInitNoCloud
// networkDataSecretRef) of a volume is mounted below SecretDirRoot.
func NetworkDataSecretDir(secretDirRoot, volume string) string {
	return filepath.Join(secretDirRoot, volume, NetworkDataSecretName)
}

// Kernel is the kernel of spec.domain.firmware.kernelBoot below KernelBootDir.
func Kernel(kernelBootDir string) string {
	return filepath.Join(kernelBootDir, KernelName)
}

// Initrd is the initrd of spec.domain.firmware.kernelBoot below KernelBootDir.
func Initrd(kernelBootDir string) string {
	return filepath.Join(kernelBootDir, InitrdName)
}

// KernelBootRecord is the record (ContainerDisk, JSON) through which the
// kernel-boot image's container offers file (KernelName or InitrdName)
// below KernelBootDir; the launcher links the file itself beside it.
func KernelBootRecord(kernelBootDir, file string) string {
	return filepath.Join(kernelBootDir, file+".json")
}

// HostPrivateDir is the host directory of a pod's PrivateVolume, below the
// kubelet's root directory (usually /var/lib/kubelet). Its socket path is
// longer than a unix socket address may be (108 bytes): dial it through an
// open directory descriptor (/proc/self/fd/N/...), not by its full path.
func HostPrivateDir(kubeletRoot, podUID string) string {
	return filepath.Join(kubeletRoot, "pods", podUID, "volumes", "kubernetes.io~empty-dir", PrivateVolume)
}
