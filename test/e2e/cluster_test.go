package e2e

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

const (
	apiService = "v1.virtualization.kubevirt.io"
	// virtAPIServerSelector selects virt-apiserver's pods.
	virtAPIServerSelector = virtv1.ComponentLabel + "=virt-apiserver"
)

// TestAggregatedAPI checks the platform's API as a user of the cluster
// meets it: registered with the aggregator, discoverable, usable with
// kubectl, closed to users without RBAC, and kept across a restart of its
// server.
func TestAggregatedAPI(t *testing.T) {
	ctx := t.Context()
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)

	t.Run("api-resources lists vmi and vm", func(t *testing.T) {
		out, err := cluster.Kubectl(ctx, "api-resources", "--api-group=virtualization.kubevirt.io", "--no-headers")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []struct{ resource, short string }{
			{"virtualmachineinstances", "vmi"},
			{"virtualmachines", "vm"},
		} {
			found := false
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) >= 2 && f[0] == want.resource && slices.Contains(strings.Split(f[1], ","), want.short) {
					found = true
				}
			}
			if !found {
				t.Errorf("api-resources has no %s with short name %s:\n%s", want.resource, want.short, out)
			}
		}
	})

	example := filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")
	var uid types.UID
	t.Run("kubectl create of the example VMI", func(t *testing.T) {
		if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
			t.Fatal(err)
		}
		want, err := cluster.Example("vmi-tiny.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get the created VMI through the aggregator: %v", err)
		}
		if got.UID == "" || got.Spec.Domain.Firmware == nil || got.Spec.Domain.Firmware.KernelBoot == nil {
			t.Fatalf("created VMI lacks its UID or kernel boot: %+v", got)
		}
		uid = got.UID
	})
	t.Cleanup(func() {
		if err := cluster.DeleteVMI(context.Background(), t, ns, "vmi-tiny", 2*time.Minute); err != nil {
			t.Error(err)
		}
	})

	t.Run("kubectl get vmi shows the platform's columns", func(t *testing.T) {
		out, err := cluster.Kubectl(ctx, "get", "vmi", "-n", ns)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 2 {
			t.Fatalf("want a header and one row:\n%s", out)
		}
		header := strings.Fields(lines[0])
		for _, col := range []string{"NAME", "AGE", "PHASE", "NODENAME", "READY"} {
			if !slices.Contains(header, col) {
				t.Errorf("column %s missing from %v", col, header)
			}
		}
		if f := strings.Fields(lines[1]); len(f) == 0 || f[0] != "vmi-tiny" {
			t.Errorf("row is not vmi-tiny's: %q", lines[1])
		}
	})

	t.Run("kubectl explain vmi.spec", func(t *testing.T) {
		// The aggregator refreshes an APIService's OpenAPI about once a
		// minute; until then, after virt-apiserver rolled out a changed
		// schema, it still offers the old document's hash, which the new
		// server answers with a redirect that the aggregator refuses.
		var out string
		err := framework.WaitFor(ctx, 2*time.Minute, "kubectl explain vmi.spec", func(ctx context.Context) (bool, error) {
			var err error
			out, err = cluster.Kubectl(ctx, "explain", "vmi.spec")
			return err == nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{"VirtualMachineInstance", "domain", "DomainSpec"} {
			if !strings.Contains(out, want) {
				t.Errorf("explain output lacks %q:\n%s", want, out)
			}
		}
	})

	t.Run("a user without RBAC is denied", func(t *testing.T) {
		nobody, err := cluster.ImpersonatingVirt("nobody")
		if err != nil {
			t.Fatal(err)
		}
		_, err = nobody.VirtualizationV1().VirtualMachineInstances(ns).List(ctx, metav1.ListOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("list as nobody: got %v, want Forbidden", err)
		}
		vmi, err := cluster.Example("vmi-tiny.yaml")
		if err != nil {
			t.Fatal(err)
		}
		vmi.Name = "from-nobody"
		_, err = nobody.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{})
		if !apierrors.IsForbidden(err) {
			t.Errorf("create as nobody: got %v, want Forbidden", err)
		}
		if _, err := cluster.Kubectl(ctx, "get", "vmi", "-n", ns, "--as=nobody"); err == nil || !strings.Contains(err.Error(), "Forbidden") {
			t.Errorf("kubectl --as=nobody get vmi: got %v, want Forbidden", err)
		}
	})

	t.Run("deleting virt-apiserver's pod keeps every VMI", func(t *testing.T) {
		before, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(before.Items, func(v virtv1.VirtualMachineInstance) bool { return v.UID == uid }) {
			t.Fatalf("the example VMI %s is not listed", uid)
		}
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtAPIServerSelector})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("want one virt-apiserver pod, got %d (%v)", len(pods.Items), err)
		}
		old := pods.Items[0]
		if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatalf("kubectl delete pod %s: %v", old.Name, err)
		}
		if _, err := cluster.WaitPodReady(ctx, "virt-system", virtAPIServerSelector, string(old.UID), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
			t.Fatal(err)
		}
		var after *virtv1.VirtualMachineInstanceList
		// The aggregator may still route to the old endpoint for a moment.
		err = framework.WaitFor(ctx, 30*time.Second, "VMIs listed through the new virt-apiserver", func(ctx context.Context) (bool, error) {
			after, err = cluster.Virt.VirtualizationV1().VirtualMachineInstances("").List(ctx, metav1.ListOptions{})
			return err == nil, err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range before.Items {
			if !slices.ContainsFunc(after.Items, func(a virtv1.VirtualMachineInstance) bool { return a.UID == v.UID }) {
				t.Errorf("VMI %s/%s (%s) lost with virt-apiserver's pod", v.Namespace, v.Name, v.UID)
			}
		}
	})
}

// TestClusterRestart checks `make down && make up`: down leaves nothing of
// the cluster on the host, up brings it back with the platform's data.
func TestClusterRestart(t *testing.T) {
	ctx := t.Context()
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Fatal(err)
	}
	ns := cluster.Namespace(t)
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := cluster.DeleteVMI(context.Background(), t, ns, "vmi-tiny", 2*time.Minute); err != nil {
			t.Error(err)
		}
	})
	before, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, "vmi-tiny", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}

	if err := cluster.Down(ctx); err != nil {
		t.Fatal(err)
	}
	left, err := cluster.Leftovers()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range left {
		t.Errorf("left behind by make down: %s", l)
	}

	if err := cluster.Up(ctx); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
		t.Fatal(err)
	}
	after, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, "vmi-tiny", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the VMI created before make down: %v", err)
	}
	if after.UID != before.UID {
		t.Errorf("VMI UID %s after the restart, %s before", after.UID, before.UID)
	}
}
