package manager

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	logsapi "k8s.io/component-base/logs/api/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/certificate"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/controllers/migration"
	"kubevirt.dev/virt/controllers/nodehealth"
	"kubevirt.dev/virt/controllers/virtualmachine"
	"kubevirt.dev/virt/internal/apiclient"
	"kubevirt.dev/virt/internal/migrationcert"
	"kubevirt.dev/virt/internal/servingcert"
	"kubevirt.dev/virt/launcher/layout"
)

// Options are virt-controller's flags.
type Options struct {
	// Options reach the API servers.
	apiclient.Options

	LauncherImage       string
	LauncherPullPolicy  string
	LauncherRunAsUser   int64
	LauncherTunDevice   bool
	LauncherGraceMargin time.Duration

	// FilesystemOverhead is the share of a Filesystem-mode claim that a
	// disk image on it leaves to the file system, a decimal in [0, 1).
	FilesystemOverhead string

	// HandlerNamespace and HandlerServiceAccount are the handlers'
	// identity, the only requester of guest-access serving certificates.
	HandlerNamespace      string
	HandlerServiceAccount string
	// HandlerServingCACertFile and HandlerServingCAKeyFile are the CA the
	// handlers' serving certificates are signed with; empty: the
	// certificate controller does not run.
	HandlerServingCACertFile string
	HandlerServingCAKeyFile  string
	// HandlerCertMaxLifetime caps a handler serving certificate's lifetime.
	HandlerCertMaxLifetime time.Duration
	// HandlerMigrationCACertFile and HandlerMigrationCAKeyFile are the CA
	// of the handlers' migration identities (internal/migrationcert);
	// empty: their requests are neither approved nor signed.
	HandlerMigrationCACertFile string
	HandlerMigrationCAKeyFile  string

	HeartbeatTimeout time.Duration
	// FenceAfter and FenceAnnotations are the opt-in node fencing
	// policy (controllers/nodefence, docs/node-failure.md).
	FenceAfter       time.Duration
	FenceAnnotations bool
	// HandlerLeaseNamespace holds the virt-handlers' Leases (their
	// --lease-namespace).
	HandlerLeaseNamespace string
	Backoff               virtualmachine.Backoff
	Workers               int

	// Migration is the live-migration controller's configuration (its
	// Pod is filled from the launcher flags); MigrationBandwidth is the
	// --migration-bandwidth quantity, parsed by Validate.
	Migration          migration.Config
	MigrationBandwidth string

	// BindAddress serves /healthz and /metrics over plain HTTP.
	BindAddress string

	LeaderElect         bool
	LeaseName           string
	LeaseNamespace      string
	LeaseDuration       time.Duration
	LeaseRenewDeadline  time.Duration
	LeaseRetryPeriod    time.Duration
	HealthzLeaseTimeout time.Duration

	Logs *logsapi.LoggingConfiguration
}

