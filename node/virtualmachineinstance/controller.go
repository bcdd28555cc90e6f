package virtualmachineinstance

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/node/monitor"
	"kubevirt.dev/virt/node/podfs"
)

// Event reasons on the VMI.
const (
	ReasonStarted             = "Started"
	ReasonPaused              = "Paused"
	ReasonResumed             = "Resumed"
	ReasonShuttingDown        = "ShuttingDown"
	ReasonStopped             = "Stopped"
	ReasonSyncFailed          = "SyncFailed"
	ReasonSyncRetrying        = "SyncRetrying"
	ReasonLauncherUnreachable = "LauncherUnreachable"
	ReasonShutdownUnconfirmed = "ShutdownUnconfirmed"
	ReasonNetworkSetupFailed  = "NetworkSetupFailed"
	// ReasonPodTerminating: the launcher pod of a running guest is being
	// evicted or deleted (not by the platform): the guest is being shut
	// down and the VMI will fail with reason PodTerminated.
	ReasonPodTerminating = "PodTerminating"
)

// NetworkPreparer readies the pod network for a VMI's NICs before its
// launcher starts the domain (node/network.Preparer).
type NetworkPreparer interface {
	// Prepare runs the VMI's network bindings in the network namespace of
	// the launcher serving the socket in its pod's private directory. It is
	// idempotent.
	Prepare(ctx context.Context, vmi *virtv1.VirtualMachineInstance, privateDir podfs.Dir) ([]*apiv1.InterfaceNetwork, error)
}

// Config is what the controller needs to know about its node.
type Config struct {
	// NodeName is this node; only its VMIs and pods are handled.
	NodeName string
	// PodFiles is where the launchers' sockets and final states are (below
	// the kubelet's root directory) and which uid serves the sockets.
	PodFiles podfs.Pods
	// Monitor tunes the calls to launchers.
	Monitor monitor.Config
	// UnreachableAfter is how long a launcher may fail to answer before a
	// warning event, and before a VMI being deleted is let go without a
	// confirmed shutdown (the pod's deletion then stops the guest).
	UnreachableAfter time.Duration
	// Network prepares the guests' NICs in their pods. Required.
	Network NetworkPreparer
	// StrayInterval is how often the node looks for guests no VMI of it
	// claims any more (besides the looks the informers' events ask for);
	// 0: DefaultStrayInterval.
	StrayInterval time.Duration
	// Migration lets the node take part in live migrations, as a source
	// and (with WatchMigrationTargets) as a target; nil: it never does.
	Migration *MigrationConfig
}

// Controller is the node's VMI controller. Create it with New and start it
// with Run.
type Controller struct {
	cfg  Config
	kube kubernetes.Interface
	virt virtclient.Interface

	vmiLister virtlisters.VirtualMachineInstanceLister
	// targetLister lists the VMIs migrating to this node
	// (WatchMigrationTargets), nil when it is never a target.
	targetLister virtlisters.VirtualMachineInstanceLister
	podLister    corelisters.PodLister
	podIndexer   cache.Indexer
	synced       []cache.InformerSynced

	queue    workqueue.TypedRateLimitingInterface[string]
	monitor  *monitor.Monitor
	recorder record.EventRecorder
	clock    clock.WithTicker

	// written remembers the VMIs this controller wrote, until the informer
	// shows them: a sync on a cache that lags behind its own write would
	// otherwise recompute and write again, and fail on the stale version.
	mu      sync.Mutex
	written map[string]writtenVMI
	// shutdownGrace is the grace period of the last Shutdown sent to each
	// VMI's launcher, so a shutdown is asked for once, before the
	// launcher's watch reports it, and again only when the VMI's grace
	// period shrank (virtctl stop --grace-period shortens it).
	shutdownGrace map[types.UID]int64
	// terminating are the launcher pods whose termination was told in an
	// event (ReasonPodTerminating), by pod UID, with the words: the end of
	// a guest whose pod is gone by then is blamed on it.
	terminating map[types.UID]string
	// guestReports rate-limits the GuestReportCut events.
	guestReports guestReportWarner
	// strays are the launchers on this node no VMI claims (stray.go).
	strays *strays
	// migrations are the proxies of the node's live migrations
	// (migration.go).
	migrations *migrations
}

type writtenVMI struct {
	// replaced are the versions the writes started from.
	replaced sets.Set[string]
	vmi      *virtv1.VirtualMachineInstance
}

