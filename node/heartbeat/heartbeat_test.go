package heartbeat

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"
	clocktesting "k8s.io/utils/clock/testing"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

func node(t *testing.T, kube *k8sfake.Clientset) *corev1.Node {
	t.Helper()
	n, err := kube.CoreV1().Nodes().Get(t.Context(), "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// eventually waits up to 10 s for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 5*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out after 10s waiting for %s: %v", what, err)
	}
}

func TestPatch(t *testing.T) {
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	tests := []struct {
		name        string
		labels      map[string]string
		schedulable bool
		wantLabel   string
	}{
		{name: "schedulable", schedulable: true, wantLabel: "true"},
		{name: "not schedulable", schedulable: false, wantLabel: "false"},
		{name: "other labels kept", labels: map[string]string{"kubernetes.io/hostname": "node-1", virtv1.SchedulableNodeLabel: "false"}, schedulable: true, wantLabel: "true"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kube := k8sfake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", Labels: tt.labels}})
			h := New(kube, "node-1", time.Hour, nil, clocktesting.NewFakePassiveClock(now))
			if err := h.Patch(t.Context(), tt.schedulable); err != nil {
				t.Fatal(err)
			}
			n := node(t, kube)
			if got := n.Labels[virtv1.SchedulableNodeLabel]; got != tt.wantLabel {
				t.Errorf("label %s = %q, want %q", virtv1.SchedulableNodeLabel, got, tt.wantLabel)
			}
			if got := n.Annotations[virtv1.HeartbeatAnnotation]; got != "2026-03-04T05:06:07Z" {
				t.Errorf("annotation %s = %q, want 2026-03-04T05:06:07Z", virtv1.HeartbeatAnnotation, got)
			}
			for k, v := range tt.labels {
				if k != virtv1.SchedulableNodeLabel && n.Labels[k] != v {
					t.Errorf("label %s = %q, want %q kept", k, n.Labels[k], v)
				}
			}
		})
	}
}

func TestRun(t *testing.T) {
	kube := k8sfake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}})
	// Record, per patch, whether it carried the heartbeat with the label: the
	// heartbeat must never lag behind schedulable=true.
	var patches, withoutBeat atomic.Int32
	kube.PrependReactor("patch", "nodes", func(action k8stesting.Action) (bool, runtime.Object, error) {
		patches.Add(1)
		if p := string(action.(k8stesting.PatchAction).GetPatch()); !strings.Contains(p, virtv1.HeartbeatAnnotation) {
			withoutBeat.Add(1)
		}
		return false, nil, nil
	})
	var ready atomic.Bool
	h := New(kube, "node-1", 50*time.Millisecond, ready.Load, clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()

	eventually(t, "a heartbeat before the handler is ready", func() bool {
		n := node(t, kube)
		return n.Annotations[virtv1.HeartbeatAnnotation] != "" && n.Labels[virtv1.SchedulableNodeLabel] == "false"
	})
	ready.Store(true)
	eventually(t, "schedulable once ready", func() bool { return node(t, kube).Labels[virtv1.SchedulableNodeLabel] == "true" })
	beats := patches.Load()
	eventually(t, "periodic beats", func() bool { return patches.Load() >= beats+3 })
	beat, err := time.Parse(time.RFC3339, node(t, kube).Annotations[virtv1.HeartbeatAnnotation])
	if err != nil || time.Since(beat) > 5*time.Second {
		t.Errorf("heartbeat %v (%v), want a recent RFC 3339 time", beat, err)
	}

	cancel()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if got := node(t, kube).Labels[virtv1.SchedulableNodeLabel]; got != "false" {
		t.Errorf("after a graceful stop the label is %q, want false", got)
	}
	if n := withoutBeat.Load(); n != 0 {
		t.Errorf("%d patches set the label without the heartbeat", n)
	}
}
