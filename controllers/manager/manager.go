package manager

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/tools/record"
	"k8s.io/component-base/metrics/legacyregistry"
	// Register client-go's, the workqueues' and leader election's metrics.
	_ "k8s.io/component-base/metrics/prometheus/clientgo"
	_ "k8s.io/component-base/metrics/prometheus/clientgo/leaderelection"
	_ "k8s.io/component-base/metrics/prometheus/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/certificate"
	"kubevirt.dev/virt/controllers/guestpod"
	"kubevirt.dev/virt/controllers/launcherpod"
	"kubevirt.dev/virt/controllers/migration"
	"kubevirt.dev/virt/controllers/nodefence"
	"kubevirt.dev/virt/controllers/nodehealth"
	"kubevirt.dev/virt/controllers/replicaset"
	"kubevirt.dev/virt/controllers/virtualmachine"
	"kubevirt.dev/virt/controllers/virtualmachineinstance"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions"
	"kubevirt.dev/virt/internal/apiclient"
)

// component names virt-controller in events, user agents and the Lease.
const component = "virt-controller"

// migrationMetrics exports the migrations' phases from the current
// leadership term's cache (controllers/migration).
var migrationMetrics = func() *migration.Collector {
	c := migration.NewCollector(nil)
	legacyregistry.CustomMustRegister(c)
	return c
}()

// Run runs virt-controller until ctx is done, it loses the lead, or one of
// its controllers dies. The last two are errors: a process whose controllers
// were stopped midway restarts rather than trusting its state, and one whose
// controller died has released the Lease for a standby to take over.
func Run(ctx context.Context, o *Options) error {
	logger := klog.FromContext(ctx)
	kube, virt, err := o.Clients(component)
	if err != nil {
		return err
	}
	// The recorder outlives ctx, so that the event of the Lease's release
	// on shutdown is still sent.
	recorder, stopRecorder, err := apiclient.NewRecorder(ctx, kube, corev1.EventSource{Component: component})
	if err != nil {
		return err
	}
	defer stopRecorder()

	health := leaderelection.NewLeaderHealthzAdaptor(o.HealthzLeaseTimeout)
	ln, err := net.Listen("tcp", o.BindAddress)
	if err != nil {
		return fmt.Errorf("listen for /healthz and /metrics: %w", err)
	}
	srv := serve(ctx, ln, health)
	defer srv.Close()
	logger.Info("Serving /healthz and /metrics", "address", ln.Addr().String())

	lead := func(ctx context.Context) error {
		return runControllers(ctx, o, kube, virt, recorder)
	}
	if !o.LeaderElect {
		return lead(ctx)
	}

	host, err := os.Hostname()
	if err != nil {
		return fmt.Errorf("hostname for the leader identity: %w", err)
	}
	return runWhileLeading(ctx, leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.LeaseNamespace, Name: o.LeaseName},
			Client:     kube.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: host + "_" + uuid.NewString(), EventRecorder: recorder},
		},
		LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.LeaseRenewDeadline,
		RetryPeriod:   o.LeaseRetryPeriod,
		WatchDog:      health,
		Name:          component,
	}, lead)
}

// serve answers /healthz (failing when the leader stopped renewing its
// Lease: a hung leader gets restarted) and /metrics.
func serve(ctx context.Context, ln net.Listener, health *leaderelection.HealthzAdaptor) *http.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		if err := health.Check(r); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
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

