package virtualmachineinstance

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	storageinformers "k8s.io/client-go/informers/storage/v1"
	"k8s.io/client-go/kubernetes"
	corelisters "k8s.io/client-go/listers/core/v1"
	storagelisters "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/controllers/expectation"
	"kubevirt.dev/virt/controllers/launcherpod"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
)

// Event reasons on the VMI.
const (
	ReasonSuccessfulCreate = "SuccessfulCreate"
	ReasonFailedCreate     = "FailedCreate"
	ReasonSuccessfulDelete = "SuccessfulDelete"
	ReasonFailedDelete     = "FailedDelete"
	ReasonHandedOff        = "Scheduled"
)

// Config is what the controller takes from virt-controller's flags.
type Config struct {
	// Pod renders the launcher pods.
	Pod launcherpod.Config
	// FilesystemOverhead is the share of a Filesystem-mode claim that a
	// disk image on it leaves to the file system, recorded in each PVC
	// volume's status for the launcher; empty is
	// virtv1.DefaultFilesystemOverhead.
	FilesystemOverhead virtv1.Percent
}

// Controller is the VMI controller. Create it with New and start it with Run.
type Controller struct {
	kube kubernetes.Interface
	virt virtclient.Interface

	vmiLister   virtlisters.VirtualMachineInstanceLister
	vmiIndexer  cache.Indexer
	podLister   corelisters.PodLister
	podIndexer  cache.Indexer
	pvcLister   corelisters.PersistentVolumeClaimLister
	classLister storagelisters.StorageClassLister
	synced      []cache.InformerSynced

	queue              workqueue.TypedRateLimitingInterface[string]
	expectations       *expectation.Expectations
	recorder           record.EventRecorder
	clock              clock.WithTicker
	podConfig          launcherpod.Config
	filesystemOverhead virtv1.Percent
}

// New wires the controller to its informers. The pod informer should watch
// launcher pods only (ComponentLabel=virt-launcher); others are ignored. The
// claims and storage classes are those of persistentVolumeClaim volumes.
func New(ctx context.Context, kube kubernetes.Interface, virt virtclient.Interface,
	vmis virtinformers.VirtualMachineInstanceInformer, pods coreinformers.PodInformer,
	pvcs coreinformers.PersistentVolumeClaimInformer, classes storageinformers.StorageClassInformer,
	recorder record.EventRecorder, cfg Config, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	if cfg.FilesystemOverhead == "" {
		cfg.FilesystemOverhead = virtv1.DefaultFilesystemOverhead
	}
	ctrl := &Controller{
		kube:        kube,
		virt:        virt,
		vmiLister:   vmis.Lister(),
		vmiIndexer:  vmis.Informer().GetIndexer(),
		podLister:   pods.Lister(),
		podIndexer:  pods.Informer().GetIndexer(),
		pvcLister:   pvcs.Lister(),
		classLister: classes.Lister(),
		synced: []cache.InformerSynced{vmis.Informer().HasSynced, pods.Informer().HasSynced,
			pvcs.Informer().HasSynced, classes.Informer().HasSynced},
		expectations:       expectation.New(expectation.DefaultTTL, c),
		recorder:           recorder,
		clock:              c,
		podConfig:          cfg.Pod,
		filesystemOverhead: cfg.FilesystemOverhead,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "virtualmachineinstance", Clock: c},
		),
	}
	if err := pods.Informer().AddIndexers(cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID}); err != nil {
		return nil, fmt.Errorf("index launcher pods by VMI: %w", err)
	}
	if err := vmis.Informer().AddIndexers(cache.Indexers{claimIndex: indexByClaim}); err != nil {
		return nil, fmt.Errorf("index VMIs by claim: %w", err)
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueue,
		UpdateFunc: func(_, obj any) { ctrl.enqueue(obj) },
		DeleteFunc: ctrl.enqueue,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	if _, err := pods.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.addPod,
		UpdateFunc: ctrl.updatePod,
		DeleteFunc: ctrl.deletePod,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch launcher pods: %w", err)
	}
	if _, err := pvcs.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueClaimUsers,
		UpdateFunc: func(_, obj any) { ctrl.enqueueClaimUsers(obj) },
		DeleteFunc: ctrl.enqueueClaimUsers,
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch claims: %w", err)
	}
	return ctrl, nil
}

// Run syncs VMIs with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting VMI controller")
	defer logger.Info("Stopped VMI controller")

	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil // stopped before the caches synced: not a failure
		}
		return fmt.Errorf("VMI controller: caches did not sync")
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

func (c *Controller) addPod(obj any) {
	pod := obj.(*corev1.Pod)
	key := vmipod.VMIKey(pod)
	if key == "" {
		return
	}
	c.expectations.CreationObserved(key)
	if pod.DeletionTimestamp != nil {
		c.expectations.DeletionObserved(key, string(pod.UID))
	}
	c.queue.Add(key)
}

func (c *Controller) updatePod(oldObj, newObj any) {
	oldPod, pod := oldObj.(*corev1.Pod), newObj.(*corev1.Pod)
	if oldPod.ResourceVersion == pod.ResourceVersion {
		// A resync: nothing changed that a sync could act on.
		return
	}
	key := vmipod.VMIKey(pod)
	if key == "" {
		return
	}
	// A pod marked for deletion is as good as gone for the expectations:
	// the delete was accepted; waiting for the kubelet would only delay.
	if pod.DeletionTimestamp != nil {
		c.expectations.DeletionObserved(key, string(pod.UID))
	}
	c.queue.Add(key)
}

func (c *Controller) deletePod(obj any) {
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
	key := vmipod.VMIKey(pod)
	if key == "" {
		return
	}
	c.expectations.DeletionObserved(key, string(pod.UID))
	c.queue.Add(key)
}
