package apiserver

import (
	"encoding/json"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/apiserver/admission/noderestriction"
	"kubevirt.dev/virt/apiserver/testserver"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
)

// TestNodeRestriction: the virt-handler of node A, authenticated the way the
// aggregator vouches for it (its bound token's node name in the user's
// extra info), may write the VMIs of node A and is refused those of node B.
func TestNodeRestriction(t *testing.T) {
	proxy := testserver.NewFrontProxy(t)
	server := testserver.Start(t, t.TempDir(), testserver.WithFrontProxy(proxy))
	ctx := t.Context()
	admin := newClient(t, proxy.As(server, "admin", []string{"system:masters"}, nil))
	const handler = "system:serviceaccount:virt-system:virt-handler"
	handlerOf := func(node string) virtclient.Interface {
		return newClient(t, proxy.As(server, handler,
			[]string{"system:serviceaccounts"}, map[string][]string{noderestriction.NodeNameExtra: {node}}))
	}

	// The controller (here: admin) hands one VMI to each node.
	for name, node := range map[string]string{"on-a": "node-a", "on-b": "node-b"} {
		vmi, err := admin.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, tinyVMI(name), metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		vmi.Status.SetPhase(virtv1.Scheduled, "", metav1.Now())
		vmi.Status.NodeName = node
		if _, err := admin.VirtualizationV1().VirtualMachineInstances(ns).UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	nodeA := handlerOf("node-a").VirtualizationV1().VirtualMachineInstances(ns)
	running := func(name string) error {
		vmi, err := nodeA.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		vmi.Status.SetPhase(virtv1.Running, "", metav1.Now())
		_, err = nodeA.UpdateStatus(ctx, vmi, metav1.UpdateOptions{})
		return err
	}
	if err := running("on-a"); err != nil {
		t.Errorf("node A writing its own VMI: %v", err)
	}
	if err := running("on-b"); !apierrors.IsForbidden(err) {
		t.Errorf("node A writing node B's VMI: err = %v, want 403 Forbidden", err)
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"finalizers": []string{}}})
	if _, err := nodeA.Patch(ctx, "on-b", types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node A removing the finalizers of node B's VMI: err = %v, want 403", err)
	}
	if err := nodeA.Delete(ctx, "on-b", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("node A deleting node B's VMI: err = %v, want 403", err)
	}
	// A handler token without a node name is refused outright.
	anonymous := newClient(t, proxy.As(server, handler, nil, nil)).VirtualizationV1().VirtualMachineInstances(ns)
	vmi, err := anonymous.Get(ctx, "on-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := anonymous.UpdateStatus(ctx, vmi, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("handler identity without a node name: err = %v, want 403", err)
	}
	// Reads: node A lists and watches its node's VMIs, and nothing else.
	mine := metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("status.nodeName", "node-a").String()}
	list, err := nodeA.List(ctx, mine)
	if err != nil || len(list.Items) != 1 || list.Items[0].Name != "on-a" {
		t.Errorf("node A listing its VMIs: %v (%v), want on-a", list, err)
	}
	w, err := nodeA.Watch(ctx, mine)
	if err != nil {
		t.Errorf("node A watching its VMIs: %v", err)
	} else {
		w.Stop()
	}
	for what, o := range map[string]metav1.ListOptions{
		"every VMI":        {},
		"node B's VMIs":    {FieldSelector: fields.OneTermEqualSelector("status.nodeName", "node-b").String()},
		"all but node B's": {FieldSelector: fields.OneTermNotEqualSelector("status.nodeName", "node-b").String()},
	} {
		if _, err := nodeA.List(ctx, o); !apierrors.IsForbidden(err) {
			t.Errorf("node A listing %s: err = %v, want 403", what, err)
		}
		if w, err := nodeA.Watch(ctx, o); !apierrors.IsForbidden(err) {
			if err == nil {
				w.Stop()
			}
			t.Errorf("node A watching %s: err = %v, want 403", what, err)
		}
	}
	// The same service account in another namespace is restricted too: a
	// platform moved by an overlay stays confined.
	moved := newClient(t, proxy.As(server, "system:serviceaccount:virt-elsewhere:virt-handler",
		[]string{"system:serviceaccounts"}, map[string][]string{noderestriction.NodeNameExtra: {"node-a"}})).VirtualizationV1().VirtualMachineInstances(ns)
	if _, err := moved.List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a virt-handler of another namespace listing every VMI: err = %v, want 403", err)
	}
	if _, err := moved.Patch(ctx, "on-b", types.MergePatchType, patch, metav1.PatchOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("a virt-handler of another namespace patching node B's VMI: err = %v, want 403", err)
	}
	// Node B's VMI was not touched.
	b, err := admin.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, "on-b", metav1.GetOptions{})
	if err != nil || b.Status.Phase != virtv1.Scheduled || len(b.Finalizers) != 2 || b.DeletionTimestamp != nil {
		t.Errorf("node B's VMI changed: %+v %v", b, err)
	}
}
