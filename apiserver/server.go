package apiserver

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/admission"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/authorization/union"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/admission/fieldownership"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/apiserver/etcd"
	"kubevirt.dev/virt/apiserver/eviction"
	"kubevirt.dev/virt/apiserver/exponentguard"
	"kubevirt.dev/virt/apiserver/guestaccess"
	"kubevirt.dev/virt/apiserver/patchguard"
	"kubevirt.dev/virt/apiserver/registry/virtualmachine"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstance"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancemigration"
	"kubevirt.dev/virt/apiserver/registry/virtualmachineinstancereplicaset"
	"kubevirt.dev/virt/apiserver/utf8guard"
	"kubevirt.dev/virt/generated/openapi"
)

// watchTerminationGracePeriod is how long a stopping server lets open
// watches run on before it closes them; clients re-establish them with the
// next server.
const watchTerminationGracePeriod = 5 * time.Second

// streamSubresources last as long as the user stays: like watches (and
// kube-apiserver's exec and attach) they are not cut off by the request
// timeout and hold no seat of the in-flight limits.
var streamSubresources = sets.NewString("console", "vnc")

// Config is the complete configuration of a virt-apiserver.
type Config struct {
	Generic *genericapiserver.RecommendedConfig
	// GuestAccess reaches the virt-handlers for the guests' consoles, VNC
	// and actions.
	GuestAccess *guestaccess.Handlers
	// EvictionWebhookCallers may call the pods/eviction webhook; empty,
	// anyone.
	EvictionWebhookCallers []string
}

// Server is a virt-apiserver ready to run.
type Server struct {
	Generic *genericapiserver.GenericAPIServer
}

// Config turns the options into a server configuration. With an embedded
// etcd, call it after etcd started: the storage health checks dial it.
func (o *Options) Config() (*Config, error) {
	if err := o.selfSignedCert(); err != nil {
		return nil, fmt.Errorf("create self-signed serving certificate: %w", err)
	}
	c := genericapiserver.NewRecommendedConfig(Codecs)
	namer := openapinamer.NewDefinitionNamer(Scheme)
	c.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIConfig.Info.Title = "virt-apiserver"
	c.OpenAPIConfig.Info.Version = virtv1.SchemeGroupVersion.Version
	c.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openapi.GetOpenAPIDefinitions, namer)
	c.OpenAPIV3Config.Info.Title = "virt-apiserver"
	c.OpenAPIV3Config.Info.Version = virtv1.SchemeGroupVersion.Version
	c.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	// Open watches (the aggregator's, every controller's and node's) would
	// hold the HTTP server's shutdown for its full timeout, longer than a
	// pod's grace period: end them once the server stops accepting requests.
	c.ShutdownWatchTerminationGracePeriod = watchTerminationGracePeriod
	c.ShutdownDelayDuration = o.ShutdownDelay
	c.ShutdownSendRetryAfter = o.ShutdownSendRetryAfter
	c.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), streamSubresources)
	if err := o.storageCodec(); err != nil {
		return nil, err
	}
	if err := o.Recommended.ApplyTo(c); err != nil {
		return nil, err
	}
	// Node daemons list and watch only their node's VMIs: decided before
	// the delegated authorizer (RBAC), which cannot see field selectors.
	// Standalone, where everything else is allowed, it still applies.
	granting := c.Authorization.Authorizer
	if granting == nil {
		granting = authorizerfactory.NewAlwaysAllowAuthorizer()
	}
	authz, err := union.New(
		union.NamedAuthorizer{AuthorizerName: noderestriction.AuthorizerName, Authorizer: noderestriction.NewReadAuthorizer(o.NodeRestricted)},
		union.NamedAuthorizer{AuthorizerName: "delegated", Authorizer: granting})
	if err != nil {
		return nil, err
	}
	c.Authorization.Authorizer = authz
	// Innermost, after authentication and authorization: only callers who
	// may write get their bodies read, and before any decoder runs.
	c.BuildHandlerChainFunc = func(h http.Handler, gc *genericapiserver.Config) http.Handler {
		guarded := patchguard.WithGuard(h, Codecs, virtv1.SchemeGroupVersion)
		guarded = utf8guard.WithGuard(guarded, gc.MaxRequestBodyBytes, Codecs, virtv1.SchemeGroupVersion)
		guarded = exponentguard.WithGuard(guarded, gc.MaxRequestBodyBytes, Codecs, virtv1.SchemeGroupVersion)
		return genericapiserver.DefaultBuildHandlerChain(guarded, gc)
	}
	if o.Standalone {
		// The generic admission chain needs a kube-apiserver; the node
		// restriction and the ownership rule do not, and tests of them run
		// standalone.
		c.AdmissionControl = admission.NewChainHandler(fieldownership.New(o.writers()), noderestriction.New(o.NodeRestricted))
	}
	// The handler pods are read from the kube-apiserver of --kubeconfig
	// (or the pod's service account); a standalone server has none.
	handlers, err := o.GuestAccess.Handlers(c.ClientConfig)
	if err != nil {
		return nil, err
	}
	return &Config{Generic: c, GuestAccess: handlers, EvictionWebhookCallers: o.EvictionWebhookCallers}, nil
}

