package virtualmachineinstance

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/node/monitor"
)

// Event reasons of stray guests, on the launcher pod (or, for a pod no
// longer in the API, on the Node).
const (
	ReasonStrayGuestKilled     = "StrayGuestKilled"
	ReasonStrayGuestKillFailed = "StrayGuestKillFailed"
)

// DefaultStrayInterval is how often the node looks for stray guests
// without being told to: the launchers of pods that left the API while
// the node was away appear in no informer event.
const DefaultStrayInterval = 30 * time.Second

// strays is what the controller remembers of stray launchers: a launcher
// whose domain ended or was destroyed is not asked again, and a launcher
// that did not answer is warned about once.
type strays struct {
	mu     sync.Mutex
	done   sets.Set[types.UID]
	warned sets.Set[types.UID]
	// swept is closed once the first sweep is over.
	swept chan struct{}
	// wake asks the sweep loop for a sweep now.
	wake chan struct{}
}

func newStrays() *strays {
	return &strays{done: sets.New[types.UID](), warned: sets.New[types.UID](), swept: make(chan struct{}), wake: make(chan struct{}, 1)}
}

// sweepSoon asks for a sweep without waiting for it.
func (c *Controller) sweepSoon() {
	select {
	case c.strays.wake <- struct{}{}:
	default:
	}
}

// sweptOnce reports whether the first sweep is over.
func (c *Controller) sweptOnce() bool {
	select {
	case <-c.strays.swept:
		return true
	default:
		return false
	}
}

// sweepLoop sweeps when asked, and every interval, until ctx ends.
func (c *Controller) sweepLoop(ctx context.Context, interval time.Duration) {
	t := c.clock.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.strays.wake:
		case <-t.C():
		}
		c.sweep(ctx)
	}
}

// claimed are the launcher pods this node's VMIs count on: the active pods
// of the VMIs handed to this node that have not ended. A launcher in any
// other pod on this node has no guest to run.
func (c *Controller) claimed() (sets.Set[types.UID], map[types.UID]*virtv1.VirtualMachineInstance) {
	vmis, _ := c.vmiLister.List(labels.Everything())
	pods := sets.New[types.UID]()
	byUID := make(map[types.UID]*virtv1.VirtualMachineInstance, len(vmis))
	for _, vmi := range vmis {
		byUID[vmi.UID] = vmi
		if vmi.Status.NodeName != c.cfg.NodeName || vmi.Status.Phase.IsFinal() {
			continue
		}
		for uid := range vmi.Status.ActivePods {
			pods.Insert(uid)
		}
	}
	// A VMI migrating here counts on its target pod, before it is this
	// node's.
	return pods.Union(c.migrationTargetPods()), byUID
}

// sweep destroys the domains of the launchers on this node that no VMI of
// the node claims (claimed): launcher pods in the informer's cache, and
// pod directories below the kubelet's root, which hold the pods the API no
// longer has (force-deleted while the node was away). It returns once
// every launcher asked has answered or timed out.
//
// Only a launcher that reports a running domain is killed, and only if its
// pod is still unclaimed after it said so: a launcher whose VMI is about to
// be handed to this node has no domain until this controller's Sync, and a
// Sync happens only for a VMI already in the cache, so no guest is killed
// that a VMI of this node was just given. A launcher is the tenant's: one
// that lies about its domain keeps or loses only its own guest.
func (c *Controller) sweep(ctx context.Context) {
	logger := klog.FromContext(ctx).WithName("strays")
	claimed, _ := c.claimed()
	candidates := map[types.UID]*corev1.Pod{}
	pods, _ := c.podLister.List(labels.Everything())
	for _, pod := range pods {
		if pod.Spec.NodeName == c.cfg.NodeName && !claimed.Has(pod.UID) {
			candidates[pod.UID] = pod
		}
	}
	dirs, err := c.cfg.PodFiles.PodUIDs()
	if err != nil {
		logger.Error(err, "Listing the pod directories failed; looking at the cached launcher pods only")
	}
	present := sets.New[types.UID]()
	for _, d := range dirs {
		uid := types.UID(d)
		present.Insert(uid)
		if _, ok := candidates[uid]; !ok && !claimed.Has(uid) {
			candidates[uid] = nil
		}
	}
	for _, pod := range pods {
		present.Insert(pod.UID)
	}
	c.strays.mu.Lock()
	// Forget pods that left both the API and the disk.
	for uid := range c.strays.done.Union(c.strays.warned) {
		if !present.Has(uid) {
			c.strays.done.Delete(uid)
			c.strays.warned.Delete(uid)
		}
	}
	for uid := range c.strays.done {
		delete(candidates, uid)
	}
	c.strays.mu.Unlock()

	var wg sync.WaitGroup
	for uid, pod := range candidates {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.stopStray(klog.NewContext(ctx, logger.WithValues("pod", uid)), uid, pod)
		}()
	}
	wg.Wait()
}

