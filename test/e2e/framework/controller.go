package framework

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// The virt-controller Deployment (artifacts/virt-controller).
const (
	controllerNamespace = "virt-system"
	controllerName      = "virt-controller"
)

// flagName is the name part of a command-line flag, "--a" of "--a=b".
func flagName(arg string) string { return strings.SplitN(arg, "=", 2)[0] }

// SetControllerArgs runs virt-controller with args, each replacing the flag
// of the same name, and, when nodeSelector is not nil, only on the nodes it
// selects, until the test ends; then as it was. It returns once a
// controller with the new arguments (on a selected node) leads.
func (c *Cluster) SetControllerArgs(t *testing.T, nodeSelector map[string]string, args ...string) {
	t.Helper()
	ctx := t.Context()
	deployments := c.Kube.AppsV1().Deployments(controllerNamespace)
	dep, err := deployments.Get(ctx, controllerName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	container := dep.Spec.Template.Spec.Containers[0]
	orig, origSelector := slices.Clone(container.Args), maps.Clone(dep.Spec.Template.Spec.NodeSelector)
	next := slices.DeleteFunc(slices.Clone(orig), func(a string) bool {
		return slices.ContainsFunc(args, func(n string) bool { return flagName(a) == flagName(n) })
	})
	next = append(next, args...)
	set := func(ctx context.Context, args []string, selector map[string]string, setSelector bool) error {
		spec := map[string]any{"containers": []any{map[string]any{"name": container.Name, "args": args}}}
		if setSelector {
			// Replaced as a whole: null removes it.
			spec["nodeSelector"] = selector
		}
		patch, err := json.Marshal(map[string]any{"spec": map[string]any{"template": map[string]any{"spec": spec}}})
		if err != nil {
			return err
		}
		if _, err := deployments.Patch(ctx, controllerName, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("patch virt-controller: %w", err)
		}
		return c.WaitDeploymentAvailable(ctx, controllerNamespace, controllerName, 3*time.Minute)
	}
	t.Cleanup(func() {
		if err := set(context.Background(), orig, origSelector, nodeSelector != nil); err != nil {
			t.Errorf("restore virt-controller: %v", err)
		}
	})
	if err := set(ctx, next, nodeSelector, nodeSelector != nil); err != nil {
		t.Fatal(err)
	}
	// The leader is one of the new pods: its identity starts with its host
	// name, the pod's name.
	what := fmt.Sprintf("a virt-controller with %s leading", strings.Join(args, " "))
	err = WaitFor(ctx, 2*time.Minute, what, func(ctx context.Context) (bool, error) {
		lease, err := c.Kube.CoordinationV1().Leases(controllerNamespace).Get(ctx, controllerName, metav1.GetOptions{})
		if err != nil || lease.Spec.HolderIdentity == nil {
			return false, err
		}
		pods, err := c.Kube.CoreV1().Pods(controllerNamespace).List(ctx, metav1.ListOptions{LabelSelector: virtv1.ComponentLabel + "=" + controllerName})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if !strings.HasPrefix(*lease.Spec.HolderIdentity, p.Name+"_") {
				continue
			}
			onNode := true
			if nodeSelector != nil {
				node, err := c.Kube.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				for k, v := range nodeSelector {
					onNode = onNode && node.Labels[k] == v
				}
			}
			return p.DeletionTimestamp == nil && onNode && slices.Equal(p.Spec.Containers[0].Args, next), nil
		}
		return false, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
