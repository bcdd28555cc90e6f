package apiserver

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	serverstorage "k8s.io/apiserver/pkg/server/storage"
	netutils "k8s.io/utils/net"

	"kubevirt.dev/virt/apis/virtualization"
	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/admission/fieldownership"
	"kubevirt.dev/virt/apiserver/admission/nodecapability"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/apiserver/etcd"
	"kubevirt.dev/virt/apiserver/eviction"
	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/store"
)

// etcdPrefix is the root of the server's keys in etcd. The storage adds
// <group>/<resource>/<namespace>/<name>, the layout the kube-apiserver uses
// for custom resources, so an external etcd can be shared safely.
const etcdPrefix = store.KeyRoot

// AwaitSnapshotEnv names the snapshot a store must start from when its
// flag is not given: the deployment sets it on the store's pod (the
// embedded virt-apiserver, or the HA members' init step) during a switch.
const AwaitSnapshotEnv = store.AwaitSnapshotEnv

// Options are the flags of virt-apiserver.
type Options struct {
	// Recommended are the options every aggregated API server has: serving,
	// delegated authentication and authorization, etcd, audit, admission.
	Recommended *genericoptions.RecommendedOptions
	// EmbeddedEtcd configures the etcd started in-process when
	// --etcd-servers is empty.
	EmbeddedEtcd etcd.Options
	// DataDir is the root of the server's own state (the embedded etcd).
	DataDir string
	// Standalone serves without a kube-apiserver: no authentication, no
	// authorization, no admission. For development and in-process tests only.
	Standalone bool
	// AlternateDNS are extra names of the self-signed serving certificate.
	AlternateDNS []string
	// NodeRestricted may write, list and watch only the VMIs of the node
	// their credentials were issued on (apiserver/admission/noderestriction).
	NodeRestricted noderestriction.Identities
	// ControllerServiceAccounts are virt-controller's service accounts (by
	// name, in any namespace): with NodeRestricted, who the ownership rule
	// holds to their rows (apiserver/admission/fieldownership).
	ControllerServiceAccounts []string
	// EvictionWebhookCallers may call the pods/eviction webhook; empty,
	// anyone (eviction.New).
	EvictionWebhookCallers []string
	// GuestAccess says how the guests' consoles, VNC and actions reach the
	// virt-handlers (docs/guest-access.md).
	GuestAccess *guestaccess.Options
	// ShutdownDelay keeps a stopping server serving, with /readyz failing,
	// until its load balancer (the aggregator's endpoints) has let it go;
	// kube-apiserver's --shutdown-delay-duration.
	ShutdownDelay time.Duration
	// ShutdownSendRetryAfter answers requests that still arrive after the
	// delay with 429 and Retry-After, which clients retry elsewhere, while
	// the in-flight ones finish; kube-apiserver's --shutdown-send-retry-after.
	ShutdownSendRetryAfter bool
	// StoreQuota is the store's --quota-backend-bytes: the embedded etcd's,
	// and what the quota warning (apiserver/storequota) compares with.
	StoreQuota int64
	// StoreQuotaCheckInterval is how often the store's size is checked;
	// 0: never.
	StoreQuotaCheckInterval time.Duration

	// embedded is set by Complete when no --etcd-servers were given.
	embedded bool
}

// NewOptions returns the defaults: embedded etcd under
// /var/lib/virt-apiserver, delegated authentication and authorization.
func NewOptions() *Options {
	o := &Options{
		// The storage codec follows --storage-media-type: Config builds it.
		Recommended:               genericoptions.NewRecommendedOptions(etcdPrefix, nil),
		DataDir:                   "/var/lib/virt-apiserver",
		EmbeddedEtcd:              etcd.Options{ClientPort: 2379, PeerPort: 2380},
		NodeRestricted:            noderestriction.Identities{ServiceAccounts: noderestriction.DefaultServiceAccounts},
		ControllerServiceAccounts: fieldownership.DefaultControllerServiceAccounts,
		GuestAccess:               guestaccess.NewOptions(),
		StoreQuota:                etcd.DefaultQuota,
		StoreQuotaCheckInterval:   time.Minute,
	}
	// The kube-apiserver calls admission webhooks without credentials
	// unless its AdmissionConfiguration gives it some, and then as a user
	// no RBAC role names by default: the webhook checks its callers itself
	// (--eviction-webhook-callers). What it does for any caller is in
	// docs/security.md.
	o.Recommended.Authorization.AlwaysAllowPaths = append(o.Recommended.Authorization.AlwaysAllowPaths, eviction.Path)
	// The plugin reads the user list when the chain is built, after flags.
	o.Recommended.Admission.Plugins.Register(noderestriction.PluginName, func(io.Reader) (admission.Interface, error) {
		return noderestriction.New(o.NodeRestricted), nil
	})
	// The ownership rule first: for a handler's status write beyond its
	// node it names the fields, where the node restriction names the node.
	o.Recommended.Admission.Plugins.Register(fieldownership.PluginName, func(io.Reader) (admission.Interface, error) {
		return fieldownership.New(o.writers()), nil
	})
	// What the nodes can run is read from the Nodes (the server's shared
	// kube informers, which the generic server hands the plugin and starts).
	o.Recommended.Admission.Plugins.Register(nodecapability.PluginName, func(io.Reader) (admission.Interface, error) {
		return nodecapability.New(), nil
	})
	o.Recommended.Admission.RecommendedPluginOrder = append(o.Recommended.Admission.RecommendedPluginOrder,
		fieldownership.PluginName, noderestriction.PluginName, nodecapability.PluginName)
	// Objects are stored as v1 protobuf unless --storage-media-type says
	// otherwise: a fraction of JSON's size and much cheaper to decode.
	o.Recommended.Etcd.DefaultStorageMediaType = runtime.ContentTypeProtobuf
	return o
}

