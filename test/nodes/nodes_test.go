package nodes

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestNodesReady: `make up NODES=3` gives three Ready nodes, and
// virt-handler (a DaemonSet) runs on each.
func TestNodesReady(t *testing.T) {
	ctx := t.Context()
	want := []string{"virt-node", "virt-node-2", "virt-node-3"}
	if got := cluster.Nodes(); !slices.Equal(got, want) {
		t.Fatalf("the cluster's nodes are %v, want %v", got, want)
	}
	for _, n := range want {
		if err := waitNodeReady(ctx, n); err != nil {
			t.Error(err)
		}
	}
	err := framework.WaitFor(ctx, 2*time.Minute, "a running, ready virt-handler on every node", func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtv1.ComponentLabel + "=virt-handler"})
		if err != nil {
			return false, err
		}
		var on []string
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && podReady(&p) {
				on = append(on, p.Spec.NodeName)
			}
		}
		slices.Sort(on)
		if !slices.Equal(on, want) {
			return false, fmt.Errorf("ready handlers on %v", on)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPlacement: a VMI lands on the node its nodeSelector names, one per
// node, and its guest boots there; a VMI no node satisfies says why in its
// PodScheduled condition, with the scheduler's message.
func TestPlacement(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	nodes := cluster.Nodes()
	vmis := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns)
	// All created first: the three boot at once.
	for i, n := range nodes {
		if _, err := vmis.Create(ctx, pinnedVMI(t, fmt.Sprintf("placed-%d", i+1), n), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	nowhere := pinnedVMI(t, "nowhere", "no-such-node")
	if _, err := vmis.Create(ctx, nowhere, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i, n := range nodes {
		t.Run("on "+n, func(t *testing.T) {
			vmi, _ := waitGuestOn(ctx, t, ns, fmt.Sprintf("placed-%d", i+1), n)
			// Its QEMU is a process of that node's cgroups.
			pids, err := framework.QEMUProcesses(vmi)
			if err != nil || len(pids) != 1 {
				t.Fatalf("want one QEMU process of %s, found %v (%v)", vmi.Name, pids, err)
			}
			if got, err := cluster.NodeOfProcess(pids[0]); err != nil || got != n {
				t.Errorf("the QEMU of %s (pid %d) belongs to node %q (%v), want %q", vmi.Name, pids[0], got, err, n)
			}
		})
	}
	t.Run("unschedulable", func(t *testing.T) {
		vmi, err := cluster.WaitVMI(ctx, ns, "nowhere", time.Minute, "PodScheduled False with the scheduler's reason",
			func(v *virtv1.VirtualMachineInstance) (bool, error) {
				c := v.Status.Condition(virtv1.VirtualMachineInstancePodScheduled)
				return c != nil && c.Status == corev1.ConditionFalse && c.Reason == virtv1.ReasonUnschedulable && c.Message != "", nil
			})
		if err != nil {
			t.Fatal(err)
		}
		c := vmi.Status.Condition(virtv1.VirtualMachineInstancePodScheduled)
		// The scheduler's words: "0/3 nodes are available: 3 node(s)
		// didn't match Pod's node affinity/selector. ..."
		if !strings.Contains(c.Message, fmt.Sprintf("0/%d nodes are available", len(nodes))) || !strings.Contains(c.Message, "node affinity/selector") {
			t.Errorf("PodScheduled message %q does not carry the scheduler's reason", c.Message)
		}
		if vmi.Status.Phase != virtv1.Pending && vmi.Status.Phase != virtv1.Scheduling {
			t.Errorf("unschedulable VMI in phase %s, want Pending or Scheduling", vmi.Status.Phase)
		}
	})
}

// TestCrossNodeNetwork: pods on different nodes reach each other directly
// and through a Service, and a pod off the control-plane node resolves
// names through the cluster DNS, which runs on node 1.
func TestCrossNodeNetwork(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	nodes := cluster.Nodes()
	server := startHTTPD(ctx, t, ns, "server", nodes[0])
	svc, err := cluster.Kube.CoreV1().Services(ns).Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "server"},
		Spec: corev1.ServiceSpec{
			Selector: map[string]string{"app": "server"},
			Ports:    []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}},
		},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client := startHTTPD(ctx, t, ns, "client", nodes[1])
	const want = "VIRT-TEST-HTTPD server "
	for what, target := range map[string]string{
		"pod to pod":       server.Status.PodIP + ":8080",
		"pod to ClusterIP": svc.Spec.ClusterIP + ":80",
		"pod to DNS name":  "server." + ns + ".svc.cluster.local:80",
	} {
		t.Run(what+" from "+nodes[1], func(t *testing.T) {
			if body, err := framework.WaitHTTP(ctx, httpdURL(client, "/fetch?"+target), want, 30*time.Second); err != nil {
				t.Errorf("GET http://%s/ from pod %s: %q, %v", target, client.Name, body, err)
			}
		})
	}
	t.Run("pod to pod from "+nodes[0], func(t *testing.T) {
		target := client.Status.PodIP + ":8080"
		if body, err := framework.WaitHTTP(ctx, httpdURL(server, "/fetch?"+target), "VIRT-TEST-HTTPD client ", 30*time.Second); err != nil {
			t.Errorf("GET http://%s/ from pod %s: %q, %v", target, server.Name, body, err)
		}
	})
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
