package manager

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/apiclient"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/deviceplugin"
	"kubevirt.dev/virt/node/guestaccess"
	"kubevirt.dev/virt/node/heartbeat"
	"kubevirt.dev/virt/node/monitor"
)

// Options are virt-handler's flags.
type Options struct {
	// NodeName is the node this handler runs on (downward API).
	NodeName string
	// KubeletRoot is the kubelet's --root-dir as mounted in this container.
	KubeletRoot string

	// Options reach the API servers.
	apiclient.Options

	HeartbeatInterval time.Duration
	// LeaseNamespace holds the node's Lease (heartbeat): the platform's
	// namespace, virt-controller's --handler-lease-namespace.
	LeaseNamespace string
	Workers        int
	// LauncherCallTimeout and LauncherSyncTimeout bound the launcher RPCs.
	LauncherCallTimeout time.Duration
	LauncherSyncTimeout time.Duration
	// LauncherUnreachableAfter: see virtualmachineinstance.Config.
	LauncherUnreachableAfter time.Duration

	// LauncherCapabilitiesCacheDir is the node's QEMU capabilities cache of the
	// launchers (their hostPath, as mounted here); empty: not prepared.
	LauncherCapabilitiesCacheDir string
	// LauncherRunAsUser is the launchers' UID and GID (virt-controller's
	// flag of the same name); -1: the image's user, the directory is left
	// as it is.
	LauncherRunAsUser int64

	// DevicePluginDir is the kubelet's device-plugin directory as mounted
	// here: the tun device plugin registers through its kubelet.sock and
	// serves beside it.
	DevicePluginDir string
	// TunDevices is how many launcher pods of the node may hold
	// /dev/net/tun (layout.TunResourceName) at once; 0: the device plugin
	// does not run.
	TunDevices int

	// BindAddress serves /healthz, /readyz and /metrics over plain HTTP.
	BindAddress string

	// GuestAccessAddress serves consoles, VNC and guest actions to
	// virt-apiserver (node/guestaccess); empty: not served.
	GuestAccessAddress string
	// GuestAccessCertDir holds ca.crt, tls.crt and tls.key of guest access.
	GuestAccessCertDir string
	// GuestAccessClientName is the common name a client certificate needs.
	GuestAccessClientName string

	Logs *logsapi.LoggingConfiguration
}

// DefaultTunDevices is the kubelet's default maxPods: every pod the node may
// run can be a launcher holding /dev/net/tun, so the resource never turns a
// launcher away before the pod count does. The devices are one shared node;
// the count only caps how many pods hold it.
const DefaultTunDevices = 110

// NewOptions returns the defaults.
func NewOptions() *Options {
	return &Options{
		NodeName:                     os.Getenv("NODE_NAME"),
		KubeletRoot:                  "/var/lib/kubelet",
		Options:                      apiclient.Options{ContentType: "application/vnd.kubernetes.protobuf", QPS: 20, Burst: 40},
		HeartbeatInterval:            heartbeat.DefaultInterval,
		LeaseNamespace:               namespace(),
		Workers:                      3,
		LauncherCallTimeout:          monitor.DefaultConfig.CallTimeout,
		LauncherSyncTimeout:          monitor.DefaultConfig.SyncTimeout,
		LauncherUnreachableAfter:     time.Minute,
		LauncherCapabilitiesCacheDir: layout.CapabilitiesCacheHostPath,
		LauncherRunAsUser:            layout.DefaultRunAsUser,
		DevicePluginDir:              deviceplugin.KubeletDir,
		TunDevices:                   DefaultTunDevices,
		BindAddress:                  ":8186",
		GuestAccessAddress:           ":8187",
		GuestAccessCertDir:           "/etc/virt-handler/guest-access",
		GuestAccessClientName:        guestaccess.DefaultClientName,
		Logs:                         logsapi.NewLoggingConfiguration(),
	}
}

