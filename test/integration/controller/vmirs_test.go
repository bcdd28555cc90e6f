package controller

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestVMIReplicaSet: a replica set of two test guests on the cluster runs
// two Ready instances with a launcher pod each; `kubectl scale` to one
// deletes one instance, whose guest is shut down through ACPI before it
// and its pod go; a deleted instance is replaced by a new Running one; and
// deleting the replica set deletes its instances (the garbage collector,
// through the controller references).
func TestVMIReplicaSet(t *testing.T) {
	ctx := t.Context()
	explainFailure(t)
	if err := waitQuiet(ctx, quietTimeout); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	pods := watchLaunchers(t, ns)
	sets := cluster.Virt.VirtualizationV1().VirtualMachineInstanceReplicaSets(ns)
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)

	rs, err := sets.Create(ctx, &virtv1.VirtualMachineInstanceReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: virtv1.VirtualMachineInstanceReplicaSetSpec{
			Replicas: ptr.To(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: &virtv1.VirtualMachineInstanceTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec:       tinySpec(t, "web"),
			},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create replica set: %v", err)
	}

	// readyInstances waits until the replica set has n Running, Ready
	// instances and says so, and returns them.
	readyInstances := func(n int32, timeout time.Duration) []*virtv1.VirtualMachineInstance {
		t.Helper()
		var ready []*virtv1.VirtualMachineInstance
		err := framework.WaitFor(ctx, timeout, fmt.Sprintf("%d Ready instances of replica set web", n), func(ctx context.Context) (bool, error) {
			list, err := vmis.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
			if err != nil {
				return false, err
			}
			ready = nil
			var states []string
			for i := range list.Items {
				v := &list.Items[i]
				if !metav1.IsControlledBy(v, rs) || v.DeletionTimestamp != nil {
					continue
				}
				if v.Status.Phase.IsFinal() {
					return false, fmt.Errorf("instance %s ended %s (%s)", v.Name, v.Status.Phase, v.Status.Reason)
				}
				states = append(states, fmt.Sprintf("%s %s", v.Name, v.Status.Phase))
				if v.Status.Phase == virtv1.Running && framework.Condition(v, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue {
					ready = append(ready, v)
				}
			}
			got, err := sets.Get(ctx, rs.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if len(states) != int(n) || len(ready) != int(n) || got.Status.Replicas != n || got.Status.ReadyReplicas != n {
				return false, fmt.Errorf("instances %v, status replicas %d ready %d", states, got.Status.Replicas, got.Status.ReadyReplicas)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return ready
	}

	start := time.Now()
	two := readyInstances(2, 2*framework.BootTimeout)
	t.Logf("replica set created -> 2 instances Ready: %s", since(start))
	for _, v := range two {
		checkLaunched(t, pods, v)
	}

	start = time.Now()
	if out, err := cluster.Kubectl(ctx, "scale", "-n", ns, "vmirs", "web", "--replicas=1"); err != nil {
		t.Fatalf("kubectl scale: %v (%s)", err, out)
	}
	kept := readyInstances(1, time.Minute)[0]
	gone := two[0]
	if gone.UID == kept.UID {
		gone = two[1]
	}
	if err := pods.waitDeleted(ctx, gone, DeleteTimeout); err != nil {
		t.Error(err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, gone.Name, DeleteTimeout); err != nil {
		t.Error(err)
	}
	t.Logf("scaled to 1 -> surplus instance gone: %s", since(start))
	if reasons := eventReasons(t, ns, gone.UID); !slices.Contains(reasons, "ShuttingDown") {
		t.Errorf("the surplus instance %s was not shut down through ACPI: its events are %v", gone.Name, reasons)
	}

	start = time.Now()
	if err := vmis.Delete(ctx, kept.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &kept.UID}}); err != nil {
		t.Fatalf("delete instance: %v", err)
	}
	replacement := readyInstances(1, DeleteTimeout+framework.BootTimeout)[0]
	if replacement.UID == kept.UID {
		t.Fatalf("the deleted instance %s still counts", kept.Name)
	}
	t.Logf("instance deleted -> replacement Ready: %s", since(start))
	checkLaunched(t, pods, replacement)

	if err := sets.Delete(ctx, rs.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("delete replica set: %v", err)
	}
	err = framework.WaitFor(ctx, DeleteTimeout, "the replica set's instances deleted", func(ctx context.Context) (bool, error) {
		list, err := vmis.List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		if len(list.Items) > 0 {
			return false, fmt.Errorf("%d instances left, e.g. %s", len(list.Items), list.Items[0].Name)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// eventReasons lists the reasons of the events about the object uid.
func eventReasons(t *testing.T, ns string, uid types.UID) []string {
	t.Helper()
	list, err := cluster.Kube.CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{
		FieldSelector: fields.OneTermEqualSelector("involvedObject.uid", string(uid)).String(),
	})
	if err != nil {
		t.Fatalf("list events: %v", err)
	}
	var reasons []string
	for _, e := range list.Items {
		reasons = append(reasons, e.Reason)
	}
	return reasons
}
