package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-base/metrics/legacyregistry"
	// Register client-go's and the workqueue's metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/apiclient"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/node/deviceplugin"
	"kubevirt.dev/virt/node/guestaccess"
	"kubevirt.dev/virt/node/heartbeat"
	"kubevirt.dev/virt/node/migrationproxy"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/network"
	"kubevirt.dev/virt/node/network/bridge"
	"kubevirt.dev/virt/node/network/masquerade"
	"kubevirt.dev/virt/node/nodelabel"
	"kubevirt.dev/virt/node/virtualmachineinstance"
)

// component names virt-handler in events and user agents.
const component = "virt-handler"

// nodeNameField selects the VMIs handed to a node; virt-apiserver indexes it.
const nodeNameField = "status.nodeName"

// migrationTargetField selects the VMIs migrating to a node; virt-apiserver
// indexes it.
const migrationTargetField = "status.migrationState.targetNode"

// Run runs virt-handler until ctx is done. On the way out the node is
// marked unschedulable; the guests keep running.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	stopDevicePlugin, err := o.runTunDevicePlugin(ctx)
	if err != nil {
		return err
	}
	defer stopDevicePlugin()
	kube, virt, err := o.Clients(component + "/" + o.NodeName)
	if err != nil {
		return err
	}
	recorder, stopRecorder, err := apiclient.NewRecorder(ctx, kube, corev1.EventSource{Component: component, Host: o.NodeName})
	if err != nil {
		return err
	}
	defer stopRecorder()

	// Only this node's launcher pods and VMIs: the node never holds, and
	// with node restriction could not write, anyone else's.
	pods := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector("spec.nodeName", o.NodeName).String()
			lo.LabelSelector = labels.Set{virtv1.ComponentLabel: virtv1.LauncherComponent}.String()
		}))
	vmis := virtinformers.NewSharedInformerFactoryWithOptions(virt, 0,
		virtinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector(nodeNameField, o.NodeName).String()
		}))
	// The VMIs migrating to this node, before they are its (docs/migration.md).
	targets := virtinformers.NewSharedInformerFactoryWithOptions(virt, 0,
		virtinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.FieldSelector = fields.OneTermEqualSelector(migrationTargetField, o.NodeName).String()
		}))
	defer pods.Shutdown()
	defer vmis.Shutdown()
	defer targets.Shutdown()

	mon := monitor.DefaultConfig
	mon.CallTimeout, mon.SyncTimeout = o.LauncherCallTimeout, o.LauncherSyncTimeout
	// What the init container probed becomes the Node's capabilities;
	// never what a launcher in a tenant's pod says.
	if facts, err := nodelabel.ReadFacts(o.NodeFactsFile); err != nil {
		logger.Error(err, "No node facts: the Node's capabilities stay unreported", "file", o.NodeFactsFile)
	} else {
		reporter := nodelabel.New(kube, o.NodeName)
		reporter.Observe(facts)
		go reporter.Run(klog.NewContext(ctx, klog.LoggerWithName(logger, "capabilities")))
	}
	migration, stopMigrationCerts, err := o.migrationConfig(ctx, kube)
	if err != nil {
		return err
	}
	defer stopMigrationCerts()
	ctrl, err := virtualmachineinstance.New(ctx, virtualmachineinstance.Config{
		Migration:        migration,
		NodeName:         o.NodeName,
		PodFiles:         o.podFiles(),
		Monitor:          mon,
		UnreachableAfter: o.LauncherUnreachableAfter,
		// The node's network plugins, by the binding they implement.
		Network: network.Preparer{Bindings: network.Bindings{
			network.Masquerade: masquerade.Binding{},
			network.Bridge:     bridge.Binding{},
		}},
	}, kube, virt, vmis.Virtualization().V1().VirtualMachineInstances(), pods.Core().V1().Pods(), recorder, clock.RealClock{})
	if err != nil {
		return err
	}
	if migration != nil {
		if err := ctrl.WatchMigrationTargets(ctx, targets.Virtualization().V1().VirtualMachineInstances()); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", o.BindAddress)
	if err != nil {
		return fmt.Errorf("listen for /healthz and /metrics: %w", err)
	}
	srv := serve(ctx, ln, ctrl.HasSynced)
	defer srv.Close()
	logger.Info("Serving /healthz, /readyz and /metrics", "address", ln.Addr().String(), "node", o.NodeName, "kubeletRoot", o.KubeletRoot)

	stopGuestAccess, err := o.serveGuestAccess(ctx, kube, ctrl, vmis, pods)
	if err != nil {
		return err
	}
	defer stopGuestAccess()

	pods.Start(ctx.Done())
	vmis.Start(ctx.Done())
	targets.Start(ctx.Done())

	beat := heartbeat.New(kube, o.NodeName, o.LeaseNamespace, o.HeartbeatInterval, ctrl.HasSynced, clock.RealClock{})
	beatDone := make(chan struct{})
	go func() {
		defer close(beatDone)
		beat.Run(klog.NewContext(ctx, klog.LoggerWithName(logger, "heartbeat")))
	}()
	err = ctrl.Run(klog.NewContext(ctx, klog.LoggerWithName(logger, "vmi")), o.Workers)
	<-beatDone
	return err
}