// New builds the server and installs virtualization.kubevirt.io/v1.
func (c *Config) New() (*Server, error) {
	generic, err := c.Generic.Complete().New("virt-apiserver", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, err
	}
	vmi, vmiStatus, err := virtualmachineinstance.NewREST(Scheme, c.Generic.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	sizes, err := newInstancetypeStorage(c.Generic.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	expander := sizes.newExpander()
	vm, vmStatus, err := virtualmachine.NewREST(Scheme, c.Generic.RESTOptionsGetter, expander)
	if err != nil {
		return nil, err
	}
	// The VM's actions read its instance and shorten the instance's grace
	// period in the same server, without a client.
	vmLifecycle, err := virtualmachine.NewLifecycle(Scheme, vm, vmStatus, vmi)
	if err != nil {
		return nil, err
	}
	vmirs, vmirsStatus, vmirsScale, err := virtualmachineinstancereplicaset.NewREST(Scheme, c.Generic.RESTOptionsGetter)
	if err != nil {
		return nil, err
	}
	// A new migration is checked against its VMI in this server's storage.
	vmim, vmimStatus, err := virtualmachineinstancemigration.NewREST(Scheme, c.Generic.RESTOptionsGetter, vmi)
	if err != nil {
		return nil, err
	}
	vmiMigrate, err := virtualmachineinstancemigration.NewMigrateREST(Scheme, vmim, nil)
	if err != nil {
		return nil, err
	}
	vmMigrate, err := virtualmachineinstancemigration.NewMigrateREST(Scheme, vmim, vm)
	if err != nil {
		return nil, err
	}
	guests, err := virtualmachineinstance.NewGuestAccess(Scheme, vmi, c.GuestAccess)
	if err != nil {
		return nil, err
	}
	group := genericapiserver.NewDefaultAPIGroupInfo(virtv1.GroupName, Scheme, metav1.ParameterCodec, Codecs)
	group.VersionedResourcesStorageMap[virtv1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"virtualmachineinstances":             vmi,
		"virtualmachineinstances/status":      vmiStatus,
		"virtualmachineinstances/console":     guests.Console,
		"virtualmachineinstances/vnc":         guests.VNC,
		"virtualmachineinstances/pause":       guests.Pause,
		"virtualmachineinstances/unpause":     guests.Unpause,
		"virtualmachineinstances/softreboot":  guests.SoftReboot,
		"virtualmachineinstances/guestosinfo": virtualmachineinstance.NewGuestOSInfoREST(vmi),
		"virtualmachines":                     vm,
		"virtualmachines/status":              vmStatus,
		"virtualmachines/start":               vmLifecycle.Start,
		"virtualmachines/stop":                vmLifecycle.Stop,
		"virtualmachines/restart":             vmLifecycle.Restart,
		"virtualmachines/expand-spec":         virtualmachine.NewExpandSpecREST(vm, expander),
	}
	for resource, storage := range sizes.storage() {
		group.VersionedResourcesStorageMap[virtv1.SchemeGroupVersion.Version][resource] = storage
	}
	maps.Copy(group.VersionedResourcesStorageMap[virtv1.SchemeGroupVersion.Version], map[string]rest.Storage{
		"virtualmachineinstancereplicasets":        vmirs,
		"virtualmachineinstancereplicasets/status": vmirsStatus,
		"virtualmachineinstancereplicasets/scale":  vmirsScale,
		"virtualmachineinstancemigrations":         vmim,
		"virtualmachineinstancemigrations/status":  vmimStatus,
		"virtualmachineinstances/migrate":          vmiMigrate,
		"virtualmachines/migrate":                  vmMigrate,
	})
	if err := generic.InstallAPIGroup(&group); err != nil {
		return nil, fmt.Errorf("install %s: %w", virtv1.GroupName, err)
	}
	if err := c.serveEvictionWebhook(generic, vmiStatus); err != nil {
		return nil, err
	}
	err = generic.AddPostStartHook("virt-guest-access", func(ctx genericapiserver.PostStartHookContext) error {
		if on, why := c.GuestAccess.Enabled(); !on {
			klog.FromContext(ctx).Info("Guest access is off: consoles, VNC and VMI actions answer 503", "reason", why)
			return nil
		}
		c.GuestAccess.Start(ctx)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &Server{Generic: generic}, nil
}

// serveEvictionWebhook serves the pods/eviction webhook (apiserver/eviction)
// beside the API, with the API's availability: a drain is exactly when
// every other component may be moving. The launcher pods are read from the
// kube-apiserver; a standalone server has none and serves no webhook.
func (c *Config) serveEvictionWebhook(generic *genericapiserver.GenericAPIServer, vmiStatus *virtualmachineinstance.StatusREST) error {
	if c.Generic.ClientConfig == nil {
		return nil
	}
	kube, err := kubernetes.NewForConfig(c.Generic.ClientConfig)
	if err != nil {
		return fmt.Errorf("client for the eviction webhook: %w", err)
	}
	pods := func(ctx context.Context, namespace, name string) (*corev1.Pod, error) {
		return kube.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	generic.Handler.NonGoRestfulMux.Handle(eviction.Path, eviction.New(pods, eviction.Store{Status: vmiStatus, Scheme: Scheme}, c.EvictionWebhookCallers...))
	return nil
}

// Run starts the embedded etcd when needed, serves until ctx ends, drains
// in-flight requests, and only then stops etcd so no write is cut off.
func (o *Options) Run(ctx context.Context) error {
	o.Complete()
	if err := o.Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	if o.embedded {
		e, err := etcd.Start(ctx, o.EmbeddedEtcd)
		if err != nil {
			return err
		}
		defer e.Close()
		go func() {
			select {
			case err := <-e.Err():
				klog.FromContext(ctx).Error(err, "Embedded etcd failed; shutting down")
				cancel(fmt.Errorf("embedded etcd failed: %w", err))
			case <-ctx.Done():
			}
		}()
	}

	config, err := o.Config()
	if err != nil {
		return err
	}
	server, err := config.New()
	if err != nil {
		return err
	}
	if o.StoreQuotaCheckInterval > 0 {
		go func() {
			if err := o.watchStoreQuota(ctx, config.Generic.ClientConfig); err != nil {
				klog.FromContext(ctx).Error(err, "The store quota check does not run")
			}
		}()
	}
	if err := server.Generic.PrepareRun().RunWithContext(ctx); err != nil {
		return err
	}
	if cause := context.Cause(ctx); cause != nil && cause != context.Canceled {
		return cause
	}
	return nil
}
