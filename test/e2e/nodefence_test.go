package e2e

import (
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"kubevirt.dev/virt/controllers/nodefence"
)

// controllerNodeRestrictionPolicy confines virt-controller's Node writes to
// fencing (artifacts/virt-controller/node-restriction.yaml).
const controllerNodeRestrictionPolicy = "virt-controller-node-restriction"

// TestControllerNodeRestriction: virt-controller's own credentials may add
// the out-of-service taint to a NotReady Node, which is what the fencing
// policy writes, and nothing else to any Node: not to the Ready node of
// the cluster, not another taint, label or cordon. Every write is a
// server-side dry run: it passes admission and changes nothing.
func TestControllerNodeRestriction(t *testing.T) {
	ctx := t.Context()
	tr, err := cluster.Kube.CoreV1().ServiceAccounts("virt-system").CreateToken(ctx, "virt-controller", &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](600)},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := rest.AnonymousClientConfig(cluster.Config)
	cfg.BearerToken = tr.Status.Token
	controller, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}

	// A NotReady Node: an object without a kubelet, its Ready condition
	// Unknown as kube-controller-manager would set it.
	// kube-controller-manager writes the new Node too (taints, its own
	// view of the conditions): a conflict is retried on the fresh Node.
	dead := fakeNode(t, "e2e-dead-node-")
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, dead, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionUnknown, Reason: "NodeStatusUnknown",
			LastTransitionTime: metav1.Now(), LastHeartbeatTime: metav1.Now()}}
		_, err = cluster.Kube.CoreV1().Nodes().UpdateStatus(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("make %s NotReady: %v", dead, err)
	}
	ready := handlerPod(t).Spec.NodeName

	// update writes the Node as mutate makes it, as virt-controller.
	// kube-controller-manager taints the NotReady Node meanwhile: a
	// conflict is retried on the fresh Node.
	update := func(name string, mutate func(*corev1.Node)) error {
		return retry.RetryOnConflict(retry.DefaultRetry, func() error {
			n, err := cluster.Kube.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			mutate(n)
			_, err = controller.CoreV1().Nodes().Update(ctx, n, metav1.UpdateOptions{DryRun: []string{metav1.DryRunAll}})
			return err
		})
	}
	fence := func(n *corev1.Node) { n.Spec.Taints = append(n.Spec.Taints, nodefence.OutOfServiceTaint(time.Now())) }
	tests := []struct {
		name  string
		write func() error
		allow bool
		want  string // in the refusal
	}{
		{"fence a NotReady Node", func() error { return update(dead, fence) }, true, ""},
		{"fence the Ready node", func() error { return update(ready, fence) }, false, "only fence a NotReady Node"},
		{"another taint on a NotReady Node", func() error {
			return update(dead, func(n *corev1.Node) {
				n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: "e2e", Effect: corev1.TaintEffectNoSchedule})
			})
		}, false, "only add the taint"},
		{"label a NotReady Node while fencing it", func() error {
			return update(dead, func(n *corev1.Node) {
				fence(n)
				n.Labels = map[string]string{"e2e.example.org/x": "y"}
			})
		}, false, "not change its labels"},
		{"cordon a NotReady Node", func() error { return update(dead, func(n *corev1.Node) { n.Spec.Unschedulable = true }) }, false, "other spec fields"},
		{"delete a NotReady Node", func() error {
			return controller.CoreV1().Nodes().Delete(ctx, dead, metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		}, false, ""},
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
			case !tt.allow && tt.want != "" && !(strings.Contains(err.Error(), tt.want) && strings.Contains(err.Error(), controllerNodeRestrictionPolicy)):
				t.Errorf("refused with %v, want the policy's %q", err, tt.want)
			}
		})
	}
}
