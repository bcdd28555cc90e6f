package nodehealth

import (
	"context"
	"fmt"
	"strings"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
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
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
)

// VMINodeIndex indexes VMIs by status.nodeName (IndexByNode). The
// nodefence controller shares the VMI informer and the index.
const VMINodeIndex = "virtualization.kubevirt.io/node-name"

// DefaultHeartbeatTimeout is how long a node's virt-handler may leave its
// Lease unrenewed before the node counts as unresponsive. The handler
// renews it every 10 s.
const DefaultHeartbeatTimeout = 5 * time.Minute

// Controller is the node controller. Create it with New and start it with Run.
type Controller struct {
	kube        kubernetes.Interface
	virt        virtclient.Interface
	nodeLister  corelisters.NodeLister
	leaseLister coordinationlisters.LeaseNamespaceLister
	podIndexer  cache.Indexer
	vmiIndexer  cache.Indexer
	synced      []cache.InformerSynced
	queue       workqueue.TypedRateLimitingInterface[string]
	recorder    record.EventRecorder
	clock       clock.WithTicker
	timeout     time.Duration
}

// New wires the controller to its informers. leases are the handlers'
// Leases in leaseNamespace (an informer of that namespace), pods the
// launcher pods; timeout is the age of a Lease's renewTime beyond which a
// node is unresponsive.
func New(ctx context.Context, kube kubernetes.Interface, virt virtclient.Interface, nodes coreinformers.NodeInformer,
	leases coordinationinformers.LeaseInformer, leaseNamespace string, pods coreinformers.PodInformer,
	vmis virtinformers.VirtualMachineInstanceInformer, recorder record.EventRecorder,
	timeout time.Duration, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		kube:        kube,
		virt:        virt,
		nodeLister:  nodes.Lister(),
		leaseLister: leases.Lister().Leases(leaseNamespace),
		podIndexer:  pods.Informer().GetIndexer(),
		vmiIndexer:  vmis.Informer().GetIndexer(),
		synced: []cache.InformerSynced{nodes.Informer().HasSynced, leases.Informer().HasSynced,
			pods.Informer().HasSynced, vmis.Informer().HasSynced},
		recorder: recorder,
		clock:    c,
		timeout:  timeout,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "node", Clock: c},
		),
	}
	if err := AddNodeIndex(vmis.Informer()); err != nil {
		return nil, err
	}
	// The virtualmachineinstance controller shares the pod informer and
	// may have added the index already.
	if _, ok := pods.Informer().GetIndexer().GetIndexers()[vmipod.VMIUIDIndex]; !ok {
		if err := pods.Informer().AddIndexers(cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID}); err != nil {
			return nil, fmt.Errorf("index launcher pods by VMI: %w", err)
		}
	}
	if _, err := nodes.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueNode,
		UpdateFunc: func(_, obj any) { ctrl.enqueueNode(obj) },
		DeleteFunc: ctrl.enqueueNode,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
	}
	// A renewal (or a Lease that goes) and a launcher pod that ends are
	// what change a node's verdict besides the Node and its VMIs.
	if _, err := leases.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueLeaseNode,
		UpdateFunc: func(_, obj any) { ctrl.enqueueLeaseNode(obj) },
		DeleteFunc: ctrl.enqueueLeaseNode,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch leases: %w", err)
	}
	if _, err := pods.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueuePodNode,
		UpdateFunc: func(_, obj any) { ctrl.enqueuePodNode(obj) },
		DeleteFunc: ctrl.enqueuePodNode,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch launcher pods: %w", err)
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueVMINode,
		UpdateFunc: func(_, obj any) { ctrl.enqueueVMINode(obj) },
		DeleteFunc: ctrl.enqueueVMINode,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	return ctrl, nil
}

// AddNodeIndex adds VMINodeIndex to the VMI informer inf, unless another
// controller sharing it did already.
func AddNodeIndex(inf cache.SharedIndexInformer) error {
	if _, ok := inf.GetIndexer().GetIndexers()[VMINodeIndex]; ok {
		return nil
	}
	if err := inf.AddIndexers(cache.Indexers{VMINodeIndex: IndexByNode}); err != nil {
		return fmt.Errorf("index VMIs by node: %w", err)
	}
	return nil
}

// IndexByNode is the index function of VMINodeIndex.
func IndexByNode(obj any) ([]string, error) {
	if vmi, ok := obj.(*virtv1.VirtualMachineInstance); ok && vmi.Status.NodeName != "" {
		return []string{vmi.Status.NodeName}, nil
	}
	return nil, nil
}

func (c *Controller) enqueueNode(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueueVMINode(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if vmi, ok := obj.(*virtv1.VirtualMachineInstance); ok && vmi.Status.NodeName != "" {
		c.queue.Add(vmi.Status.NodeName)
	}
}

func (c *Controller) enqueueLeaseNode(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if l, ok := obj.(*coordinationv1.Lease); ok {
		if node, ok := strings.CutPrefix(l.Name, virtv1.HandlerLeasePrefix); ok && node != "" {
			c.queue.Add(node)
		}
	}
}

func (c *Controller) enqueuePodNode(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	if pod, ok := obj.(*corev1.Pod); ok && pod.Spec.NodeName != "" {
		c.queue.Add(pod.Spec.NodeName)
	}
}

// Run syncs nodes with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting node controller", "heartbeatTimeout", c.timeout)
	defer logger.Info("Stopped node controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not a failure
		}
		return fmt.Errorf("node controller: caches did not sync")
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