// NewOptions returns the defaults.
func NewOptions() *Options {
	ns := os.Getenv("POD_NAMESPACE")
	if ns == "" {
		ns = "virt-system"
	}
	return &Options{
		Options:                  apiclient.Options{ContentType: "application/vnd.kubernetes.protobuf", QPS: 50, Burst: 100},
		LauncherPullPolicy:       string(corev1.PullIfNotPresent),
		LauncherRunAsUser:        layout.DefaultRunAsUser,
		LauncherTunDevice:        true,
		LauncherGraceMargin:      15 * time.Second,
		FilesystemOverhead:       string(virtv1.DefaultFilesystemOverhead),
		HandlerNamespace:         ns,
		HandlerServiceAccount:    "virt-handler",
		HandlerServingCACertFile: "/etc/virt-controller/handler-serving-ca/tls.crt",
		HandlerServingCAKeyFile:  "/etc/virt-controller/handler-serving-ca/tls.key",
		HandlerCertMaxLifetime:   certificate.DefaultMaxLifetime,
		HeartbeatTimeout:         nodehealth.DefaultHeartbeatTimeout,
		HandlerLeaseNamespace:    ns,
		FenceAnnotations:         true,
		Backoff:                  virtualmachine.DefaultBackoff,
		Migration:                migration.DefaultConfig(launcherpod.Config{}),
		MigrationBandwidth:       "0",
		Workers:                  3,
		BindAddress:              ":8080",
		LeaderElect:              true,
		LeaseName:                "virt-controller",
		LeaseNamespace:           ns,
		// A leader killed outright does not release the Lease: work stops
		// until a standby sees it expire, at most the lease duration plus
		// two jittered retry periods after the leader's last renewal (the
		// standby saw it up to one late and tries up to one later), and
		// resumes once its informers synced. 8 s / 1 s bound that to
		// 12.4 s (about 10 s typically) where kube-controller-manager's
		// 15 s / 2 s take up to 23.8 s; the reliability suite measures it
		// (docs/reliability.md). The cost: the leader writes the Lease to
		// the kube-apiserver every second instead of every two and the
		// standby reads it as often, and a leader that cannot renew for
		// 5 s (an API server restart) steps down and restarts. The 3 s
		// between renew deadline and lease duration is what keeps two
		// leaders apart: the old one has stopped before anyone may take
		// over.
		LeaseDuration:       8 * time.Second,
		LeaseRenewDeadline:  5 * time.Second,
		LeaseRetryPeriod:    time.Second,
		HealthzLeaseTimeout: 20 * time.Second,
		Logs:                logsapi.NewLoggingConfiguration(),
	}
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Options.AddFlags(fs)

	fs.StringVar(&o.LauncherImage, "launcher-image", o.LauncherImage, "image of the launcher pods (runs virt-launcher, ships virt-imagecopy)")
	fs.StringVar(&o.LauncherPullPolicy, "launcher-pull-policy", o.LauncherPullPolicy, "pull policy of the launcher image")
	fs.Int64Var(&o.LauncherRunAsUser, "launcher-run-as-user", o.LauncherRunAsUser,
		"UID, GID and fsGroup of the launcher pods' containers; -1 runs the images' own users")
	fs.BoolVar(&o.LauncherTunDevice, "launcher-tun-device", o.LauncherTunDevice,
		"launcher pods request /dev/net/tun ("+layout.TunResourceName+") from virt-handler's device plugin, and schedule only to nodes that advertise it")
	fs.DurationVar(&o.LauncherGraceMargin, "launcher-grace-margin", o.LauncherGraceMargin,
		"added to a VMI's grace period for its pod's, so the launcher can destroy the guest and exit")

	fs.StringVar(&o.FilesystemOverhead, "filesystem-overhead", o.FilesystemOverhead,
		"share of a Filesystem-mode PersistentVolumeClaim that the disk image virt-launcher creates on it leaves to the file system (KubeVirt's default)")

	fs.StringVar(&o.HandlerNamespace, "handler-namespace", o.HandlerNamespace,
		"namespace of virt-handler's service account, whose pods' bound tokens may request guest-access serving certificates (default: $POD_NAMESPACE or virt-system)")
	fs.StringVar(&o.HandlerServiceAccount, "handler-service-account", o.HandlerServiceAccount,
		"virt-handler's service account, the only requester of guest-access serving certificates ("+servingcert.SignerName+")")
	fs.StringVar(&o.HandlerServingCACertFile, "handler-serving-ca-cert-file", o.HandlerServingCACertFile,
		"CA certificate the handlers' guest-access serving certificates are signed with (virt-apiserver's --handler-client-cert-dir ca.crt); read for every signature; empty: requests are neither approved nor signed")
	fs.StringVar(&o.HandlerServingCAKeyFile, "handler-serving-ca-key-file", o.HandlerServingCAKeyFile,
		"key of --handler-serving-ca-cert-file")
	fs.StringVar(&o.HandlerMigrationCACertFile, "handler-migration-ca-cert-file", o.HandlerMigrationCACertFile,
		"CA certificate the handlers' migration certificates ("+migrationcert.SignerName+") are signed with (the handlers' --migration-ca-file); empty: they are neither approved nor signed, and live migrations wait")
	fs.StringVar(&o.HandlerMigrationCAKeyFile, "handler-migration-ca-key-file", o.HandlerMigrationCAKeyFile,
		"key of --handler-migration-ca-cert-file")
	fs.DurationVar(&o.HandlerCertMaxLifetime, "handler-cert-max-lifetime", o.HandlerCertMaxLifetime,
		"longest lifetime of a handler's guest-access serving certificate; shorter requests are honored")
	fs.DurationVar(&o.HeartbeatTimeout, "heartbeat-timeout", o.HeartbeatTimeout,
		"age of a node's virt-handler Lease after which the node is unresponsive: its VMIs get the NodeUnresponsive condition, and fail if their launcher pod is known not to run")
	fs.DurationVar(&o.FenceAfter, "fence-unresponsive-nodes-after", o.FenceAfter,
		"taint a node node.kubernetes.io/out-of-service once it has been NotReady with a stale virt-handler Lease for longer than this, "+
			"so that its VMs restart elsewhere; ASSUMES such a node is powered off (docs/node-failure.md); 0: never, unless a VMI's "+
			virtv1.FenceNodeAfterAnnotation+" annotation asks")
	fs.BoolVar(&o.FenceAnnotations, "fence-node-annotations", o.FenceAnnotations,
		"honor the "+virtv1.FenceNodeAfterAnnotation+" annotation of VMIs (and VMs), which overrides --fence-unresponsive-nodes-after either way; false: only the flag counts")
	fs.StringVar(&o.HandlerLeaseNamespace, "handler-lease-namespace", o.HandlerLeaseNamespace,
		"namespace of the virt-handlers' Leases (default: $POD_NAMESPACE or virt-system)")
	fs.DurationVar(&o.Backoff.Base, "start-backoff-base", o.Backoff.Base, "first delay after a VM's instance failed soon after it started")
	fs.DurationVar(&o.Backoff.Max, "start-backoff-max", o.Backoff.Max, "longest delay between a VM's failing instances")
	fs.DurationVar(&o.Backoff.Window, "start-backoff-window", o.Backoff.Window,
		"an instance that fails within this time of running counts as a failed start")
	fs.IntVar(&o.Workers, "workers", o.Workers, "workers per controller")
	o.addMigrationFlags(fs)

	fs.StringVar(&o.BindAddress, "bind-address", o.BindAddress, "address of /healthz and /metrics (plain HTTP)")

	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect, "run the controllers only while holding the Lease")
	fs.StringVar(&o.LeaseName, "leader-elect-resource-name", o.LeaseName, "name of the Lease")
	fs.StringVar(&o.LeaseNamespace, "leader-elect-resource-namespace", o.LeaseNamespace, "namespace of the Lease (default: $POD_NAMESPACE or virt-system)")
	fs.DurationVar(&o.LeaseDuration, "leader-elect-lease-duration", o.LeaseDuration, "how long a standby waits before taking over an unrenewed Lease")
	fs.DurationVar(&o.LeaseRenewDeadline, "leader-elect-renew-deadline", o.LeaseRenewDeadline, "how long the leader retries renewing before it gives up")
	fs.DurationVar(&o.LeaseRetryPeriod, "leader-elect-retry-period", o.LeaseRetryPeriod, "interval between attempts to acquire or renew the Lease")

	logsapi.AddFlags(o.Logs, fs)
}

