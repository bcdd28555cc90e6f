package manager

import (
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/apiclient"
	"kubevirt.dev/virt/internal/migrationcert"
	"kubevirt.dev/virt/internal/servingcert"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/deviceplugin"
	"kubevirt.dev/virt/node/guestaccess"
	"kubevirt.dev/virt/node/heartbeat"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/podfs"
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

	// LauncherRunAsUser is the launchers' UID and GID (virt-controller's
	// flag of the same name); -1: the image's user.
	LauncherRunAsUser int64

	// DevicePluginDir is the kubelet's device-plugin directory as mounted
	// here: the tun device plugin registers through its kubelet.sock and
	// serves beside it.
	DevicePluginDir string
	// NodeFactsFile is what the init container probed (virt-launcher
	// --probe-node); the Node's capability labels come from it.
	NodeFactsFile string
	// TunDevices is how many launcher pods of the node may hold
	// /dev/net/tun (layout.TunResourceName) at once; 0: the device plugin
	// does not run.
	TunDevices int

	// BindAddress serves /healthz, /readyz and /metrics over plain HTTP.
	BindAddress string

	// GuestAccessAddress serves consoles, VNC and guest actions to
	// virt-apiserver (node/guestaccess); empty: not served.
	GuestAccessAddress string
	// GuestAccessClientCAFile is the CA of virt-apiserver's client
	// certificate.
	GuestAccessClientCAFile string
	// GuestAccessCertStoreDir keeps the node's serving certificate and key
	// across container restarts.
	GuestAccessCertStoreDir string
	// GuestAccessCertLifetime is the lifetime the serving certificate is
	// requested with.
	GuestAccessCertLifetime time.Duration
	// PodIPs are this pod's addresses, the IP addresses of the serving
	// certificate (downward API status.podIPs).
	PodIPs []string
	// GuestAccessClientName is the common name a client certificate needs.
	GuestAccessClientName string

	// MigrationCAFile is the CA of the handlers' migration certificates
	// (docs/migration.md); empty: the node takes no part in live
	// migrations.
	MigrationCAFile string
	// MigrationCertStoreDir keeps the node's migration certificate and key
	// across container restarts.
	MigrationCertStoreDir string

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
		NodeName:                 os.Getenv("NODE_NAME"),
		KubeletRoot:              "/var/lib/kubelet",
		Options:                  apiclient.Options{ContentType: "application/vnd.kubernetes.protobuf", QPS: 20, Burst: 40},
		HeartbeatInterval:        heartbeat.DefaultInterval,
		LeaseNamespace:           namespace(),
		Workers:                  3,
		LauncherCallTimeout:      monitor.DefaultConfig.CallTimeout,
		LauncherSyncTimeout:      monitor.DefaultConfig.SyncTimeout,
		LauncherUnreachableAfter: time.Minute,
		LauncherRunAsUser:        layout.DefaultRunAsUser,
		DevicePluginDir:          deviceplugin.KubeletDir,
		NodeFactsFile:            layout.NodeFactsFile,
		TunDevices:               DefaultTunDevices,
		BindAddress:              ":8186",
		GuestAccessAddress:       ":8187",
		GuestAccessClientCAFile:  "/etc/virt-handler/guest-access/ca.crt",
		GuestAccessCertStoreDir:  "/var/lib/virt-handler/guest-access",
		GuestAccessCertLifetime:  guestaccess.DefaultCertificateLifetime,
		PodIPs:                   podIPs(os.Getenv("POD_IPS")),
		GuestAccessClientName:    guestaccess.DefaultClientName,
		MigrationCertStoreDir:    "/var/lib/virt-handler/migration",
		Logs:                     logsapi.NewLoggingConfiguration(),
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
	fs.Int64Var(&o.LauncherRunAsUser, "launcher-run-as-user", o.LauncherRunAsUser,
		"UID and GID of the launchers (as virt-controller's flag), the only user whose sockets in launcher pods the handler dials; -1: the launcher image's user, and any socket owner but root is accepted; 0 is refused")
	fs.StringVar(&o.NodeFactsFile, "node-facts-file", o.NodeFactsFile,
		"the node's hypervisor facts written by the init container (virt-launcher --probe-node); the Node's capability labels come from it")
	fs.StringVar(&o.DevicePluginDir, "device-plugin-dir", o.DevicePluginDir,
		"the kubelet's device-plugin directory as seen by this process (kubelet.sock; the tun device plugin's socket is made there)")
	fs.IntVar(&o.TunDevices, "tun-devices", o.TunDevices,
		"how many launcher pods of this node may hold /dev/net/tun ("+layout.TunResourceName+") at once, at most one per pod the node runs; 0: the device plugin does not run")
	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "address of /healthz, /readyz and /metrics (plain HTTP)")
	fs.StringVar(&o.GuestAccessAddress, "guest-access-address", o.GuestAccessAddress,
		"address of the HTTPS server through which virt-apiserver reaches consoles, VNC and guest actions (mutual TLS); empty: not served")
	fs.StringVar(&o.GuestAccessClientCAFile, "guest-access-client-ca-file", o.GuestAccessClientCAFile,
		"the CA virt-apiserver's client certificate must chain to; read for every connection")
	fs.StringVar(&o.GuestAccessCertStoreDir, "guest-access-cert-store-dir", o.GuestAccessCertStoreDir,
		"where the node's guest-access serving key and certificate (requested through the certificates.k8s.io API, signer "+servingcert.SignerName+") are kept across container restarts")
	fs.DurationVar(&o.GuestAccessCertLifetime, "guest-access-cert-lifetime", o.GuestAccessCertLifetime,
		"lifetime asked for the guest-access serving certificate (at least 10m); it is renewed at 70-90% of it without a restart")
	fs.StringSliceVar(&o.PodIPs, "pod-ips", o.PodIPs, "this pod's IP addresses, put into the guest-access serving certificate (default: $POD_IPS)")
	fs.StringVar(&o.GuestAccessClientName, "guest-access-client-name", o.GuestAccessClientName,
		"the only common name of a client certificate guest access serves")
	fs.StringVar(&o.MigrationCAFile, "migration-ca-file", o.MigrationCAFile,
		"the CA of the handlers' migration certificates (signer "+migrationcert.SignerName+"), the only one trusted between handlers for live migrations; read when a migration starts; empty: this node is never a migration source or target")
	fs.StringVar(&o.MigrationCertStoreDir, "migration-cert-store-dir", o.MigrationCertStoreDir,
		"where the node's migration key and certificate (requested through the certificates.k8s.io API) are kept across container restarts")

	logsapi.AddFlags(o.Logs, fs)
}

