package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// nodeRestrictionPolicy is the ValidatingAdmissionPolicy that confines
// virt-handler to its node (artifacts/virt-handler/node-restriction.yaml).
const nodeRestrictionPolicy = "virt-handler-node-restriction"

// TestHandlerNodeRestriction: virt-handler's own credentials (a token of its
// service account bound to its pod, so naming its node) may label its Node
// under virtualization.kubevirt.io/ and renew its node's Lease, and nothing
// else of the kube-apiserver's nodes and leases: not another Node, not
// another label, annotation, taint or status of its own, not another node's
// Lease nor virt-controller's. Every write is a server-side dry run: it
// passes admission and changes nothing.
func TestHandlerNodeRestriction(t *testing.T) {
	ctx := t.Context()
	handler := handlerPod(t)
	node := handler.Spec.NodeName
	bound := handlerClient(t, &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: handler.Name, UID: handler.UID})

	// Another Node to reach for: an object only (no kubelet), gone after
	// the test.
	other := fakeNode(t, "e2e-other-node-")
	// Another node's Lease, as its handler would have made it.
	otherLease := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "virt-system", Name: virtv1.HandlerLeaseName(other)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(other), RenewTime: &metav1.MicroTime{Time: time.Now()}},
	}
	if _, err := cluster.Kube.CoordinationV1().Leases("virt-system").Create(ctx, otherLease, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cluster.Kube.CoordinationV1().Leases("virt-system").Delete(context.WithoutCancel(ctx), otherLease.Name, metav1.DeleteOptions{})
	})

	dryRun := []string{metav1.DryRunAll}
	patchNode := func(c kubernetes.Interface, name string, patch map[string]any) error {
		raw, err := json.Marshal(patch)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, raw, metav1.PatchOptions{DryRun: dryRun})
		return err
	}
	labels := func(kv map[string]any) map[string]any {
		return map[string]any{"metadata": map[string]any{"labels": kv}}
	}
	renew := func(c kubernetes.Interface, name, holder string) error {
		l, err := cluster.Kube.CoordinationV1().Leases("virt-system").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		l.Spec.HolderIdentity = ptr.To(holder)
		l.Spec.RenewTime = &metav1.MicroTime{Time: time.Now()}
		_, err = c.CoordinationV1().Leases("virt-system").Update(ctx, l, metav1.UpdateOptions{DryRun: dryRun})
		return err
	}
	create := func(c kubernetes.Interface, name, holder string) error {
		_, err := c.CoordinationV1().Leases("virt-system").Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To(holder), RenewTime: &metav1.MicroTime{Time: time.Now()}},
		}, metav1.CreateOptions{DryRun: dryRun})
		return err
	}

	tests := []struct {
		name  string
		write func() error
		allow bool
	}{
		{"label its Node under virtualization.kubevirt.io/", func() error {
			return patchNode(bound, node, labels(map[string]any{virtv1.SchedulableNodeLabel: "true", "virtualization.kubevirt.io/e2e": "x"}))
		}, true},
		{"renew its node's Lease", func() error { return renew(bound, virtv1.HandlerLeaseName(node), node) }, true},
		{"label another Node", func() error {
			return patchNode(bound, other, labels(map[string]any{virtv1.SchedulableNodeLabel: "true"}))
		}, false},
		{"label its Node outside virtualization.kubevirt.io/", func() error {
			return patchNode(bound, node, labels(map[string]any{"e2e.example.org/probe": "x"}))
		}, false},
		{"remove a label of its Node outside virtualization.kubevirt.io/", func() error {
			return patchNode(bound, node, labels(map[string]any{corev1.LabelHostname: nil}))
		}, false},
		{"annotate its Node", func() error {
			return patchNode(bound, node, map[string]any{"metadata": map[string]any{"annotations": map[string]any{"virtualization.kubevirt.io/heartbeat": "x"}}})
		}, false},
		{"taint its Node", func() error {
			return patchNode(bound, node, map[string]any{"spec": map[string]any{"taints": []any{map[string]any{"key": "e2e", "effect": "NoSchedule"}}}})
		}, false},
		{"cordon its Node", func() error {
			return patchNode(bound, node, map[string]any{"spec": map[string]any{"unschedulable": true}})
		}, false},
		{"renew another node's Lease", func() error { return renew(bound, otherLease.Name, node) }, false},
		{"take another node's Lease over", func() error { return renew(bound, otherLease.Name, other) }, false},
		{"hand its Lease to another holder", func() error { return renew(bound, virtv1.HandlerLeaseName(node), other) }, false},
		{"create another node's Lease", func() error { return create(bound, virtv1.HandlerLeaseName("e2e-"+rand.String(5)), node) }, false},
		{"take virt-controller's leader Lease", func() error { return renew(bound, "virt-controller", node) }, false},
		{"delete its node's Lease", func() error {
			return bound.CoordinationV1().Leases("virt-system").Delete(ctx, virtv1.HandlerLeaseName(node), metav1.DeleteOptions{DryRun: dryRun})
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.write()
			switch {
			case tt.allow && err != nil:
				t.Errorf("refused: %v", err)
			case !tt.allow && err == nil:
				t.Errorf("allowed")
			case !tt.allow && !apierrors.IsForbidden(err):
				t.Errorf("refused with %v, want 403 Forbidden", err)
			}
		})
	}

	// The refusals above are the policy's, not only RBAC's: the handler
	// holds patch on nodes and update on leases.
	t.Run("the refusals are the policy's", func(t *testing.T) {
		err := patchNode(bound, other, labels(map[string]any{virtv1.SchedulableNodeLabel: "true"}))
		if err == nil || !strings.Contains(err.Error(), nodeRestrictionPolicy) {
			t.Errorf("patch of another Node: %v, want a refusal by %s", err, nodeRestrictionPolicy)
		}
		err = renew(bound, otherLease.Name, node)
		if err == nil || !strings.Contains(err.Error(), nodeRestrictionPolicy) {
			t.Errorf("renewal of another node's Lease: %v, want a refusal by %s", err, nodeRestrictionPolicy)
		}
	})

	// A token of the same service account that names no node (not bound
	// to a pod) may write nothing: the restriction fails closed.
	t.Run("a token without a node is refused", func(t *testing.T) {
		unbound := handlerClient(t, nil)
		err := patchNode(unbound, node, labels(map[string]any{virtv1.SchedulableNodeLabel: "true"}))
		if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "name no node") {
			t.Errorf("label patch with an unbound token: %v, want 403 for naming no node", err)
		}
		if err := renew(unbound, virtv1.HandlerLeaseName(node), node); !apierrors.IsForbidden(err) {
			t.Errorf("Lease renewal with an unbound token: %v, want 403", err)
		}
	})
}

