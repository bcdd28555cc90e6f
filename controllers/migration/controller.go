package migration

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
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
)

// Event reasons, on the migration and on its VMI.
const (
	ReasonTargetPodCreated    = "MigrationTargetPodCreated"
	ReasonPreparingTarget     = "PreparingTarget"
	ReasonMigrated            = "Migrated"
	ReasonMigrationFailed     = "MigrationFailed"
	ReasonAbortRequested      = "MigrationAbortRequested"
	ReasonBackoff             = "MigrationBackoff"
	ReasonEvacuationCreated   = "EvacuationMigrationCreated"
	ReasonSourcePodDeleted    = "SourcePodDeleted"
	ReasonFailedTargetPod     = "FailedCreate"
	ReasonTargetPodDeleted    = "TargetPodDeleted"
	reasonAnotherMigration    = "AnotherMigrationInProgress"
	reasonNotMigratable       = "NotLiveMigratable"
	reasonStateLost           = "MigrationStateLost"
	vmiIndex                  = "migration-vmi"
	claimIndex                = "migration-claim"
	evacuationCreatedCacheTTL = time.Minute
)

// Controller is the migration controller. Create it with New and start it
// with Run.
type Controller struct {
	kube kubernetes.Interface
	virt virtclient.Interface

	vmimLister    virtlisters.VirtualMachineInstanceMigrationLister
	vmimIndexer   cache.Indexer
	vmiLister     virtlisters.VirtualMachineInstanceLister
	vmiIndexer    cache.Indexer
	podLister     corelisters.PodLister
	podIndexer    cache.Indexer
	nodeLister    corelisters.NodeLister
	pvcLister     corelisters.PersistentVolumeClaimLister
	synced        []cache.InformerSynced
	migrations    workqueue.TypedRateLimitingInterface[string]
	vmis          workqueue.TypedRateLimitingInterface[string]
	recorder      record.EventRecorder
	clock         clock.WithTicker
	cfg           Config
	evacuationsAt *createdCache
	reserved      *reservations
}

// New wires the controller to its informers. The pod informer watches
// launcher pods only (the VMI controller's).
func New(ctx context.Context, kube kubernetes.Interface, virt virtclient.Interface,
	vmims virtinformers.VirtualMachineInstanceMigrationInformer, vmis virtinformers.VirtualMachineInstanceInformer,
	pods coreinformers.PodInformer, nodes coreinformers.NodeInformer, pvcs coreinformers.PersistentVolumeClaimInformer,
	recorder record.EventRecorder, cfg Config, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ctrl := &Controller{
		kube: kube, virt: virt,
		vmimLister: vmims.Lister(), vmimIndexer: vmims.Informer().GetIndexer(),
		vmiLister: vmis.Lister(), vmiIndexer: vmis.Informer().GetIndexer(),
		podLister: pods.Lister(), podIndexer: pods.Informer().GetIndexer(),
		nodeLister: nodes.Lister(), pvcLister: pvcs.Lister(),
		synced: []cache.InformerSynced{vmims.Informer().HasSynced, vmis.Informer().HasSynced, pods.Informer().HasSynced,
			nodes.Informer().HasSynced, pvcs.Informer().HasSynced},
		migrations: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "migration", Clock: c}),
		vmis: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "migration-vmi", Clock: c}),
		recorder:      recorder,
		clock:         c,
		cfg:           cfg,
		evacuationsAt: newCreatedCache(c),
		reserved:      newReservations(),
	}
	if err := addIndexer(vmims.Informer(), vmiIndex, indexByVMI); err != nil {
		return nil, err
	}
	if err := addIndexer(vmis.Informer(), claimIndex, indexByClaim); err != nil {
		return nil, err
	}
	// Another controller of the same process may have added it already.
	if err := addIndexer(pods.Informer(), vmipod.VMIUIDIndex, vmipod.IndexByVMIUID); err != nil {
		return nil, err
	}
	opts := cache.HandlerOptions{Logger: &logger}
	if _, err := vmims.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.migrationChanged,
		UpdateFunc: func(_, obj any) { ctrl.migrationChanged(obj) },
		DeleteFunc: ctrl.migrationChanged,
	}, opts); err != nil {
		return nil, err
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.vmiChanged,
		UpdateFunc: func(_, obj any) { ctrl.vmiChanged(obj) },
		DeleteFunc: ctrl.vmiChanged,
	}, opts); err != nil {
		return nil, err
	}
	if _, err := pods.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.podChanged,
		UpdateFunc: func(_, obj any) { ctrl.podChanged(obj) },
		DeleteFunc: ctrl.podChanged,
	}, opts); err != nil {
		return nil, err
	}
	if _, err := pvcs.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.claimChanged,
		UpdateFunc: func(_, obj any) { ctrl.claimChanged(obj) },
		DeleteFunc: ctrl.claimChanged,
	}, opts); err != nil {
		return nil, err
	}
	return ctrl, nil
}