// podFiles is how the handler reaches the launchers' files: below the
// kubelet's root, served by the launchers' uid (with -1, any uid but root
// that owns the socket file).
func (o *Options) podFiles() podfs.Pods {
	return podfs.Pods{KubeletRoot: o.KubeletRoot, LauncherUID: o.LauncherRunAsUser}
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
	case o.LauncherRunAsUser == 0:
		// A socket served by root in a pod's directory is never a
		// launcher's: it is how a tenant would point the handler at a
		// host daemon (node/podfs).
		return fmt.Errorf("--launcher-run-as-user must not be 0: the handler refuses launcher sockets served by root")
	case o.LauncherCallTimeout <= 0 || o.LauncherSyncTimeout <= 0 || o.LauncherUnreachableAfter <= 0:
		return fmt.Errorf("launcher timeouts must be positive")
	case o.TunDevices < 0:
		return fmt.Errorf("--tun-devices must be 0 or more")
	case o.TunDevices > 0 && o.DevicePluginDir == "":
		return fmt.Errorf("--tun-devices needs --device-plugin-dir")
	case o.GuestAccessAddress != "" && (o.GuestAccessClientCAFile == "" || o.GuestAccessCertStoreDir == "" || o.GuestAccessClientName == ""):
		return fmt.Errorf("--guest-access-address needs --guest-access-client-ca-file, --guest-access-cert-store-dir and --guest-access-client-name")
	case o.MigrationCAFile != "" && (o.MigrationCertStoreDir == "" || len(o.PodIPs) == 0):
		return fmt.Errorf("--migration-ca-file needs --migration-cert-store-dir and --pod-ips (the migration listeners' address)")
	case o.GuestAccessAddress != "" && o.GuestAccessCertLifetime < 10*time.Minute:
		return fmt.Errorf("--guest-access-cert-lifetime must be at least 10m (the certificates.k8s.io minimum)")
	}
	if _, err := o.podIPs(); err != nil {
		return err
	}
	return nil
}

// podIPs parses PodIPs.
func (o *Options) podIPs() ([]net.IP, error) {
	ips := make([]net.IP, 0, len(o.PodIPs))
	for _, s := range o.PodIPs {
		ip := net.ParseIP(s)
		if ip == nil {
			return nil, fmt.Errorf("--pod-ips: %q is not an IP address", s)
		}
		ips = append(ips, ip)
	}
	return ips, nil
}

// podIPs splits the downward API's comma-separated status.podIPs.
func podIPs(env string) []string {
	if env == "" {
		return nil
	}
	return strings.Split(env, ",")
}
