package guestpod

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	coreinformers "k8s.io/client-go/informers/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtinformers "kubevirt.dev/virt/generated/informers/externalversions/virtualization/v1"
	virtlisters "kubevirt.dev/virt/generated/listers/virtualization/v1"
	"kubevirt.dev/virt/internal/vmipod"
)

// Controller keeps the GuestInPodCondition of launcher pods. Create it
// with New and start it with Run.
type Controller struct {
	kube       kubernetes.Interface
	vmiLister  virtlisters.VirtualMachineInstanceLister
	podIndexer cache.Indexer
	synced     []cache.InformerSynced
	queue      workqueue.TypedRateLimitingInterface[string]
	clock      clock.Clock
}

// New wires the controller to the VMI and launcher pod informers.
func New(ctx context.Context, kube kubernetes.Interface, vmis virtinformers.VirtualMachineInstanceInformer,
	pods coreinformers.PodInformer, c clock.WithTicker) (*Controller, error) {
	logger := klog.FromContext(ctx)
	ctrl := &Controller{
		kube:       kube,
		vmiLister:  vmis.Lister(),
		podIndexer: pods.Informer().GetIndexer(),
		synced:     []cache.InformerSynced{vmis.Informer().HasSynced, pods.Informer().HasSynced},
		clock:      c,
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: "guestpod", Clock: c},
		),
	}
	if _, ok := pods.Informer().GetIndexer().GetIndexers()[vmipod.VMIUIDIndex]; !ok {
		if err := pods.Informer().AddIndexers(cache.Indexers{vmipod.VMIUIDIndex: vmipod.IndexByVMIUID}); err != nil {
			return nil, fmt.Errorf("index launcher pods by VMI: %w", err)
		}
	}
	if _, err := vmis.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueueVMI,
		UpdateFunc: func(_, obj any) { ctrl.enqueueVMI(obj) },
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch VMIs: %w", err)
	}
	if _, err := pods.Informer().AddEventHandlerWithOptions(cache.ResourceEventHandlerFuncs{
		AddFunc:    ctrl.enqueuePod,
		UpdateFunc: func(_, obj any) { ctrl.enqueuePod(obj) },
	}, cache.HandlerOptions{Logger: &logger}); err != nil {
		return nil, fmt.Errorf("watch launcher pods: %w", err)
	}
	return ctrl, nil
}

func (c *Controller) enqueueVMI(obj any) {
	key, err := cache.MetaNamespaceKeyFunc(obj)
	if err != nil {
		utilruntime.HandleError(err)
		return
	}
	c.queue.Add(key)
}

func (c *Controller) enqueuePod(obj any) {
	if pod, ok := obj.(*corev1.Pod); ok && HasGate(pod) {
		if key := vmipod.VMIKey(pod); key != "" {
			c.queue.Add(key)
		}
	}
}

// Run syncs with workers goroutines until ctx is done.
func (c *Controller) Run(ctx context.Context, workers int) error {
	defer utilruntime.HandleCrashWithContext(ctx)
	defer c.queue.ShutDown()
	logger := klog.FromContext(ctx)
	logger.Info("Starting guest-in-pod controller")
	defer logger.Info("Stopped guest-in-pod controller")
	if !cache.WaitForNamedCacheSyncWithContext(ctx, c.synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("guest-in-pod controller: caches did not sync")
	}
	for range workers {
		go wait.UntilWithContext(ctx, c.worker, time.Second)
	}
	<-ctx.Done()
	return nil
}

func (c *Controller) worker(ctx context.Context) {
	for c.next(ctx) {
	}
}

func (c *Controller) next(ctx context.Context) bool {
	key, quit := c.queue.Get()
	if quit {
		return false
	}
	defer c.queue.Done(key)
	if err := c.sync(ctx, key); err != nil {
		utilruntime.HandleErrorWithContext(ctx, err, "Syncing the guest-in-pod condition failed", "vmi", key)
		c.queue.AddRateLimited(key)
		return true
	}
	c.queue.Forget(key)
	return true
}

// sync sets the condition on every gated launcher pod of VMI key.
func (c *Controller) sync(ctx context.Context, key string) error {
	ns, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return err
	}
	vmi, err := c.vmiLister.VirtualMachineInstances(ns).Get(name)
	if apierrors.IsNotFound(err) {
		return nil // its pods go with it (owner references)
	}
	if err != nil {
		return err
	}
	objs, err := c.podIndexer.ByIndex(vmipod.VMIUIDIndex, string(vmi.UID))
	if err != nil {
		return err
	}
	var pods []*corev1.Pod
	for _, o := range objs {
		if p, ok := o.(*corev1.Pod); ok {
			pods = append(pods, p)
		}
	}
	guest := GuestPod(vmi, pods)
	for _, pod := range pods {
		want, reason, gated := Desired(pod, vmi, guest)
		if !gated || pod.Spec.NodeName == "" || vmipod.Exited(pod) {
			continue // unscheduled pods are not Ready anyway, ended ones never again
		}
		if have, haveReason := Current(pod); have == want && haveReason == reason {
			continue
		}
		if err := c.set(ctx, pod, want, reason); err != nil {
			return err
		}
		klog.FromContext(ctx).V(2).Info("Set the guest-in-pod condition", "pod", klog.KObj(pod), "vmi", key, "status", want, "reason", reason)
	}
	return nil
}

// set patches the pod's condition: a strategic merge on the conditions
// list (keyed by type), so the kubelet's own conditions stay as they are.
func (c *Controller) set(ctx context.Context, pod *corev1.Pod, status corev1.ConditionStatus, reason string) error {
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"conditions": []corev1.PodCondition{{
		Type: GuestInPodCondition, Status: status, Reason: reason,
		LastTransitionTime: metav1.NewTime(c.clock.Now()),
	}}}})
	if err != nil {
		return err
	}
	_, err = c.kube.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