// serveGuestAccess starts the HTTPS server of consoles, VNC and guest
// actions on the VMI controller's caches and launcher connections, until
// ctx ends or the returned stop is called; stop returns once it stopped.
//
// Its serving certificate is the node's own, requested and renewed through
// the certificates.k8s.io API (guestaccess.NewCertificateManager): until
// virt-controller signed the first one, handshakes fail and virt-apiserver
// answers 503; the VMIs are served meanwhile.
func (o *Options) serveGuestAccess(ctx context.Context, kube kubernetes.Interface, ctrl *virtualmachineinstance.Controller,
	vmis virtinformers.SharedInformerFactory, pods kubeinformers.SharedInformerFactory) (stop func(), err error) {
	logger := klog.LoggerWithName(klog.FromContext(ctx), "guest-access")
	if o.GuestAccessAddress == "" {
		logger.Info("Guest access not served (--guest-access-address is empty)")
		return func() {}, nil
	}
	ips, err := o.podIPs()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	certs, err := guestaccess.NewCertificateManager(ctx, kube, guestaccess.CertificateConfig{
		NodeName: o.NodeName,
		IPs:      ips,
		Dir:      o.GuestAccessCertStoreDir,
		Lifetime: o.GuestAccessCertLifetime,
	})
	if err != nil {
		cancel()
		return nil, err
	}
	tlsConfig, err := guestaccess.LoadTLSConfig(o.GuestAccessClientCAFile, certs.Current, o.GuestAccessClientName)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("%w (--guest-access-client-ca-file)", err)
	}
	ln, err := net.Listen("tcp", o.GuestAccessAddress)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("listen for guest access: %w", err)
	}
	certs.Start()
	srv := guestaccess.New(guestaccess.Config{
		NodeName:   o.NodeName,
		PodFiles:   o.podFiles(),
		ClientName: o.GuestAccessClientName,
		VMIs:       vmis.Virtualization().V1().VirtualMachineInstances().Lister(),
		// Indexed by VMI UID by the controller.
		Pods:      pods.Core().V1().Pods().Informer().GetIndexer(),
		HasSynced: ctrl.HasSynced,
		Launchers: ctrl.Launchers(),
	})
	logger.Info("Serving guest access", "address", ln.Addr().String(), "serverName", o.NodeName, "ips", ips,
		"clientCA", o.GuestAccessClientCAFile, "client", o.GuestAccessClientName)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ctx, ln, tlsConfig); err != nil {
			logger.Error(err, "Guest access server stopped")
		}
	}()
	return func() { cancel(); certs.Stop(); <-done }, nil
}

// migrationConfig is the node's part in live migrations (docs/migration.md):
// its migration certificate, requested and renewed through the
// certificates.k8s.io API until stop, the migration CA, and the pod IP its
// target listeners bind to. nil when --migration-ca-file is empty.
func (o *Options) migrationConfig(ctx context.Context, kube kubernetes.Interface) (cfg *virtualmachineinstance.MigrationConfig, stop func(), err error) {
	logger := klog.LoggerWithName(klog.FromContext(ctx), "migration")
	if o.MigrationCAFile == "" {
		logger.Info("Live migrations not taken part in (--migration-ca-file is empty)")
		return nil, func() {}, nil
	}
	ips, err := o.podIPs()
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	certs, err := migrationproxy.NewCertificateManager(ctx, kube, o.NodeName, o.MigrationCertStoreDir, migrationproxy.DefaultCertificateLifetime)
	if err != nil {
		cancel()
		return nil, nil, err
	}
	certs.Start()
	logger.Info("Taking part in live migrations", "address", ips[0].String(), "ca", o.MigrationCAFile)
	return &virtualmachineinstance.MigrationConfig{
		Address:  ips[0].String(),
		Identity: migrationproxy.Identity{Certificate: certs.Current, CAs: migrationproxy.CAFile(o.MigrationCAFile)},
	}, func() { cancel(); certs.Stop() }, nil
}

// runTunDevicePlugin advertises /dev/net/tun to the kubelet for launcher
// pods (node/deviceplugin) until ctx ends or the returned stop is called;
// stop returns once the plugin removed its socket.
func (o *Options) runTunDevicePlugin(ctx context.Context) (stop func(), err error) {
	logger := klog.LoggerWithName(klog.FromContext(ctx), "device-plugin")
	if o.TunDevices == 0 {
		logger.Info("Tun device plugin not run (--tun-devices=0): launcher pods that request " + layout.TunResourceName + " stay Pending")
		return func() {}, nil
	}
	plugin, err := deviceplugin.New(deviceplugin.Config{
		ResourceName: layout.TunResourceName,
		DevicePath:   layout.TunDevice,
		Count:        o.TunDevices,
		Dir:          o.DevicePluginDir,
		SocketName:   "virt-tun.sock",
	})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	done := make(chan struct{})
	go func() {
		defer close(done)
		plugin.Run(ctx)
	}()
	return func() { cancel(); <-done }, nil
}

// serve answers /healthz (the process serves), /readyz (its caches are
// filled, it handles VMIs) and /metrics.
func serve(ctx context.Context, ln net.Listener, ready func() bool) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready() {
			http.Error(w, "caches not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/metrics", legacyregistry.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.FromContext(ctx).Error(err, "HTTP server stopped")
		}
	}()
	return srv
}