// stopStray destroys the domain of the launcher of pod uid if it runs one
// and the pod is still unclaimed. pod is nil for a pod the cache does not
// have.
func (c *Controller) stopStray(ctx context.Context, uid types.UID, pod *corev1.Pod) {
	logger := klog.FromContext(ctx)
	s, err := monitor.DialStray(c.cfg.Monitor, c.cfg.PodFiles.PrivateDir(string(uid)))
	if err != nil {
		logger.Error(err, "Cannot reach a launcher no VMI claims")
		return
	}
	defer s.Close()
	d, err := s.GetDomain(ctx)
	switch {
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, syscall.ECONNREFUSED):
		// Not a launcher pod, or its launcher is not serving (yet, or any
		// more: a socket nobody listens on is a launcher that died, as
		// on a node that lost power): its guest went with it (QEMU runs
		// in the launcher's container, which ends with the launcher).
		klog.FromContext(ctx).V(4).Info("No launcher serves in this pod", "err", err)
		return
	case err != nil:
		c.warnStray(ctx, uid, pod, err)
		return
	case !monitor.Running(d):
		if monitor.Ended(d) {
			c.strays.mu.Lock()
			c.strays.done.Insert(uid)
			c.strays.mu.Unlock()
		}
		return
	}
	// It runs a guest: was it claimed meanwhile?
	claimed, vmis := c.claimed()
	if claimed.Has(uid) {
		return
	}
	why := strayWhy(uid, pod, vmis, c.cfg.NodeName)
	if err := s.Kill(ctx); err != nil {
		c.warnStray(ctx, uid, pod, fmt.Errorf("%s, but destroying its domain %s failed: %w", why, d.GetName(), err))
		return
	}
	c.strays.mu.Lock()
	c.strays.done.Insert(uid)
	c.strays.mu.Unlock()
	msg := fmt.Sprintf("Destroyed domain %s: %s", d.GetName(), why)
	logger.Info("Destroyed a stray guest", "domain", d.GetName(), "why", why)
	c.recorder.Event(c.strayObject(pod), corev1.EventTypeWarning, ReasonStrayGuestKilled, msg)
}

// warnStray says, once per pod, that a launcher no VMI claims could not be
// asked or told; the next sweeps try again.
func (c *Controller) warnStray(ctx context.Context, uid types.UID, pod *corev1.Pod, err error) {
	klog.FromContext(ctx).Error(err, "A launcher no VMI of this node claims did not answer; will retry")
	c.strays.mu.Lock()
	first := !c.strays.warned.Has(uid)
	c.strays.warned.Insert(uid)
	c.strays.mu.Unlock()
	if first {
		c.recorder.Eventf(c.strayObject(pod), corev1.EventTypeWarning, ReasonStrayGuestKillFailed,
			"The launcher of pod %s, which no VMI of node %s claims, did not answer (%v); retrying. Deleting the pod makes the kubelet stop it", uid, c.cfg.NodeName, err)
	}
}

// strayObject is what a stray's event is about: its pod, or the Node when
// the API has no pod any more.
func (c *Controller) strayObject(pod *corev1.Pod) runtime.Object {
	if pod != nil {
		return pod
	}
	// The kubelet's own Node events use the node's name as its UID.
	return &corev1.ObjectReference{Kind: "Node", Name: c.cfg.NodeName, UID: types.UID(c.cfg.NodeName)}
}

// strayWhy says why the launcher of pod uid runs a guest no VMI of node
// claims, from the pod (nil when the cache has none) and the node's VMIs by
// UID.
func strayWhy(uid types.UID, pod *corev1.Pod, vmis map[types.UID]*virtv1.VirtualMachineInstance, node string) string {
	if pod == nil {
		return fmt.Sprintf("launcher pod %s is no longer in the API (deleted while node %s was away)", uid, node)
	}
	vmiUID := types.UID(pod.Labels[virtv1.CreatedByLabel])
	name := pod.Labels[virtv1.VMINameLabel]
	vmi := vmis[vmiUID]
	switch {
	case vmi == nil:
		return fmt.Sprintf("the VMI %s/%s (uid %s) of launcher pod %s is not on node %s any more: deleted, ended and replaced, or handed to another node",
			pod.Namespace, name, vmiUID, pod.Name, node)
	case vmi.Status.Phase.IsFinal():
		return fmt.Sprintf("the VMI %s/%s of launcher pod %s has ended (%s, %s)", vmi.Namespace, vmi.Name, pod.Name, vmi.Status.Phase, vmi.Status.Reason)
	default:
		return fmt.Sprintf("the VMI %s/%s does not count launcher pod %s as its own (status.activePods)", vmi.Namespace, vmi.Name, pod.Name)
	}
}

// claimedPod reports whether a VMI of this node claims pod uid.
func (c *Controller) claimedPod(uid types.UID) bool {
	claimed, _ := c.claimed()
	return claimed.Has(uid)
}
