package launcher

import (
	"fmt"
	"runtime/debug"
	"slices"
	"time"

	"github.com/spf13/pflag"

	"kubevirt.dev/virt/launcher/layout"
)

// Version is the launcher's version, set at link time with
// -ldflags "-X kubevirt.dev/virt/launcher.Version=..."; otherwise the module
// version of the build.
var Version = ""

func version() string {
	if Version != "" {
		return Version
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		return bi.Main.Version
	}
	return "unknown"
}

// Options are the launcher's flags.
type Options struct {
	VMINamespace       string
	VMIName            string
	VMIUID             string
	GracePeriodSeconds int64

	PrivateDir    string
	DisksDir      string
	PVCDir        string
	PVCDeviceDir  string
	KernelBootDir string
	SecretsDir    string
	ConfigDir     string
	AccessDir     string
	// ContainerDisks are the containerDisk volumes, whose containers'
	// records the launcher waits for before it marks its pod ready.
	ContainerDisks []string
	// KernelBootFiles are the files (layout.KernelName, InitrdName) the
	// kernel-boot image's container offers (kernelboot.Link): the launcher
	// links them below KernelBootDir before it marks its pod ready. None:
	// the files are in KernelBootDir already, or there is no kernel boot.
	KernelBootFiles []string
	// LibvirtURI empty means the embedded driver rooted in PrivateDir.
	LibvirtURI string
	// CapabilitiesSeedDir holds the image's read-only QEMU capabilities
	// cache entries (hypervisor.SeedCapabilities); "" or missing: libvirt
	// probes QEMU.
	CapabilitiesSeedDir string
	// WriteCapabilitiesSeed, when set, makes the process probe QEMU, write
	// a seed there and exit (the image build's step).
	WriteCapabilitiesSeed string
	// ProbeNode, when set, makes the process probe this node's hypervisor
	// as a launcher here would, write the facts to that file and exit
	// (virt-handler's init container; ProbeNode).
	ProbeNode string
	// ProbeTimeout bounds ProbeNode: libvirt starting QEMU to probe it.
	ProbeTimeout time.Duration
	// MigrationTarget makes the launcher run a private libvirtd (random
	// host UUID, its socket at layout.MigrationLibvirtSocket) instead of
	// the embedded driver, to receive its guest by live migration.
	MigrationTarget bool
	// StartupTimeout bounds the launcher's start, to its ready file: past
	// it the launcher exits failed, saying what it still waited for.
	StartupTimeout time.Duration
	// Linger is how long the launcher keeps serving after its domain ended,
	// for a node daemon that reconnects to ask how it ended.
	Linger time.Duration
	// GuestProbe, when set ("ping" or "exec"), makes the process run one
	// exec or guestAgentPing probe through the running launcher of its pod
	// and exit 0 when it passed (the compute container's exec probe;
	// launcher/guestprobe). The command of "exec" is the arguments.
	GuestProbe string
	// GuestProbeTimeout is the probe's timeoutSeconds.
	GuestProbeTimeout int32

	// exit ends the process when the start takes too long (os.Exit; tests
	// replace it).
	exit func(int)
}

