package virtualmachine

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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

// Event reasons on the VM.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonCrashLoop        = "CrashLoopBackOff"
	// ReasonRestarting: the instance ended and the run strategy replaces
	// it; the message carries the instance's reason (PodTerminated after a
	// drain, NodeUnresponsive after a node's loss, ...).
	ReasonRestarting = "Restarting"
)

// Backoff is the crash-loop policy: an instance that fails before it has run
// for Window counts as a failed start; the n-th failed start in a row delays
// the next instance by min(Base * 2^(n-1), Max). An instance that runs for
// Window, or ends without failing, resets the count.
type Backoff struct {
	Base, Max, Window time.Duration
}

// DefaultBackoff is KubeVirt's order of magnitude: 10 s doubling up to 5 min.
var DefaultBackoff = Backoff{Base: 10 * time.Second, Max: 5 * time.Minute, Window: time.Minute}

// Delay is the back-off after the n-th failed start in a row.
func (b Backoff) Delay(n int32) time.Duration {
	d := b.Base
	for i := int32(1); i < n && d < b.Max; i++ {
		d *= 2
	}
	return min(d, b.Max)
}

// Controller is the VM controller. Create it with New and start it with Run.
type Controller struct {
	virt      virtclient.Interface
	vmLister  virtlisters.VirtualMachineLister
	vmiLister virtlisters.VirtualMachineInstanceLister
	synced    []cache.InformerSynced
	// sizes are the instancetypes and preferences VMs reference.
	sizes *Instancetypes

	queue        workqueue.TypedRateLimitingInterface[string]
	expectations *expectation.Expectations
	recorder     record.EventRecorder
	clock        clock.WithTicker
	backoff      Backoff
}

// New wires the controller to its informers.
func New(ctx context.Context, virt virtclient.Interface, vms virtinformers.VirtualMachineInformer,
	vmis virtinformers.VirtualMachineInstanceInformer, sizes *Instancetypes, recorder record.EventRecorder,
	backoff Backoff, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		virt:         virt,
		vmLister:     vms.Lister(),
		vmiLister:    vmis.Lister(),
		synced:       []cache.InformerSynced{vms.Informer().HasSynced, vmis.Informer().HasSynced},
		sizes:        sizes,
		expectations: expectation.New(expectation.DefaultTTL, c),
		recorder:     recorder,
		clock:        c,
		backoff:      backoff,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "virtualmachine", Clock: c},
		),
	}
	if _, err := vms.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueue,
		UpdateFunc: func(_, obj any) { ctrl.enqueue(obj) },
		DeleteFunc: ctrl.enqueue,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMs: %w", err)
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.addVMI,
		UpdateFunc: ctrl.updateVMI,
		DeleteFunc: ctrl.deleteVMI,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	if err := ctrl.watchInstancetypes(ctx); err != nil {
		return nil, err
	}
	return ctrl, nil
}

// Run syncs VMs with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting VM controller")
	defer logger.Info("Stopped VM controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not a failure
		}
		return fmt.Errorf("VM controller: caches did not sync")
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
	logger := klog.LoggerWithValues(klog.FromContext(ctx), "vm", key)
	err := c.sync(klog.NewContext(ctx, logger), key)
	switch {
	case errors.Is(err, errVMGone):
		logger.V(2).Info("The VM was deleted since the cache read it")
	case apierrors.IsConflict(err):
		// The cache was behind the VM's writers (a user writing the spec
		// as the status is written): the informer brings the newer VM.
		// Routine under load, so not an error.
		logger.V(2).Info("The VM changed since the cache read it, requeuing", "err", err.Error())
		c.queue.AddRateLimited(key)
		return true
	case err != nil:
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

// vmKey is the key of the VM that controls vmi, or "".
func vmKey(vmi *virtv1.VirtualMachineInstance) string {
	ref := metav1.GetControllerOf(vmi)
	if ref == nil || ref.Kind != "VirtualMachine" || ref.APIVersion != virtv1.SchemeGroupVersion.String() {
		return ""
	}
	return vmi.Namespace + "/" + ref.Name
}

func (c *Controller) addVMI(obj any) {
	vmi := obj.(*virtv1.VirtualMachineInstance)
	if key := vmKey(vmi); key != "" {
		c.expectations.CreationObserved(key)
		if vmi.DeletionTimestamp != nil {
			c.expectations.DeletionObserved(key, string(vmi.UID))
		}
		c.queue.Add(key)
	}
}

func (c *Controller) updateVMI(oldObj, newObj any) {
	oldVMI, vmi := oldObj.(*virtv1.VirtualMachineInstance), newObj.(*virtv1.VirtualMachineInstance)
	if oldVMI.ResourceVersion == vmi.ResourceVersion {
		return
	}
	if key := vmKey(vmi); key != "" {
		if vmi.DeletionTimestamp != nil {
			c.expectations.DeletionObserved(key, string(vmi.UID))
		}
		c.queue.Add(key)
	}
}

func (c *Controller) deleteVMI(obj any) {
	if tombstone, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tombstone.Obj
	}
	vmi, ok := obj.(*virtv1.VirtualMachineInstance)
	if !ok {
		return
	}
	if key := vmKey(vmi); key != "" {
		c.expectations.DeletionObserved(key, string(vmi.UID))
		c.queue.Add(key)
	}
}
