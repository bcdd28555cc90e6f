package e2e

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/internal/capability"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestNodeCapabilities: before any VMI runs, every Ready node's
// virt-handler has labelled the Node (from what its init container probed) with what the node's hypervisor can run (the
// capabilities internal/capability decides from the versions and domain
// type it labels too, KVM only where guests are not emulated); a VMI that
// needs a capability no Ready node reports is refused with a 422 that names
// the capability and says what the node reports.
func TestNodeCapabilities(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	// No launcher is needed: the labels come from virt-handler's own pod.
	err := framework.WaitFor(ctx, time.Minute, "every Ready node labelled before a VMI runs", func(ctx context.Context) (bool, error) {
		nodes, err := cluster.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, n := range nodes.Items {
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue && n.Labels[capability.DomainTypeLabel] == "" {
					return false, nil
				}
			}
		}
		return len(nodes.Items) > 0, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, "vmi-tiny")
	if err != nil {
		t.Fatal(err)
	}

	var node *corev1.Node
	err = framework.WaitFor(ctx, time.Minute, "node "+vmi.Status.NodeName+" labelled with its capabilities", func(ctx context.Context) (bool, error) {
		node, err = cluster.Kube.CoreV1().Nodes().Get(ctx, vmi.Status.NodeName, metav1.GetOptions{})
		return err == nil && node.Labels[capability.HypervisorVersionLabel] != "", err
	})
	if err != nil {
		t.Fatal(err)
	}
	facts := capability.Facts{
		LibvirtVersion:    node.Labels[capability.LibvirtVersionLabel],
		HypervisorVersion: node.Labels[capability.HypervisorVersionLabel],
		DomainType:        node.Labels[capability.DomainTypeLabel],
	}
	t.Logf("node %s reports %+v", node.Name, facts)
	for k, want := range capability.Labels(facts) {
		if got := node.Labels[k]; got != want {
			t.Errorf("node %s: label %s=%q, want %q (decided from what the node reports)", node.Name, k, got, want)
		}
	}
	emulated := framework.Condition(vmi, virtv1.VirtualMachineInstanceSoftwareEmulation) == corev1.ConditionTrue
	if kvm := node.Labels[capability.Prefix+"capability-kvm"]; (kvm == "true") == emulated {
		t.Errorf("node %s reports capability-kvm=%s, but its guest's SoftwareEmulation condition is %v", node.Name, kvm, emulated)
	}

	// A VMI for each capability: refused when no Ready node reports it.
	nodes, err := cluster.Kube.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range capability.Table {
		t.Run(c.Name, func(t *testing.T) {
			v := &virtv1.VirtualMachineInstance{ObjectMeta: metav1.ObjectMeta{Name: "needs-" + c.Name}, Spec: *vmi.Spec.DeepCopy()}
			switch c.Name {
			case "kvm":
				v.Spec.Domain.Features = &virtv1.Features{HypervPassthrough: &virtv1.HyperVPassthrough{}}
			case "nic-igb":
				v.Spec.Domain.Devices.Interfaces[0].Model = "igb"
			default:
				t.Fatalf("no VMI that needs %s: add one here", c.Name)
			}
			reported := false
			for _, n := range nodes.Items {
				reported = reported || n.Labels[c.Label] == "true"
			}
			_, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, v, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
			if reported {
				t.Logf("a node reports %s; the refusal cannot be checked here", c.Name)
				if err != nil {
					t.Errorf("refused though a node reports %s: %v", c.Name, err)
				}
				return
			}
			if !apierrors.IsInvalid(err) {
				t.Fatalf("got %v, want a 422: no node reports %s", err, c.Name)
			}
			for _, want := range []string{"needs node capability " + c.Name, c.Label + "=true", node.Name + " reports false", "hypervisor-version " + facts.HypervisorVersion} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %q", err, want)
				}
			}
		})
	}
}