// namespace is the pod's namespace (downward API), virt-system outside a pod.
func namespace() string {
	if ns := os.Getenv("POD_NAMESPACE"); ns != "" {
		return ns
	}
	return "virt-system"
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.NodeName, "node-name", o.NodeName, "name of this node (default: $NODE_NAME)")
	fs.StringVar(&o.KubeletRoot, "kubelet-root", o.KubeletRoot, "the kubelet's root directory as seen by this process; launcher sockets are in its pods/ directory")
	o.Options.AddFlags(fs)

	fs.DurationVar(&o.HeartbeatInterval, "heartbeat-interval", o.HeartbeatInterval,
		"how often the node's Lease is renewed (virt-controller's --heartbeat-timeout must be well above)")
	fs.StringVar(&o.LeaseNamespace, "lease-namespace", o.LeaseNamespace,
		"namespace of the node's Lease "+virtv1.HandlerLeasePrefix+"<node> (default: $POD_NAMESPACE or virt-system)")
	fs.IntVar(&o.Workers, "workers", o.Workers, "VMIs synced in parallel")
	fs.DurationVar(&o.LauncherCallTimeout, "launcher-call-timeout", o.LauncherCallTimeout, "timeout of a launcher's Info and Shutdown")
	fs.DurationVar(&o.LauncherSyncTimeout, "launcher-sync-timeout", o.LauncherSyncTimeout, "timeout of a launcher's Sync (prepares volumes, starts QEMU)")
	fs.DurationVar(&o.LauncherUnreachableAfter, "launcher-unreachable-after", o.LauncherUnreachableAfter,
		"a launcher silent for this long gets a warning event; a VMI being deleted is then released without a confirmed shutdown")
	fs.StringVar(&o.LauncherCapabilitiesCacheDir, "launcher-capabilities-cache-dir", o.LauncherCapabilitiesCacheDir,
		"the launchers' shared QEMU capabilities cache on this node (their hostPath, as mounted here), handed to --launcher-run-as-user at start; empty: left alone")
	fs.Int64Var(&o.LauncherRunAsUser, "launcher-run-as-user", o.LauncherRunAsUser,
		"UID and GID of the launchers (as virt-controller's flag); -1: the launcher image's user, the cache directory is not changed")
	fs.StringVar(&o.DevicePluginDir, "device-plugin-dir", o.DevicePluginDir,
		"the kubelet's device-plugin directory as seen by this process (kubelet.sock; the tun device plugin's socket is made there)")
	fs.IntVar(&o.TunDevices, "tun-devices", o.TunDevices,
		"how many launcher pods of this node may hold /dev/net/tun ("+layout.TunResourceName+") at once, at most one per pod the node runs; 0: the device plugin does not run")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "address of /healthz, /readyz and /metrics (plain HTTP)")
	fs.StringVar(&o.GuestAccessAddress, "guest-access-address", o.GuestAccessAddress,
		"address of the HTTPS server through which virt-apiserver reaches consoles, VNC and guest actions (mutual TLS); empty: not served")
	fs.StringVar(&o.GuestAccessCertDir, "guest-access-cert-dir", o.GuestAccessCertDir,
		"directory of guest access's ca.crt (the CA client certificates must chain to), tls.crt and tls.key (the server's); read at start")
	fs.StringVar(&o.GuestAccessClientName, "guest-access-client-name", o.GuestAccessClientName,
		"the only common name of a client certificate guest access serves")

	logsapi.AddFlags(o.Logs, fs)
}

// Validate reports flags that cannot work together and applies the
// logging flags.
func (o *Options) Validate() error {
	if err := o.validate(); err != nil {
		return err
	}
	return logsapi.ValidateAndApply(o.Logs, nil)
}

// validate checks the handler's own flags; logging can be applied only once
// per process.
func (o *Options) validate() error {
	switch {
	case o.NodeName == "":
		return fmt.Errorf("--node-name (or $NODE_NAME) is required")
	case o.KubeletRoot == "":
		return fmt.Errorf("--kubelet-root is required")
	case o.Workers < 1:
		return fmt.Errorf("--workers must be at least 1")
	case o.HeartbeatInterval < time.Second:
		return fmt.Errorf("--heartbeat-interval must be at least 1s (the Lease counts whole seconds)")
	case o.LeaseNamespace == "":
		return fmt.Errorf("--lease-namespace is required")
	case o.LauncherRunAsUser < -1:
		return fmt.Errorf("--launcher-run-as-user must be a UID or -1")
	case o.LauncherCallTimeout <= 0 || o.LauncherSyncTimeout <= 0 || o.LauncherUnreachableAfter <= 0:
		return fmt.Errorf("launcher timeouts must be positive")
	case o.TunDevices < 0:
		return fmt.Errorf("--tun-devices must be 0 or more")
	case o.TunDevices > 0 && o.DevicePluginDir == "":
		return fmt.Errorf("--tun-devices needs --device-plugin-dir")
	case o.GuestAccessAddress != "" && (o.GuestAccessCertDir == "" || o.GuestAccessClientName == ""):
		return fmt.Errorf("--guest-access-address needs --guest-access-cert-dir and --guest-access-client-name")
	}
	return nil
}