// Validate reports flags that cannot work together.
func (o *Options) Validate() error {
	switch {
	case o.LauncherImage == "":
		return fmt.Errorf("--launcher-image is required")
	case o.Workers < 1:
		return fmt.Errorf("--workers must be at least 1")
	case !validOverhead(o.FilesystemOverhead):
		return fmt.Errorf("--filesystem-overhead must be a decimal in [0, 1), such as 0.055")
	case o.HandlerServingCACertFile != "" && (o.HandlerServingCAKeyFile == "" || o.HandlerNamespace == "" || o.HandlerServiceAccount == ""):
		return fmt.Errorf("--handler-serving-ca-cert-file needs --handler-serving-ca-key-file, --handler-namespace and --handler-service-account")
	case o.HandlerMigrationCACertFile != "" && (o.HandlerMigrationCAKeyFile == "" || o.HandlerNamespace == "" || o.HandlerServiceAccount == ""):
		return fmt.Errorf("--handler-migration-ca-cert-file needs --handler-migration-ca-key-file, --handler-namespace and --handler-service-account")
	case o.HandlerServingCACertFile != "" && o.HandlerCertMaxLifetime < 10*time.Minute:
		return fmt.Errorf("--handler-cert-max-lifetime must be at least 10m")
	case o.HeartbeatTimeout <= 0:
		return fmt.Errorf("--heartbeat-timeout must be positive")
	case o.FenceAfter < 0:
		return fmt.Errorf("--fence-unresponsive-nodes-after must not be negative (0 turns fencing off)")
	case o.HandlerLeaseNamespace == "":
		return fmt.Errorf("--handler-lease-namespace is required")
	case o.LeaderElect && !(o.LeaseDuration > o.LeaseRenewDeadline && o.LeaseRenewDeadline > o.LeaseRetryPeriod && o.LeaseRetryPeriod > 0):
		return fmt.Errorf("leader election needs lease duration > renew deadline > retry period > 0")
	case o.Backoff.Base <= 0 || o.Backoff.Max < o.Backoff.Base:
		return fmt.Errorf("--start-backoff-base must be positive and at most --start-backoff-max")
	}
	bw, err := resource.ParseQuantity(o.MigrationBandwidth)
	if err != nil {
		return fmt.Errorf("--migration-bandwidth: %w", err)
	}
	o.Migration.Bandwidth = bw
	if err := o.Migration.Validate(); err != nil {
		return err
	}
	switch corev1.PullPolicy(o.LauncherPullPolicy) {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return fmt.Errorf("--launcher-pull-policy must be Always, IfNotPresent or Never")
	}
	return logsapi.ValidateAndApply(o.Logs, nil)
}