// writers are the identities the ownership rule applies to.
func (o *Options) writers() fieldownership.Identities {
	return fieldownership.Identities{
		HandlerServiceAccounts:    o.NodeRestricted.ServiceAccounts,
		HandlerUsers:              o.NodeRestricted.Users,
		ControllerServiceAccounts: o.ControllerServiceAccounts,
	}
}

// storageCodec encodes objects for etcd as v1 in the --storage-media-type
// and decodes every encoding, so data written in another one (by an earlier
// version, or before the flag changed) stays readable.
func (o *Options) storageCodec() error {
	codec, versioner, err := serverstorage.NewStorageCodec(serverstorage.StorageCodecConfig{
		StorageMediaType:  o.Recommended.Etcd.DefaultStorageMediaType,
		StorageSerializer: Codecs,
		StorageVersion:    virtv1.SchemeGroupVersion,
		MemoryVersion:     virtualization.SchemeGroupVersion,
	})
	if err != nil {
		return fmt.Errorf("--storage-media-type: %w", err)
	}
	o.Recommended.Etcd.StorageConfig.Codec = codec
	o.Recommended.Etcd.StorageConfig.EncodeVersioner = versioner
	return nil
}

// AddFlags adds the flags of the options to fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	o.Recommended.AddFlags(fs)
	fs.StringVar(&o.DataDir, "data-dir", o.DataDir,
		"Directory of the embedded etcd's data, used when --etcd-servers is empty. Keep it on persistent storage: it holds every VMI and VM.")
	fs.StringVar(&o.EmbeddedEtcd.AwaitSnapshot, "embedded-etcd-await-snapshot", os.Getenv(AwaitSnapshotEnv),
		"The sha256 of a snapshot the embedded etcd must start from: it waits until `virt-apiserver store` stages it in <--data-dir>/restore, unless it started from it before (a mode switch carries the store so; docs/cluster.md). Default: $"+AwaitSnapshotEnv+".")
	fs.IntVar(&o.EmbeddedEtcd.ClientPort, "embedded-etcd-client-port", o.EmbeddedEtcd.ClientPort,
		"Loopback port of the embedded etcd's clients.")
	fs.IntVar(&o.EmbeddedEtcd.PeerPort, "embedded-etcd-peer-port", o.EmbeddedEtcd.PeerPort,
		"Loopback port of the embedded etcd's (unused) peer listener.")
	fs.BoolVar(&o.Standalone, "standalone", o.Standalone,
		"DEVELOPMENT ONLY: serve without a kube-apiserver. Requests are authenticated only by the client or request-header CA given (else anonymous), every request is authorized, and admission is only the node restriction and the ownership rule. Never use it in a cluster.")
	fs.StringSliceVar(&o.NodeRestricted.ServiceAccounts, "node-restricted-service-accounts", o.NodeRestricted.ServiceAccounts,
		"Names of the node daemons' service accounts, in any namespace, that may write, list and watch only the VMIs of the node named in their credentials.")
	fs.StringSliceVar(&o.NodeRestricted.Users, "node-restricted-users", o.NodeRestricted.Users,
		"Further users restricted like --node-restricted-service-accounts.")
	fs.StringSliceVar(&o.ControllerServiceAccounts, "controller-service-accounts", o.ControllerServiceAccounts,
		"Names of virt-controller's service accounts, in any namespace, whose writes of VMIs and VMs must stay in the controllers' fields and phases (docs/ownership.md). The node daemons are --node-restricted-service-accounts.")
	fs.StringSliceVar(&o.EvictionWebhookCallers, "eviction-webhook-callers", o.EvictionWebhookCallers,
		"User names that may call the pods/eviction webhook: the kube-apiserver's identity from the kubeconfig of its AdmissionConfiguration (WebhookAdmissionConfiguration.kubeConfigFile). Others get 403. Empty: any caller, as the kube-apiserver calls webhooks without credentials by default (docs/security.md).")
	fs.StringSliceVar(&o.AlternateDNS, "alternate-dns", o.AlternateDNS,
		"Extra DNS names of the self-signed serving certificate made when no --tls-cert-file is given.")
	fs.DurationVar(&o.ShutdownDelay, "shutdown-delay-duration", o.ShutdownDelay,
		"Time to delay the termination. During that time the server keeps serving requests normally and /readyz returns failure, so that its endpoint is removed from the load balancer (several replicas behind the aggregator) before it stops.")
	fs.BoolVar(&o.ShutdownSendRetryAfter, "shutdown-send-retry-after", o.ShutdownSendRetryAfter,
		"If true, after --shutdown-delay-duration the server keeps listening until the in-flight requests are drained and answers new ones with 429 and a Retry-After header (and Connection: close), so clients retry on another replica.")
	fs.Int64Var(&o.StoreQuota, "store-quota-backend-bytes", o.StoreQuota,
		"The store's quota (etcd's --quota-backend-bytes): the embedded etcd's, and for --etcd-servers the one the members run with. A warning (log and event) is emitted when a member's database reaches 80% of it, and while etcd's NOSPACE alarm is raised.")
	fs.DurationVar(&o.StoreQuotaCheckInterval, "store-quota-check-interval", o.StoreQuotaCheckInterval,
		"How often the store's database size and alarms are checked; 0 disables the check.")
	o.GuestAccess.AddFlags(fs)
}

