package replicaset

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/expectation"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
)

// DefaultBurst is how many instances one sync of a replica set creates or
// deletes at most, so that scaling a replica set to thousands does not
// flood the API server; the next sync, once these are observed, does the
// next burst.
const DefaultBurst = 250

// kind is the kind of the instances' controller reference.
var kind = virtv1.SchemeGroupVersion.WithKind("VirtualMachineInstanceReplicaSet")

// Controller is the replica set controller. Create it with New and start it
// with Run.
type Controller struct {
	virt      virtclient.Interface
	rsLister  virtlisters.VirtualMachineInstanceReplicaSetLister
	vmiLister virtlisters.VirtualMachineInstanceLister
	synced    []cache.InformerSynced

	queue        workqueue.TypedRateLimitingInterface[string]
	expectations *expectation.Expectations
	recorder     record.EventRecorder
	clock        clock.WithTicker
	burst        int
}

// New wires the controller to its informers. burst bounds the creations or
// deletions of one sync (DefaultBurst).
func New(ctx context.Context, virt virtclient.Interface, replicaSets virtinformers.VirtualMachineInstanceReplicaSetInformer,
	vmis virtinformers.VirtualMachineInstanceInformer, recorder record.EventRecorder, burst int, c clock.WithTicker) (*Controller, error) {
	if burst < 1 {
		return nil, fmt.Errorf("replica set controller: burst must be at least 1, not %d", burst)
	}
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		virt:         virt,
		rsLister:     replicaSets.Lister(),
		vmiLister:    vmis.Lister(),
		synced:       []cache.InformerSynced{replicaSets.Informer().HasSynced, vmis.Informer().HasSynced},
		expectations: expectation.New(expectation.DefaultTTL, c),
		recorder:     recorder,
		clock:        c,
		burst:        burst,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "virtualmachineinstancereplicaset", Clock: c},
		),
	}
	if _, err := replicaSets.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueue,
		UpdateFunc: func(_, obj any) { ctrl.enqueue(obj) },
		DeleteFunc: ctrl.enqueue,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch replica sets: %w", err)
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.addVMI,
		UpdateFunc: ctrl.updateVMI,
		DeleteFunc: ctrl.deleteVMI,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	return ctrl, nil
}

// Run syncs replica sets with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting VMI replica set controller")
	defer logger.Info("Stopped VMI replica set controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not a failure
		}
		return fmt.Errorf("VMI replica set controller: caches did not sync")
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
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "vmirs", key)
	if err := c.sync(klog.NewContext(ctx, logger), key); err != nil {
		logger.Error(err, "Sync failed, requeuing")
		c.queue.AddRateLimited(key)
		return true
	}
	// Forget resets the key's back-off: the next failure starts short again.
	c.queue.Forget(key)
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

// owner is the key of the replica set that controls vmi per ref, or "" if
// ref is not a replica set in the cache with that UID: a reference to a
// deleted replica set of the same name must not count for the new one.
func (c *Controller) owner(vmi *virtv1.VirtualMachineInstance, ref *metav1.OwnerReference) string {
	if ref == nil || ref.Kind != kind.Kind || ref.APIVersion != kind.GroupVersion().String() {
		return ""
	}
	rs, err := c.rsLister.VirtualMachineInstanceReplicaSets(vmi.Namespace).Get(ref.Name)
	if err != nil || rs.UID != ref.UID {
		return ""
	}
	return vmi.Namespace + "/" + rs.Name
}

// enqueueSelecting requeues the replica sets whose selector matches vmi, so
// that one of them may adopt it. Without a controller it counts for none.
func (c *Controller) enqueueSelecting(vmi *virtv1.VirtualMachineInstance) {
	sets, err := c.rsLister.VirtualMachineInstanceReplicaSets(vmi.Namespace).List(labels.Everything())
	if err != nil {
		utilruntime.HandleError(fmt.Errorf("list replica sets of %s: %w", vmi.Namespace, err))
		return
	}
	for _, rs := range sets {
		selector, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
		if err != nil || selector.Empty() {
			continue
		}
		if selector.Matches(labels.Set(vmi.Labels)) {
			c.queue.Add(vmi.Namespace + "/" + rs.Name)
		}
	}
}

// addVMI observes a creation the owner expected, or offers an orphan to the
// replica sets that select it.
func (c *Controller) addVMI(obj any) {
	vmi := obj.(*virtv1.VirtualMachineInstance)
	if vmi.DeletionTimestamp != nil {
		// Seen for the first time already being deleted (a relist): it
		// must not count as the creation of a new instance.
		c.deleteVMI(vmi)
		return
	}
	if ref := metav1.GetControllerOf(vmi); ref != nil {
		if key := c.owner(vmi, ref); key != "" {
			c.expectations.CreationObserved(key)
			c.queue.Add(key)
		}
		return
	}
	c.enqueueSelecting(vmi)
}

// updateVMI wakes the replica sets a change concerns: the owner, a former
// owner, and for an orphan whose labels changed, those that now select it.
// A deletion timestamp is the deletion the owner waits for: replacing an
// instance does not wait for its guest to shut down.
func (c *Controller) updateVMI(oldObj, newObj any) {
	old, vmi := oldObj.(*virtv1.VirtualMachineInstance), newObj.(*virtv1.VirtualMachineInstance)
	if old.ResourceVersion == vmi.ResourceVersion {
		return // a resync: nothing changed
	}
	labelsChanged := !equality.Semantic.DeepEqual(old.Labels, vmi.Labels)
	if vmi.DeletionTimestamp != nil {
		c.deleteVMI(vmi)
		if labelsChanged {
			c.enqueueSelecting(old)
		}
		return
	}
	ref, oldRef := metav1.GetControllerOf(vmi), metav1.GetControllerOf(old)
	refChanged := !equality.Semantic.DeepEqual(ref, oldRef)
	if refChanged && oldRef != nil {
		if key := c.owner(old, oldRef); key != "" {
			c.queue.Add(key)
		}
	}
	if ref != nil {
		if key := c.owner(vmi, ref); key != "" {
			c.queue.Add(key)
		}
		return
	}
	if labelsChanged || refChanged {
		c.enqueueSelecting(vmi)
	}
}

// deleteVMI observes a deletion the owner expected.
func (c *Controller) deleteVMI(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	vmi, ok := obj.(*virtv1.VirtualMachineInstance)
	if !ok {
		return
	}
	if key := c.owner(vmi, metav1.GetControllerOf(vmi)); key != "" {
		c.expectations.DeletionObserved(key, string(vmi.UID))
		c.queue.Add(key)
	}
}
