package nodelabel

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"kubevirt.dev/virt/internal/capability"
)

// Reporter labels one Node with its capabilities. Create it with New; feed
// it with Observe; Run writes.
type Reporter struct {
	kube kubernetes.Interface
	node string

	mu      sync.Mutex
	want    map[string]string // the labels of the last facts observed
	written map[string]string // the labels last written
	wake    chan struct{}
}

// New returns the reporter of node.
func New(kube kubernetes.Interface, node string) *Reporter {
	return &Reporter{kube: kube, node: node, wake: make(chan struct{}, 1)}
}

// Observe takes the node's facts (ReadFacts). It never blocks.
func (r *Reporter) Observe(facts capability.Facts) {
	labels := capability.Labels(facts)
	r.mu.Lock()
	changed := !maps.Equal(labels, r.want)
	r.want = labels
	r.mu.Unlock()
	if changed {
		select {
		case r.wake <- struct{}{}:
		default:
		}
	}
}

// Run writes the labels whenever they changed, retrying a failed write with
// backoff, until ctx ends.
func (r *Reporter) Run(ctx context.Context) {
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.2, Steps: 1 << 30, Cap: time.Minute}
	for {
		select {
		case <-ctx.Done():
			return
		case <-r.wake:
		}
		_ = wait.ExponentialBackoffWithContext(ctx, retry, func(ctx context.Context) (bool, error) {
			if err := r.write(ctx); err != nil {
				klog.FromContext(ctx).Error(err, "Reporting the node's capabilities failed, retrying")
				return false, nil
			}
			return true, nil
		})
	}
}

// write patches the labels wanted if they differ from those last written:
// a merge patch of those labels alone.
func (r *Reporter) write(ctx context.Context) error {
	r.mu.Lock()
	want := maps.Clone(r.want)
	done := maps.Equal(want, r.written)
	r.mu.Unlock()
	if done || want == nil {
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": want}})
	if err != nil {
		return err
	}
	if _, err := r.kube.CoreV1().Nodes().Patch(ctx, r.node, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("label node %s with its capabilities: %w", r.node, err)
	}
	r.mu.Lock()
	r.written = want
	r.mu.Unlock()
	klog.FromContext(ctx).Info("Reported the node's capabilities", "node", r.node, "labels", want)
	return nil
}
