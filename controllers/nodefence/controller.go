package nodefence

import (
	"context"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationinformers "k8s.io/client-go/informers/coordination/v1"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	coordinationlisters "k8s.io/client-go/listers/coordination/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/nodehealth"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
)

// Config is the policy.
type Config struct {
	// After is the cluster's fence-after: how long a node may look dead
	// before it is fenced, for VMIs without the annotation. 0: never.
	After time.Duration
	// HonorAnnotations lets a VMI's FenceNodeAfterAnnotation override
	// After, either way. Off, only After counts.
	HonorAnnotations bool
	// HeartbeatTimeout is the age beyond which a virt-handler Lease is
	// stale: nodehealth's timeout.
	HeartbeatTimeout time.Duration
	// LeaseNamespace holds the virt-handlers' Leases.
	LeaseNamespace string
}

// Controller is the fencing controller. Create it with New and start it
// with Run.
type Controller struct {
	kube        kubernetes.Interface
	nodeLister  corelisters.NodeLister
	leaseLister coordinationlisters.LeaseNamespaceLister
	vmiIndexer  cache.Indexer
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	recorder    record.EventRecorder
	clock       clock.WithTicker
	cfg         Config
}

// New wires the controller to its informers: the Nodes, the handlers'
// Leases in cfg.LeaseNamespace and the VMIs (indexed by node, shared with
// nodehealth).
func New(ctx context.Context, kube kubernetes.Interface, nodes coreinformers.NodeInformer, leases coordinationinformers.LeaseInformer,
	vmis virtinformers.VirtualMachineInstanceInformer, recorder record.EventRecorder, cfg Config, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		kube:        kube,
		nodeLister:  nodes.Lister(),
		leaseLister: leases.Lister().Leases(cfg.LeaseNamespace),
		vmiIndexer:  vmis.Informer().GetIndexer(),
		synced:      []cache.InformerSynced{nodes.Informer().HasSynced, leases.Informer().HasSynced, vmis.Informer().HasSynced},
		recorder:    recorder,
		clock:       c,
		cfg:         cfg,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "nodefence", Clock: c},
		),
	}
	if err := nodehealth.AddNodeIndex(vmis.Informer()); err != nil {
		return nil, err
	}
	// A Node's Ready condition, a Lease's renewal and the VMIs (and their
	// annotations) of a node are what its verdict depends on; the time
	// passing is covered by AddAfter in sync.
	handlers := []struct {
		inf cache.SharedIndexInformer
		key func(any) string
	}{
		{nodes.Informer(), nodeKey},
		{leases.Informer(), leaseNodeKey},
		{vmis.Informer(), vmiNodeKey},
	}
	for _, h := range handlers {
		enqueue := func(obj any) {
			if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tombstone.Obj
			}
			if key := h.key(obj); key != "" {
				ctrl.queue.Add(key)
			}
		}
		if _, err := h.inf.AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
			DeleteFunc: enqueue,
		}, cache.HandlerOptions{Logger: &logger}); err != nil {
			return nil, fmt.Errorf("nodefence: add event handler: %w", err)
		}
	}
	return ctrl, nil
}

func nodeKey(obj any) string {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return ""
	}
	return key
}

func leaseNodeKey(obj any) string {
	if l, ok := obj.(*coordinationv1.Lease); ok {
		if node, ok := strings.CutPrefix(l.Name, virtv1.HandlerLeasePrefix); ok {
			return node
		}
	}
	return ""
}

func vmiNodeKey(obj any) string {
	if vmi, ok := obj.(*virtv1.VirtualMachineInstance); ok {
		return vmi.Status.NodeName
	}
	return ""
}

// Run syncs nodes with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting node fencing controller", "fenceAfter", c.cfg.After, "honorAnnotations", c.cfg.HonorAnnotations)
	defer logger.Info("Stopped node fencing controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not a failure
		}
		return fmt.Errorf("node fencing controller: caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.worker, time.Second)
	}
	<-ctx.Done()
	return nil
}

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
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "node", key)
	if err := c.sync(klog.NewContext(ctx, logger), key); err != nil {
		logger.Error(err, "Sync failed, requeuing")
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}
