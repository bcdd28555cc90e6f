package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/component-helpers/apimachinery/lease"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// DefaultInterval is how often a node renews its Lease: the kubelet's
// (10 s). virt-controller's default timeout (5 minutes) leaves room for 30
// missed renewals.
const DefaultInterval = 10 * time.Second

// durationFactor times the interval is the Lease's leaseDurationSeconds, as
// the kubelet's 40 s for 10 s. It is informative: virt-controller judges by
// its own --heartbeat-timeout.
const durationFactor = 4

// readyPoll is how often a node that is not ready yet checks again, so that
// it turns schedulable soon after it is ready rather than a beat later.
const readyPoll = 500 * time.Millisecond

// stopTimeout bounds the last patch that marks the node unschedulable.
const stopTimeout = 10 * time.Second

// Heartbeat beats for one node. Create it with New.
type Heartbeat struct {
	kube      kubernetes.Interface
	node      string
	namespace string
	interval  time.Duration
	ready     func() bool
	clock     clock.Clock

	mu      sync.Mutex
	labeled *bool     // the schedulable label last written, nil before
	nodeRef types.UID // the Node's UID, for the Lease's owner reference
}

// New returns the heartbeat of node, whose Lease lives in namespace. ready
// reports whether the handler can take guests (its caches are filled);
// until then the node beats but is not schedulable.
func New(kube kubernetes.Interface, node, namespace string, interval time.Duration, ready func() bool, c clock.Clock) *Heartbeat {
	return &Heartbeat{kube: kube, node: node, namespace: namespace, interval: interval, ready: ready, clock: c}
}

// Run renews the Lease and keeps the schedulable label until ctx is done,
// then marks the node unschedulable.
func (h *Heartbeat) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting heartbeat", "node", h.node, "lease", klog.KRef(h.namespace, virtv1.HandlerLeaseName(h.node)), "interval", h.interval)
	leases := lease.NewController(h.clock, h.kube, h.node, int32(durationFactor*h.interval/time.Second), nil,
		h.interval, virtv1.HandlerLeaseName(h.node), h.namespace, h.ownedByNode)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); leases.Run(ctx) }()

	h.label(ctx)
	// Become schedulable as soon as ready, not a beat later.
	_ = wait.PollUntilContextCancel(ctx, readyPoll, false, func(context.Context) (bool, error) { return h.ready(), nil })
	if ctx.Err() == nil {
		// Jittered, sliding: label writes of many nodes do not line up.
		// A label that is already right is not written again.
		wait.JitterUntilWithContext(ctx, h.label, h.interval, 0.2, true)
	}
	wg.Wait()

	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopTimeout)
	defer cancel()
	err := wait.PollUntilContextCancel(stopCtx, time.Second, true, func(ctx context.Context) (bool, error) {
		if err := h.Patch(ctx, false); err != nil {
			logger.Error(err, "Marking the node unschedulable failed, retrying")
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		logger.Error(err, "Gave up marking the node unschedulable", "node", h.node)
		return
	}
	logger.Info("Marked the node unschedulable", "node", h.node)
}

// label writes the schedulable label if it differs from the one last
// written (or none was).
func (h *Heartbeat) label(ctx context.Context) {
	want := h.ready()
	h.mu.Lock()
	done := h.labeled != nil && *h.labeled == want
	h.mu.Unlock()
	if done {
		return
	}
	if err := h.Patch(ctx, want); err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "Setting the schedulable label failed")
	}
}

// Patch sets the node's schedulable label: a merge patch of that one label,
// the only change of its Node the handler may make.
func (h *Heartbeat) Patch(ctx context.Context, schedulable bool) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels": map[string]string{virtv1.SchedulableNodeLabel: strconv.FormatBool(schedulable)},
	}})
	if err != nil {
		return err
	}
	if _, err := h.kube.CoreV1().Nodes().Patch(ctx, h.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s %s=%t: %w", h.node, virtv1.SchedulableNodeLabel, schedulable, err)
	}
	h.mu.Lock()
	h.labeled = &schedulable
	h.mu.Unlock()
	klog.FromContext(ctx).V(2).Info("Labelled the node", "node", h.node, "schedulable", schedulable)
	return nil
}

// ownedByNode makes the Node the owner of the Lease, as the kubelet's node
// Lease is, so that deleting a Node deletes its handler's Lease too. The
// lease controller calls it before each create and renewal; an error only
// postpones a create.
func (h *Heartbeat) ownedByNode(l *coordinationv1.Lease) error {
	if len(l.OwnerReferences) > 0 {
		return nil
	}
	h.mu.Lock()
	uid := h.nodeRef
	h.mu.Unlock()
	if uid == "" {
		ctx, cancel := context.WithTimeout(context.Background(), h.interval)
		defer cancel()
		node, err := h.kube.CoreV1().Nodes().Get(ctx, h.node, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("get node %s for its Lease's owner: %w", h.node, err)
		}
		uid = node.UID
		h.mu.Lock()
		h.nodeRef = uid
		h.mu.Unlock()
	}
	l.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: corev1.SchemeGroupVersion.String(),
		Kind:       "Node",
		Name:       h.node,
		UID:        uid,
	}}
	return nil
}