// New wires the controller to its informers, which should be restricted to
// the node: VMIs by status.nodeName, pods by spec.nodeName and the launcher
// component label. Launcher watches live until ctx ends.
func New(ctx context.Context, cfg Config, kube kubernetes.Interface, virt virtclient.Interface,
	vmis virtinformers.VirtualMachineInstanceInformer, pods coreinformers.PodInformer,
	recorder record.EventRecorder, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	if cfg.Network == nil {
		return nil, fmt.Errorf("no network preparer: guests would have no NICs")
	}
	ctrl := &Controller{
		cfg:        cfg,
		kube:       kube,
		virt:       virt,
		vmiLister:  vmis.Lister(),
		podLister:  pods.Lister(),
		podIndexer: pods.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{vmis.Informer().HasSynced, pods.Informer().HasSynced},
		recorder:   recorder,
		clock:      c,
		written:    map[string]writtenVMI{},
		strays:     newStrays(),
		migrations: newMigrations(),

		shutdownGrace: map[types.UID]int64{},
		terminating:   map[types.UID]string{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "handler-virtualmachineinstance", Clock: c},
		),
	}
	// A launcher's news enqueue its VMI: the sync reads them from the monitor.
	ctrl.monitor = monitor.New(ctx, cfg.Monitor, c, ctrl.queue.Add)
	if err := pods.Informer().AddIndexers(cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID}); err != nil {
		return nil, fmt.Errorf("index launcher pods by VMI: %w", err)
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc: ctrl.enqueue,
		UpdateFunc: func(old, obj any) {
			ctrl.enqueue(obj)
			// A VMI that ended no longer claims its launcher.
			if o, n := old.(*virtv1.VirtualMachineInstance), obj.(*virtv1.VirtualMachineInstance); !o.Status.Phase.IsFinal() && n.Status.Phase.IsFinal() {
				ctrl.sweepSoon()
			}
		},
		DeleteFunc: func(obj any) {
			ctrl.enqueue(obj)
			// Deleted, or handed to another node (it left the field
			// selector): its launcher here has no guest to run.
			ctrl.sweepSoon()
		},
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	if _, err := pods.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.podChanged,
		UpdateFunc: func(_, obj any) { ctrl.podChanged(obj) },
		DeleteFunc: ctrl.podDeleted,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch launcher pods: %w", err)
	}
	return ctrl, nil
}

// Run syncs VMIs with workers goroutines until ctx is done. Every VMI of the
// node is synced once the caches are filled (the informers' initial adds),
// so a restarted handler reconciles every launcher it finds.
//
// Before the first sync, with the caches filled, it destroys the guests of
// the launchers on the node that no VMI of the node claims any more
// (stray.go): a handler that starts, or whose node comes back after its
// VMIs were failed and restarted elsewhere, reports nothing about any VMI
// while such a guest may still run. It goes on looking for them while it
// runs.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	defer c.monitor.Close()
	logger := klog.FromContext(ctx)
	logger.Info("Starting VMI controller", "node", c.cfg.NodeName)
	defer logger.Info("Stopped VMI controller")

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("VMI controller: caches did not sync")
	}
	c.sweep(ctx)
	close(c.strays.swept)
	logger.Info("Looked for stray guests; syncing VMIs")
	interval := c.cfg.StrayInterval
	if interval <= 0 {
		interval = DefaultStrayInterval
	}
	go c.sweepLoop(ctx, interval)
	for range workers {
		go wait.UntilWithContext(ctx, c.worker, time.Second)
	}
	<-ctx.Done()
	return nil
}

// HasSynced reports whether the caches are filled and the first look for
// stray guests is over: the handler is ready.
func (c *Controller) HasSynced() bool {
	if !c.sweptOnce() {
		return false
	}
	for _, s := range c.synced {
		if !s() {
			return false
		}
	}
	return true
}

// Launchers are the connections the controller keeps to the launchers of
// its VMIs; guest access (node/guestaccess) calls the launchers through them.
func (c *Controller) Launchers() *monitor.Monitor { return c.monitor }

func (c *Controller) worker(ctx context.Context) {
	for c.processNextWorkItem(ctx) {
	}
}

func (c *Controller) processNextWorkItem(ctx context.Context) bool {
	key, shutdown := c.queue.Get()
	if shutdown {
		return false
	}
	defer c.queue.Done(key)

	logger := klog.LoggerWithValues(klog.FromContext(ctx), "vmi", key)
	err := c.sync(klog.NewContext(ctx, logger), key)
	if err == nil {
		// Forget resets the key's back-off: the next failure starts short again.
		c.queue.Forget(key)
		return true
	}
	logger.Error(err, "Sync failed, requeuing")
	c.queue.AddRateLimited(key)
	return true
}

func (c *Controller) enqueue(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

// vmiKeyOf is the key of the VMI of a launcher pod, "" for other pods. Unlike
// virt-controller it also trusts the VMINameLabel of a pod without the owner
// reference.
func vmiKeyOf(pod *corev1.Pod) string {
	if key := vmipod.VMIKey(pod); key != "" {
		return key
	}
	if name := pod.Labels[virtv1.VMINameLabel]; name != "" {
		return pod.Namespace + "/" + name
	}
	return ""
}

func (c *Controller) podChanged(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.Spec.NodeName != c.cfg.NodeName {
		return
	}
	if !c.claimedPod(pod.UID) {
		c.sweepSoon()
	}
	if key := vmiKeyOf(pod); key != "" {
		c.queue.Add(key)
	}
}

func (c *Controller) podDeleted(obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		tombstone, ok := obj.(cache.DeletedFinalStateUnknown)
		if !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected object in pod delete event: %T", obj))
			return
		}
		if pod, ok = tombstone.Obj.(*corev1.Pod); !ok {
			utilruntime.HandleError(fmt.Errorf("unexpected tombstone object in pod delete event: %T", tombstone.Obj))
			return
		}
	}
	// The launcher's watch is kept: the sync that follows may still need
	// what it learnt, and forgets it.
	if key := vmiKeyOf(pod); key != "" {
		c.queue.Add(key)
	}
}