func addIndexer(informer cache.SharedIndexInformer, name string, f cache.IndexFunc) error {
	if _, ok := informer.GetIndexer().GetIndexers()[name]; ok {
		return nil
	}
	return informer.AddIndexers(cache.Indexers{name: f})
}

// indexByVMI indexes migrations by their VMI's key.
func indexByVMI(obj any) ([]string, error) {
	m, ok := obj.(*virtv1.VirtualMachineInstanceMigration)
	if !ok {
		return nil, nil
	}
	return []string{m.Namespace + "/" + m.Spec.VMIName}, nil
}

// indexByClaim indexes VMIs by the claims their volumes use.
func indexByClaim(obj any) ([]string, error) {
	vmi, ok := obj.(*virtv1.VirtualMachineInstance)
	if !ok {
		return nil, nil
	}
	var keys []string
	for _, name := range claimNames(vmi) {
		keys = append(keys, vmi.Namespace+"/"+name)
	}
	return keys, nil
}

// Run syncs migrations and VMIs with workers goroutines each until ctx is
// done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.migrations.ShutDown()
	defer c.vmis.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting migration controller")
	defer logger.Info("Stopped migration controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("migration controller: caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx, c.migrations, "migration", c.sync) {
			}
		}, time.Second)
		go wait.UntilWithContext(ctx, func(ctx context.Context) {
			for c.processNext(ctx, c.vmis, "vmi", c.syncVMI) {
			}
		}, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) processNext(ctx context.Context, q workqueue.TypedRateLimitingInterface[string], kind string,
	sync func(context.Context, string) (time.Duration, error)) bool {
	key, shutdown := q.Get()
	if shutdown {
		return false
	}
	defer q.Done(key)
	logger := klog.LoggerWithValues(klog.FromContext(ctx), kind, key)
	after, err := sync(klog.NewContext(ctx, logger), key)
	if err != nil {
		logger.Error(err, "Sync failed, requeuing")
		q.AddRateLimited(key)
		return true
	}
	q.Forget(key)
	if after > 0 {
		// A timeout or back-off falls due: nothing else would requeue it.
		q.AddAfter(key, after)
	}
	return true
}

// migrationChanged requeues the migration and its VMI (an evacuation may
// need another migration); one that ended or went frees a slot of the
// limits, so the pending ones are requeued too.
func (c *Controller) migrationChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	m, ok := obj.(*virtv1.VirtualMachineInstanceMigration)
	if !ok {
		return
	}
	c.migrations.Add(m.Namespace + "/" + m.Name)
	c.vmis.Add(m.Namespace + "/" + m.Spec.VMIName)
	if m.Status.Phase.Final() || m.DeletionTimestamp != nil {
		c.enqueuePending()
	}
}

// enqueuePending requeues every pending migration: a slot may be free.
func (c *Controller) enqueuePending() {
	for _, obj := range c.vmimIndexer.List() {
		if m, ok := obj.(*virtv1.VirtualMachineInstanceMigration); ok && m.Status.Phase == virtv1.MigrationPending {
			c.migrations.Add(m.Namespace + "/" + m.Name)
		}
	}
}

func (c *Controller) vmiChanged(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	c.vmis.Add(key)
	c.enqueueMigrationsOf(key)
}

func (c *Controller) enqueueMigrationsOf(vmiKey string) {
	objs, err := c.vmimIndexer.ByIndex(vmiIndex, vmiKey)
	if err != nil {
		return
	}
	for _, obj := range objs {
		if m, ok := obj.(*virtv1.VirtualMachineInstanceMigration); ok && (!m.Status.Phase.Final() || m.DeletionTimestamp != nil) {
			c.migrations.Add(m.Namespace + "/" + m.Name)
		}
	}
}

// podChanged requeues the migrations of the pod's VMI: a target pod was
// scheduled or got ready, or a source pod went.
func (c *Controller) podChanged(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return
	}
	if key := vmipod.VMIKey(pod); key != "" {
		c.enqueueMigrationsOf(key)
	}
}

// claimChanged requeues the VMIs of a claim: its access modes decide
// whether they can migrate.
func (c *Controller) claimChanged(obj any) {
	key, err := cache.DeletionHandlingMetaNamespaceKeyFunc(obj)
	if err != nil {
		return
	}
	users, err := c.vmiIndexer.ByIndex(claimIndex, key)
	if err != nil {
		return
	}
	for _, u := range users {
		if k, err := cache.MetaNamespaceKeyFunc(u); err == nil {
			c.vmis.Add(k)
		}
	}
}