// runControllers runs the controllers on fresh informers until ctx is
// done. Informers start only here, with the lead: a standby holds no caches
// and puts no watch load on the API servers.
func runControllers(ctx context.Context, o *Options, kube kubernetes.Interface, virt virtclient.Interface, recorder record.EventRecorder) error {
	launchers := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
		kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) {
			lo.LabelSelector = labels.Set{virtv1.ComponentLabel: virtv1.LauncherComponent}.String()
		}))
	cluster := kubeinformers.NewSharedInformerFactory(kube, 0)
	// The handlers' Leases, in their namespace only.
	handlerLeases := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0, kubeinformers.WithNamespace(o.HandlerLeaseNamespace))
	virtFactory := virtinformers.NewSharedInformerFactory(virt, 0)
	defer launchers.Shutdown()
	defer cluster.Shutdown()
	defer handlerLeases.Shutdown()
	defer virtFactory.Shutdown()
	// Shutdown waits for the informers, which stop only with ctx; when a
	// controller dies ctx is still live, so it is cancelled here first
	// (defers run last-in, first-out).
	ctx, stopInformers := context.WithCancel(ctx)
	defer stopInformers()

	vmis := virtFactory.Virtualization().V1().VirtualMachineInstances()
	pods := launchers.Core().V1().Pods()
	c := clock.RealClock{}

	podConfig := launcherpod.Config{
		LauncherImage:      o.LauncherImage,
		LauncherPullPolicy: corev1.PullPolicy(o.LauncherPullPolicy),
		GracePeriodMargin:  int64(o.LauncherGraceMargin / time.Second),
		TunDevice:          o.LauncherTunDevice,
	}
	if o.LauncherRunAsUser >= 0 {
		podConfig.RunAsUser = ptr.To(o.LauncherRunAsUser)
	}
	vmiCtrl, err := virtualmachineinstance.New(ctx, kube, virt, vmis, pods,
		cluster.Core().V1().PersistentVolumeClaims(), cluster.Storage().V1().StorageClasses(), recorder,
		virtualmachineinstance.Config{Pod: podConfig, FilesystemOverhead: virtv1.Percent(o.FilesystemOverhead)}, c)
	if err != nil {
		return err
	}
	nodeCtrl, err := nodehealth.New(ctx, kube, virt, cluster.Core().V1().Nodes(),
		handlerLeases.Coordination().V1().Leases(), o.HandlerLeaseNamespace, pods, vmis, recorder, o.HeartbeatTimeout, c)
	if err != nil {
		return err
	}
	fenceCtrl, err := nodefence.New(ctx, kube, cluster.Core().V1().Nodes(), handlerLeases.Coordination().V1().Leases(), vmis, recorder,
		nodefence.Config{After: o.FenceAfter, HonorAnnotations: o.FenceAnnotations, HeartbeatTimeout: o.HeartbeatTimeout,
			LeaseNamespace: o.HandlerLeaseNamespace}, c)
	if err != nil {
		return err
	}
	sizes := virtualmachine.NewInstancetypes(virt, virtFactory.Virtualization().V1())
	vmCtrl, err := virtualmachine.New(ctx, virt, virtFactory.Virtualization().V1().VirtualMachines(), vmis, sizes, recorder, o.Backoff, c)
	if err != nil {
		return err
	}
	rsCtrl, err := replicaset.New(ctx, virt, virtFactory.Virtualization().V1().VirtualMachineInstanceReplicaSets(), vmis, recorder,
		replicaset.DefaultBurst, c)
	if err != nil {
		return err
	}
	migCfg := o.Migration
	migCfg.Pod = podConfig
	migCtrl, err := migration.New(ctx, kube, virt, virtFactory.Virtualization().V1().VirtualMachineInstanceMigrations(), vmis, pods,
		cluster.Core().V1().Nodes(), cluster.Core().V1().PersistentVolumeClaims(), recorder, migCfg, c)
	if err != nil {
		return err
	}
	migrationMetrics.SetLister(migCtrl.Lister())
	defer migrationMetrics.SetLister(nil)
	guestPodCtrl, err := guestpod.New(ctx, kube, vmis, pods, c)
	if err != nil {
		return err
	}
	controllers := []namedController{
		{name: "vmi", run: func(ctx context.Context) error { return vmiCtrl.Run(ctx, o.Workers) }},
		{name: "guestpod", run: func(ctx context.Context) error { return guestPodCtrl.Run(ctx, o.Workers) }},
		{name: "node", run: func(ctx context.Context) error { return nodeCtrl.Run(ctx, o.Workers) }},
		{name: "nodefence", run: func(ctx context.Context) error { return fenceCtrl.Run(ctx, 1) }},
		{name: "vm", run: func(ctx context.Context) error { return vmCtrl.Run(ctx, o.Workers) }},
		{name: "vmirs", run: func(ctx context.Context) error { return rsCtrl.Run(ctx, o.Workers) }},
		{name: "migration", run: func(ctx context.Context) error { return migCtrl.Run(ctx, o.Workers) }},
	}
	if o.HandlerServingCACertFile != "" {
		// Only the requests of the handlers' signer are listed.
		csrs := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
			kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = certificate.SignerSelector() }))
		defer csrs.Shutdown()
		certCtrl, err := certificate.New(ctx, kube, csrs.Certificates().V1().CertificateSigningRequests(), certificate.Config{
			Requester:   certificate.Requester{Namespace: o.HandlerNamespace, ServiceAccount: o.HandlerServiceAccount},
			CA:          certificate.CA{CertFile: o.HandlerServingCACertFile, KeyFile: o.HandlerServingCAKeyFile},
			MaxLifetime: o.HandlerCertMaxLifetime,
		}, c)
		if err != nil {
			return err
		}
		csrs.Start(ctx.Done())
		controllers = append(controllers, namedController{name: "certificate", run: func(ctx context.Context) error { return certCtrl.Run(ctx, 1) }})
	} else {
		klog.FromContext(ctx).Info("Guest-access serving certificates are neither approved nor signed (--handler-serving-ca-cert-file is empty)")
	}
	if o.HandlerMigrationCACertFile != "" {
		// The migration signer's own requests, with its own CA.
		csrs := kubeinformers.NewSharedInformerFactoryWithOptions(kube, 0,
			kubeinformers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.FieldSelector = certificate.Migration.Selector() }))
		defer csrs.Shutdown()
		migCertCtrl, err := certificate.New(ctx, kube, csrs.Certificates().V1().CertificateSigningRequests(), certificate.Config{
			Requester:   certificate.Requester{Namespace: o.HandlerNamespace, ServiceAccount: o.HandlerServiceAccount},
			CA:          certificate.CA{CertFile: o.HandlerMigrationCACertFile, KeyFile: o.HandlerMigrationCAKeyFile},
			MaxLifetime: o.HandlerCertMaxLifetime,
			Profile:     certificate.Migration,
		}, c)
		if err != nil {
			return err
		}
		csrs.Start(ctx.Done())
		controllers = append(controllers, namedController{name: "migration-certificate", run: func(ctx context.Context) error { return migCertCtrl.Run(ctx, 1) }})
	} else {
		klog.FromContext(ctx).Info("Migration certificates are neither approved nor signed (--handler-migration-ca-cert-file is empty)")
	}
	launchers.Start(ctx.Done())
	cluster.Start(ctx.Done())
	handlerLeases.Start(ctx.Done())
	virtFactory.Start(ctx.Done())

	return runAll(ctx, controllers)
}
