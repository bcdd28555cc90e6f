package nodehealth

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	"kubevirt.dev/virt/internal/finalizer"
)

// vmiNodeIndex indexes VMIs by status.nodeName.
const vmiNodeIndex = "virtualization.kubevirt.io/node-name"

// DefaultHeartbeatTimeout is how old a node's heartbeat may get before its
// VMIs are failed. virt-handler renews it far more often.
const DefaultHeartbeatTimeout = 5 * time.Minute

// Controller is the node controller. Create it with New and start it with Run.
type Controller struct {
	virt       virtclient.Interface
	nodeLister corelisters.NodeLister
	vmiIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	recorder   record.EventRecorder
	clock      clock.WithTicker
	timeout    time.Duration
}

// New wires the controller to its informers; timeout is the heartbeat age
// beyond which a node is unresponsive.
func New(ctx context.Context, virt virtclient.Interface, nodes coreinformers.NodeInformer,
	vmis virtinformers.VirtualMachineInstanceInformer, recorder record.EventRecorder,
	timeout time.Duration, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		virt:       virt,
		nodeLister: nodes.Lister(),
		vmiIndexer: vmis.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{nodes.Informer().HasSynced, vmis.Informer().HasSynced},
		recorder:   recorder,
		clock:      c,
		timeout:    timeout,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "node", Clock: c},
		),
	}
	if err := vmis.Informer().AddIndexers(cache.Indexers{vmiNodeIndex: indexByNode}); err != nil {
		return nil, fmt.Errorf("index VMIs by node: %w", err)
	}
	if _, err := nodes.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueNode,
		UpdateFunc: func(_, obj any) { ctrl.enqueueNode(obj) },
		DeleteFunc: ctrl.enqueueNode,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch nodes: %w", err)
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

func indexByNode(obj any) ([]string, error) {
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

// sync fails the VMIs of nodeName if its heartbeat is stale, or looks again
// when it would become stale.
func (c *Controller) sync(ctx context.Context, nodeName string) error {
	var affected []*virtv1.VirtualMachineInstance
	objs, err := c.vmiIndexer.ByIndex(vmiNodeIndex, nodeName)
	if err != nil {
		return fmt.Errorf("list VMIs of node %s: %w", nodeName, err)
	}
	for _, obj := range objs {
		vmi := obj.(*virtv1.VirtualMachineInstance)
		if needsNode(vmi) {
			affected = append(affected, vmi)
		}
	}
	if len(affected) == 0 {
		return nil
	}
	node, err := c.nodeLister.Get(nodeName)
	switch {
	case apierrors.IsNotFound(err):
		node = nil
	case err != nil:
		return fmt.Errorf("get node %s: %w", nodeName, err)
	}
	stale, why, remaining := c.stale(nodeName, node)
	if !stale {
		// Heartbeats requeue the node through its update events; this
		// covers the heartbeat that never comes.
		c.queue.AddAfter(nodeName, remaining+time.Second)
		return nil
	}
	var errs []error
	for _, vmi := range affected {
		if err := c.release(ctx, vmi, why); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// needsNode reports whether vmi still waits for its node's virt-handler:
// to run it, or to remove the guest-shutdown finalizer.
func needsNode(vmi *virtv1.VirtualMachineInstance) bool {
	if !vmi.Status.Phase.IsFinal() {
		return true
	}
	return vmi.DeletionTimestamp != nil && finalizer.Has(vmi, virtv1.GuestShutdownFinalizer)
}

// stale reports whether node's heartbeat is older than the timeout, why, and
// otherwise how long it has left. A missing or unreadable heartbeat is stale:
// virt-handler sets it before it labels the node schedulable, so no VMI
// reaches a node without one.
func (c *Controller) stale(name string, node *corev1.Node) (bool, string, time.Duration) {
	if node == nil {
		return true, fmt.Sprintf("node %s is gone", name), 0
	}
	raw, ok := node.Annotations[virtv1.HeartbeatAnnotation]
	if !ok {
		return true, fmt.Sprintf("node %s has no virt-handler heartbeat", name), 0
	}
	beat, err := time.Parse(time.RFC3339, raw)
	if err != nil {
		return true, fmt.Sprintf("node %s has an unreadable virt-handler heartbeat %q", name, raw), 0
	}
	remaining := c.timeout - c.clock.Since(beat)
	return remaining <= 0, fmt.Sprintf("node %s is unresponsive: its virt-handler's last heartbeat was at %s, more than %s ago",
		name, beat.UTC().Format(time.RFC3339), c.timeout), remaining
}

// release fails vmi and, if it is being deleted, lets it go: the node that
// would shut its guest down is not there to say so.
func (c *Controller) release(ctx context.Context, vmi *virtv1.VirtualMachineInstance, msg string) error {
	logger := klog.FromContext(ctx).WithValues("vmi", klog.KObj(vmi))
	if !vmi.Status.Phase.IsFinal() {
		next := vmi.DeepCopy()
		next.Status.Fail(virtv1.ReasonNodeUnresponsive, msg, metav1.NewTime(c.clock.Now()))
		updated, err := c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).UpdateStatus(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("fail VMI %s/%s on unresponsive node: %w", vmi.Namespace, vmi.Name, err)
		}
		logger.Info("Failed VMI on an unresponsive node", "reason", msg)
		c.recorder.Event(vmi, corev1.EventTypeWarning, virtv1.ReasonNodeUnresponsive, msg)
		vmi = updated
	}
	if vmi.DeletionTimestamp == nil {
		return nil
	}
	patch, err := finalizer.RemovePatch(vmi, virtv1.GuestShutdownFinalizer)
	if err != nil || patch == nil {
		return err
	}
	_, err = c.virt.VirtualizationV1().VirtualMachineInstances(vmi.Namespace).Patch(ctx, vmi.Name, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("remove guest-shutdown finalizer of VMI %s/%s on unresponsive node: %w", vmi.Namespace, vmi.Name, err)
	}
	logger.Info("Removed the guest-shutdown finalizer of a VMI on an unresponsive node")
	return nil
}
