package heartbeat

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/clock"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

const ns = "virt-system"

func node(t *testing.T, kube *k8sfake.Clientset) *corev1.Node {
	t.Helper()
	n, err := kube.CoreV1().Nodes().Get(t.Context(), "node-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// lease is node-1's Lease, nil while there is none.
func leaseOf(t *testing.T, kube *k8sfake.Clientset) *coordinationv1.Lease {
	t.Helper()
	l, err := kube.CoordinationV1().Leases(ns).Get(t.Context(), "virt-handler-node-1", metav1.GetOptions{})
	if err != nil {
		return nil
	}
	return l
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
			var patch string
			kube.PrependReactor("patch", "nodes", func(action k8stesting.Action) (bool, runtime.Object, error) {
				patch = string(action.(k8stesting.PatchAction).GetPatch())
				return false, nil, nil
			})
			h := New(kube, "node-1", ns, time.Hour, nil, clock.RealClock{})
			if err := h.Patch(t.Context(), tt.schedulable); err != nil {
				t.Fatal(err)
			}
			n := node(t, kube)
			if got := n.Labels[virtv1.SchedulableNodeLabel]; got != tt.wantLabel {
				t.Errorf("label %s = %q, want %q", virtv1.SchedulableNodeLabel, got, tt.wantLabel)
			}
			for k, v := range tt.labels {
				if k != virtv1.SchedulableNodeLabel && n.Labels[k] != v {
					t.Errorf("label %s = %q, want %q kept", k, n.Labels[k], v)
				}
			}
			// The node restriction allows only labels under
			// virtualization.kubevirt.io/: the patch carries nothing else.
			want := `{"metadata":{"labels":{"` + virtv1.SchedulableNodeLabel + `":"` + tt.wantLabel + `"}}}`
			if patch != want {
				t.Errorf("patch %s, want %s", patch, want)
			}
		})
	}
}

func TestRun(t *testing.T) {
	kube := k8sfake.NewClientset(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "node-uid"}})
	var nodeWrites, otherWrites atomic.Int32
	kube.PrependReactor("*", "*", func(action k8stesting.Action) (bool, runtime.Object, error) {
		switch {
		case action.GetVerb() == "get" || action.GetVerb() == "list" || action.GetVerb() == "watch":
		case action.GetResource().Resource == "nodes" && action.GetVerb() == "patch":
			nodeWrites.Add(1)
		case action.GetResource().Resource == "leases" && action.GetNamespace() == ns &&
			(action.GetVerb() == "create" || action.GetVerb() == "update"):
		default:
			otherWrites.Add(1)
			t.Errorf("unexpected %s of %s %s", action.GetVerb(), action.GetResource().Resource, action.GetNamespace())
		}
		return false, nil, nil
	})
	var ready atomic.Bool
	h := New(kube, "node-1", ns, time.Second, ready.Load, clock.RealClock{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()

	eventually(t, "a Lease before the handler is ready", func() bool {
		return leaseOf(t, kube) != nil && node(t, kube).Labels[virtv1.SchedulableNodeLabel] == "false"
	})
	l := leaseOf(t, kube)
	if got := *l.Spec.HolderIdentity; got != "node-1" {
		t.Errorf("holder %q, want node-1", got)
	}
	if got := *l.Spec.LeaseDurationSeconds; got != 4 {
		t.Errorf("leaseDurationSeconds %d, want 4 (4 intervals)", got)
	}
	if len(l.OwnerReferences) != 1 || l.OwnerReferences[0].Kind != "Node" || l.OwnerReferences[0].Name != "node-1" || l.OwnerReferences[0].UID != "node-uid" {
		t.Errorf("owner references %+v, want the Node node-1", l.OwnerReferences)
	}
	first := l.Spec.RenewTime.Time
	eventually(t, "a renewal", func() bool { return leaseOf(t, kube).Spec.RenewTime.After(first) })
	if time.Since(leaseOf(t, kube).Spec.RenewTime.Time) > 5*time.Second {
		t.Errorf("renewTime %v is not recent", leaseOf(t, kube).Spec.RenewTime)
	}

	ready.Store(true)
	eventually(t, "schedulable once ready", func() bool { return node(t, kube).Labels[virtv1.SchedulableNodeLabel] == "true" })
	// Renewals go on; the label, once right, is not written again.
	writes := nodeWrites.Load()
	renewed := leaseOf(t, kube).Spec.RenewTime.Time
	// Long enough for the label to have been looked at twice more.
	eventually(t, "renewals after ready", func() bool { return leaseOf(t, kube).Spec.RenewTime.After(renewed.Add(2500 * time.Millisecond)) })
	if n := nodeWrites.Load(); n != writes {
		t.Errorf("%d Node patches while the label stayed right, want none", n-writes)
	}
	if n := node(t, kube); len(n.Annotations) != 0 {
		t.Errorf("Node annotations %v, want none (the heartbeat is the Lease)", n.Annotations)
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
	if leaseOf(t, kube) == nil {
		t.Errorf("the Lease was deleted on a graceful stop; it should expire instead")
	}
	if n := otherWrites.Load(); n != 0 {
		t.Errorf("%d writes besides the Node label and the Lease", n)
	}
}

// TestLeaseWaitsForNode: without its Node the Lease is not created (it
// could not be owned by it), and it is once the Node exists.
func TestLeaseWaitsForNode(t *testing.T) {
	kube := k8sfake.NewClientset()
	h := New(kube, "node-1", ns, time.Second, func() bool { return false }, clock.RealClock{})
	var nodeGets atomic.Int32
	kube.PrependReactor("get", "nodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		nodeGets.Add(1)
		return false, nil, nil
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); h.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// The owner is looked up before every create: after three tries
	// there is still no Lease.
	eventually(t, "three attempts to create the Lease", func() bool { return nodeGets.Load() >= 3 })
	if leaseOf(t, kube) != nil {
		t.Fatal("a Lease without its Node")
	}
	if _, err := kube.CoreV1().Nodes().Create(t.Context(), &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-1", UID: "u"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the Lease once the Node exists", func() bool { return leaseOf(t, kube) != nil })
	if !strings.HasPrefix(leaseOf(t, kube).Name, virtv1.HandlerLeasePrefix) {
		t.Errorf("lease name %s", leaseOf(t, kube).Name)
	}
}
