package heartbeat

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// DefaultInterval is how often a node beats; virt-controller's default
// timeout (5 minutes) leaves room for ten missed beats.
const DefaultInterval = 30 * time.Second

// readyPoll is how often a node that is not ready yet checks again, so that
// it turns schedulable soon after it is ready rather than a beat later.
const readyPoll = 500 * time.Millisecond

// stopTimeout bounds the last patch that marks the node unschedulable.
const stopTimeout = 10 * time.Second

// Heartbeat beats for one node. Create it with New.
type Heartbeat struct {
	kube     kubernetes.Interface
	node     string
	interval time.Duration
	ready    func() bool
	clock    clock.PassiveClock
}

// New returns the heartbeat of node. ready reports whether the handler can
// take guests (its caches are filled); until then the node beats but is not
// schedulable.
func New(kube kubernetes.Interface, node string, interval time.Duration, ready func() bool, c clock.PassiveClock) *Heartbeat {
	return &Heartbeat{kube: kube, node: node, interval: interval, ready: ready, clock: c}
}

// Run beats until ctx is done, then marks the node unschedulable.
func (h *Heartbeat) Run(ctx context.Context) {
	logger := klog.FromContext(ctx)
	logger.Info("Starting heartbeat", "node", h.node, "interval", h.interval)
	h.beat(ctx)
	// Become schedulable as soon as ready, not a beat later.
	_ = wait.PollUntilContextCancel(ctx, readyPoll, false, func(context.Context) (bool, error) { return h.ready(), nil })
	if ctx.Err() == nil {
		h.beat(ctx)
		// Jittered, sliding: beats of many nodes do not line up.
		wait.JitterUntilWithContext(ctx, h.beat, h.interval, 0.2, true)
	}

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

func (h *Heartbeat) beat(ctx context.Context) {
	if err := h.Patch(ctx, h.ready()); err != nil && ctx.Err() == nil {
		klog.FromContext(ctx).Error(err, "Heartbeat failed")
	}
}

// Patch sets the heartbeat to now and the schedulable label, in one patch.
func (h *Heartbeat) Patch(ctx context.Context, schedulable bool) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"labels":      map[string]string{virtv1.SchedulableNodeLabel: strconv.FormatBool(schedulable)},
		"annotations": map[string]string{virtv1.HeartbeatAnnotation: h.clock.Now().UTC().Format(time.RFC3339)},
	}})
	if err != nil {
		return err
	}
	if _, err := h.kube.CoreV1().Nodes().Patch(ctx, h.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("heartbeat of node %s: %w", h.node, err)
	}
	klog.FromContext(ctx).V(4).Info("Heartbeat", "node", h.node, "schedulable", schedulable)
	return nil
}