// Complete fills in what follows from other options: without
// --etcd-servers the storage points at the embedded etcd.
func (o *Options) Complete() {
	if len(o.Recommended.Etcd.StorageConfig.Transport.ServerList) == 0 {
		o.embedded = true
		o.Recommended.Etcd.StorageConfig.Transport.ServerList = []string{
			fmt.Sprintf("http://127.0.0.1:%d", o.EmbeddedEtcd.ClientPort)}
	}
	if o.EmbeddedEtcd.QuotaBackendBytes == 0 {
		o.EmbeddedEtcd.QuotaBackendBytes = o.StoreQuota
	}
	if o.EmbeddedEtcd.DataDir == "" {
		o.EmbeddedEtcd.DataDir = filepath.Join(o.DataDir, "etcd")
	}
	// virt-apiserver store stage hands a snapshot to the embedded etcd
	// here (apiserver/store); one of another store has no key of ours.
	if o.EmbeddedEtcd.RestoreDir == "" {
		o.EmbeddedEtcd.RestoreDir = filepath.Join(o.DataDir, "restore")
	}
	o.EmbeddedEtcd.RestoreCheckPrefix = store.GroupPrefix
	if o.Standalone {
		// Everything that needs a kube-apiserver is switched off.
		// Authentication stays for the certificates given by flag, which
		// need no kube-apiserver: tests act as the aggregator with them.
		o.Recommended.Authentication.RemoteKubeConfigFileOptional = true
		o.Recommended.Authentication.SkipInClusterLookup = true
		o.Recommended.Authorization = nil
		o.Recommended.CoreAPI = nil
		o.Recommended.Admission = nil
		o.Recommended.Features.EnablePriorityAndFairness = false
	}
}

// Validate reports every invalid option.
func (o *Options) Validate() error {
	var errs []error
	if o.embedded {
		if o.DataDir == "" {
			errs = append(errs, fmt.Errorf("--data-dir is required when --etcd-servers is empty"))
		}
		for _, p := range []struct {
			flag string
			port int
		}{{"--embedded-etcd-client-port", o.EmbeddedEtcd.ClientPort}, {"--embedded-etcd-peer-port", o.EmbeddedEtcd.PeerPort}} {
			if p.port < 1 || p.port > 65535 {
				errs = append(errs, fmt.Errorf("%s must be between 1 and 65535, got %d", p.flag, p.port))
			}
		}
		if o.EmbeddedEtcd.ClientPort == o.EmbeddedEtcd.PeerPort {
			errs = append(errs, fmt.Errorf("--embedded-etcd-client-port and --embedded-etcd-peer-port must differ"))
		}
	}
	if o.ShutdownDelay < 0 {
		errs = append(errs, fmt.Errorf("--shutdown-delay-duration must not be negative, got %s", o.ShutdownDelay))
	}
	errs = append(errs, o.GuestAccess.Validate()...)
	errs = append(errs, o.Recommended.Validate()...)
	return utilerrors.NewAggregate(errs)
}

// selfSignedCert makes a serving certificate when none is given, which is
// what a standalone server or a first try needs; in a cluster the APIService
// must trust it, so operators pass --tls-cert-file.
func (o *Options) selfSignedCert() error {
	return o.Recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", o.AlternateDNS,
		[]net.IP{netutils.ParseIPSloppy("127.0.0.1")})
}