// validOverhead reports whether s is a fraction a disk image can leave to
// the file system: at least 0, less than the whole volume.
func validOverhead(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	return err == nil && f >= 0 && f < 1
}

// addMigrationFlags registers the live-migration settings (docs/migration.md
// "Configuration"); the defaults are KubeVirt's code defaults.
func (o *Options) addMigrationFlags(fs *pflag.FlagSet) {
	m := &o.Migration
	fs.IntVar(&m.ParallelPerCluster, "migration-parallel-per-cluster", m.ParallelPerCluster,
		"most live migrations past Pending in the cluster at a time; more wait in Pending, evacuations first")
	fs.IntVar(&m.ParallelOutboundPerNode, "migration-parallel-outbound-per-node", m.ParallelOutboundPerNode,
		"most live migrations past Pending leaving one node at a time")
	fs.StringVar(&o.MigrationBandwidth, "migration-bandwidth", o.MigrationBandwidth,
		"bandwidth per migration in bytes per second, a quantity such as 64Mi; 0: unlimited")
	fs.Int64Var(&m.CompletionTimeoutPerGiB, "migration-completion-timeout-per-gib", m.CompletionTimeoutPerGiB,
		"seconds per GiB of guest memory (and pod-local disk) a migration may take before the source aborts it")
	fs.Int64Var(&m.ProgressTimeout, "migration-progress-timeout", m.ProgressTimeout,
		"seconds a migration may go without progress before the source aborts it")
	fs.BoolVar(&m.AllowAutoConverge, "migration-allow-auto-converge", m.AllowAutoConverge,
		"let libvirt slow the guest's vCPUs down when its memory changes faster than it is copied")
	fs.BoolVar(&m.AllowPostCopy, "migration-allow-post-copy", m.AllowPostCopy,
		"switch a migration that does not converge to post-copy (the guest runs on the target while its memory follows; a failure then loses the guest)")
	fs.StringVar((*string)(&m.SameNode), "migration-same-node", string(m.SameNode),
		"whether a migration's target pod may go to its source node: Never, IfOnlyNode (when no other schedulable node exists) or Always")
	fs.DurationVar(&m.UnschedulableTimeout, "migration-target-unschedulable-timeout", m.UnschedulableTimeout,
		"fail a migration whose target pod the scheduler could not place for this long")
	fs.DurationVar(&m.PendingTimeout, "migration-target-pending-timeout", m.PendingTimeout,
		"fail a migration whose target pod is not ready this long after its creation")
	fs.DurationVar(&m.EvacuationBackoff, "migration-evacuation-backoff", m.EvacuationBackoff,
		"delay of a VMI's next evacuation migration after a failed one, doubling per failure up to 5m")
}