// handlerPod is the virt-handler pod of the (single) node.
func handlerPod(t *testing.T) *corev1.Pod {
	t.Helper()
	pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(t.Context(), metav1.ListOptions{LabelSelector: virtHandlerSelector})
	if err != nil {
		t.Fatal(err)
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			return p
		}
	}
	t.Fatalf("no running virt-handler pod among %d", len(pods.Items))
	return nil
}

// handlerClient is a client with a fresh token of virt-handler's service
// account, bound to ref (nil: bound to nothing, so naming no node), as
// `kubectl create token virt-handler --bound-object-kind Pod` makes it.
func handlerClient(t *testing.T, ref *authenticationv1.BoundObjectReference) kubernetes.Interface {
	t.Helper()
	tr, err := cluster.Kube.CoreV1().ServiceAccounts("virt-system").CreateToken(t.Context(), "virt-handler", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600), BoundObjectRef: ref},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = tr.Status.Token
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// The token's identity, as the API sees it: the node claim must be
	// there for the allowed cases to mean anything.
	review, err := c.AuthenticationV1().SelfSubjectReviews().Create(t.Context(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := review.Status.UserInfo.Extra["authentication.kubernetes.io/node-name"]
	if ref != nil && len(nodes) != 1 {
		t.Fatalf("a token bound to pod %s names nodes %v, want its node", ref.Name, nodes)
	}
	if ref == nil && len(nodes) != 0 {
		t.Fatalf("an unbound token names nodes %v", nodes)
	}
	t.Logf("virt-handler token: user %s, node %v", review.Status.UserInfo.Username, nodes)
	return c
}

// fakeNode creates a Node object with no kubelet behind it, named prefix
// and a random suffix, and deletes it (and the DaemonSet pods made for
// it) after the test.
func fakeNode(t *testing.T, prefix string) string {
	t.Helper()
	ctx := t.Context()
	other := prefix + rand.String(5)
	if _, err := cluster.Kube.CoreV1().Nodes().Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: other}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.WithoutCancel(ctx)
		if err := cluster.Kube.CoreV1().Nodes().Delete(ctx, other, metav1.DeleteOptions{}); err != nil {
			t.Errorf("delete node %s: %v", other, err)
		}
		// DaemonSets that tolerate everything (virt-handler's) made pods
		// for it; none could be bound (it has no allocatable pods), but
		// they stay Pending after the Node went. Later tests count
		// virt-handler pods: they go now.
		err := framework.WaitFor(ctx, time.Minute, "no pod left for node "+other, func(ctx context.Context) (bool, error) {
			pods, err := cluster.Kube.CoreV1().Pods("").List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			var left []string
			for _, p := range pods.Items {
				if spec, _ := json.Marshal(p.Spec); strings.Contains(string(spec), `"`+other+`"`) {
					left = append(left, p.Namespace+"/"+p.Name)
					err := cluster.Kube.CoreV1().Pods(p.Namespace).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: ptr.To[int64](0)})
					if err != nil && !apierrors.IsNotFound(err) {
						return false, err
					}
				}
			}
			if len(left) > 0 {
				return false, fmt.Errorf("pods %v", left)
			}
			return true, nil
		})
		if err != nil {
			t.Error(err)
		}
	})
	return other
}