// NewOptions returns the defaults of a launcher in its pod.
func NewOptions() *Options {
	return &Options{
		GracePeriodSeconds:  30,
		PrivateDir:          layout.PrivateDir,
		DisksDir:            layout.DisksDir,
		PVCDir:              layout.PVCDirRoot,
		PVCDeviceDir:        layout.PVCDeviceRoot,
		KernelBootDir:       layout.KernelBootDir,
		SecretsDir:          layout.SecretDirRoot,
		ConfigDir:           layout.ConfigDirRoot,
		AccessDir:           layout.AccessCredentialDirRoot,
		CapabilitiesSeedDir: layout.CapabilitiesSeedDir,
		ProbeTimeout:        2 * time.Minute,
		Linger:              3 * time.Second,
		StartupTimeout:      layout.StartupTimeout,
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.VMINamespace, "vmi-namespace", o.VMINamespace, "namespace of the VMI this launcher runs")
	fs.StringVar(&o.VMIName, "vmi-name", o.VMIName, "name of the VMI this launcher runs")
	fs.StringVar(&o.VMIUID, "vmi-uid", o.VMIUID, "UID of the VMI this launcher runs; Sync refuses any other")
	fs.Int64Var(&o.GracePeriodSeconds, "grace-period-seconds", o.GracePeriodSeconds,
		"seconds a guest gets to power off after SIGTERM (or a Shutdown without a grace period) before it is destroyed")
	fs.StringVar(&o.PrivateDir, "private-dir", o.PrivateDir, "directory of the socket, the embedded libvirt, the serial console and the final state")
	fs.StringVar(&o.DisksDir, "disks-dir", o.DisksDir, "directory of the volumes' files (<dir>/<volume>/disk.img, nocloud.iso)")
	fs.StringVar(&o.PVCDir, "pvc-dir", o.PVCDir, "parent of the persistentVolumeClaim mounts (<dir>/<volume>/disk.img)")
	fs.StringVar(&o.PVCDeviceDir, "pvc-device-dir", o.PVCDeviceDir, "parent of the devices of Block-mode persistentVolumeClaims (<dir>/<volume>)")
	fs.StringVar(&o.KernelBootDir, "kernel-boot-dir", o.KernelBootDir, "directory of the kernel and initrd of spec.domain.firmware.kernelBoot")
	fs.StringVar(&o.SecretsDir, "secrets-dir", o.SecretsDir, "parent of the cloud-init secret mounts (<dir>/<volume>/userdata, networkdata)")
	fs.StringVar(&o.ConfigDir, "config-dir", o.ConfigDir, "parent of the config volumes' mounts (<dir>/<volume>)")
	fs.StringVar(&o.AccessDir, "access-dir", o.AccessDir, "parent of the access credentials' secret mounts (<dir>/<index>)")
	fs.StringArrayVar(&o.ContainerDisks, "container-disk", o.ContainerDisks,
		"a containerDisk volume (repeated for each): the launcher is ready only once its container has written <disks-dir>/<volume>/containerdisk.json")
	fs.StringArrayVar(&o.KernelBootFiles, "kernel-boot-file", o.KernelBootFiles,
		"a file of the kernel-boot image, kernel or initrd (repeated for each): the launcher is ready only once it linked it to what its container offers in <kernel-boot-dir>/<file>.json")
	fs.StringVar(&o.LibvirtURI, "libvirt-uri", o.LibvirtURI,
		"libvirt URI; empty: the embedded QEMU driver, qemu:///embed?root=<private-dir>/libvirt (another URI may point at a private libvirtd)")
	fs.StringVar(&o.CapabilitiesSeedDir, "capabilities-seed-dir", o.CapabilitiesSeedDir,
		"read-only directory of QEMU capabilities probed when the image was built; empty or missing: libvirt probes QEMU")
	fs.StringVar(&o.WriteCapabilitiesSeed, "write-capabilities-seed", o.WriteCapabilitiesSeed,
		"probe QEMU, write a capabilities seed to this directory and exit (run when the launcher image is built)")
	fs.StringVar(&o.ProbeNode, "probe-node", o.ProbeNode,
		"probe this node's hypervisor as a launcher here would (embedded libvirt in a temporary directory), write its facts as JSON to this file and exit (virt-handler's init container)")
	fs.DurationVar(&o.ProbeTimeout, "probe-timeout", o.ProbeTimeout, "how long --probe-node may take before it fails")
	fs.BoolVar(&o.MigrationTarget, "migration-target", o.MigrationTarget,
		"receive the guest by live migration: run a private libvirtd (random host UUID, only the QEMU driver) on <private-dir>/mig/libvirt instead of the embedded driver; Sync is refused until the guest arrived")
	fs.DurationVar(&o.StartupTimeout, "startup-timeout", o.StartupTimeout,
		"how long the launcher may take to get ready (its socket served, its kernel-boot files and container disks there) before it exits failed")
	fs.DurationVar(&o.Linger, "linger", o.Linger, "how long to keep serving GetDomain after the domain ended, before exiting")
	fs.StringVar(&o.GuestProbe, "guest-probe", o.GuestProbe,
		"run one probe through the guest agent by asking this pod's launcher, and exit 0 when it passed: ping, or exec with the command as the arguments after --")
	fs.Int32Var(&o.GuestProbeTimeout, "guest-probe-timeout", o.GuestProbeTimeout, "the probe's timeout in seconds (0: 1)")
}

// Validate checks the options.
func (o *Options) Validate() error {
	switch {
	case o.VMINamespace == "" || o.VMIName == "" || o.VMIUID == "":
		return fmt.Errorf("--vmi-namespace, --vmi-name and --vmi-uid are required")
	case o.GracePeriodSeconds < 0:
		return fmt.Errorf("--grace-period-seconds must not be negative")
	case o.PrivateDir == "":
		return fmt.Errorf("--private-dir is required")
	case o.Linger < 0:
		return fmt.Errorf("--linger must not be negative")
	case o.StartupTimeout <= 0:
		return fmt.Errorf("--startup-timeout must be positive")
	case o.MigrationTarget && o.LibvirtURI != "":
		return fmt.Errorf("--migration-target runs its own libvirtd: --libvirt-uri must be empty")
	case slices.Contains(o.ContainerDisks, ""):
		return fmt.Errorf("--container-disk must name a volume")
	}
	for _, f := range o.KernelBootFiles {
		if f != layout.KernelName && f != layout.InitrdName {
			return fmt.Errorf("--kernel-boot-file must be %s or %s, not %q", layout.KernelName, layout.InitrdName, f)
		}
	}
	return nil
}
