package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

const virtHandlerSelector = virtv1.ComponentLabel + "=virt-handler"

// TestComponentRestarts: the platform's own components can restart under
// running guests. A new virt-handler adopts the guests it finds (same QEMU
// process, VMI Running all along); a new virt-apiserver serves every VMI and
// VM that existed, from the same etcd data.
func TestComponentRestarts(t *testing.T) {
	ctx := t.Context()
	ns := cluster.Namespace(t)
	examples := filepath.Join(cluster.Root, "artifacts", "examples")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(examples, "vmi-tiny.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(examples, "vm-always.yaml")); err != nil {
		t.Fatal(err)
	}
	var guests []*virtv1.VirtualMachineInstance
	for _, name := range []string{"vmi-tiny", "vm-always"} {
		vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		guests = append(guests, vmi)
	}
	qemu := map[string][]int{}
	for _, g := range guests {
		pids, err := framework.QEMUProcesses(g)
		if err != nil || len(pids) != 1 {
			t.Fatalf("want one QEMU process of %s, found %v (%v)", g.Name, pids, err)
		}
		qemu[g.Name] = pids
	}
	stillRunning := func(t *testing.T) {
		t.Helper()
		for _, g := range guests {
			vmi, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Get(ctx, g.Name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if vmi.UID != g.UID || vmi.Status.Phase != virtv1.Running {
				t.Errorf("VMI %s: uid %s phase %s, want the same VMI (%s) Running", g.Name, vmi.UID, vmi.Status.Phase, g.UID)
			}
			pids, _ := framework.QEMUProcesses(g)
			if !slices.Equal(pids, qemu[g.Name]) {
				t.Errorf("VMI %s: QEMU processes %v, want the same %v", g.Name, pids, qemu[g.Name])
			}
		}
	}

	t.Run("virt-handler restart keeps guests running", func(t *testing.T) {
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtHandlerSelector})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("want one virt-handler pod, got %d (%v)", len(pods.Items), err)
		}
		old := pods.Items[0]
		// Watch every version of the guests while the handler is away and
		// comes back: a guest must not flap through another phase, not
		// even for a moment.
		var watches []*framework.VMIWatch
		for _, g := range guests {
			w, err := cluster.WatchVMI(ctx, ns, g.Name, sameAndRunning(g))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = w.Stop() })
			watches = append(watches, w)
		}
		if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		handler, err := cluster.WaitPodReady(ctx, "virt-system", virtHandlerSelector, string(old.UID), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		// Until the new handler has resynced every guest: what it makes of
		// a guest it finds is written by then, and watched.
		if err := cluster.WaitHandlerResynced(ctx, handler, guests, 2*time.Minute); err != nil {
			t.Error(err)
		}
		for _, w := range watches {
			if err := w.Stop(); err != nil {
				t.Error(err)
			}
		}
		stillRunning(t)
	})

	t.Run("virt-apiserver restart keeps every VMI and VM", func(t *testing.T) {
		before := inventory(t, ns)
		pods, err := cluster.Kube.CoreV1().Pods("virt-system").List(ctx, metav1.ListOptions{LabelSelector: virtAPIServerSelector})
		if err != nil || len(pods.Items) != 1 {
			t.Fatalf("want one virt-apiserver pod, got %d (%v)", len(pods.Items), err)
		}
		old := pods.Items[0]
		if err := cluster.Kube.CoreV1().Pods("virt-system").Delete(ctx, old.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.WaitPodReady(ctx, "virt-system", virtAPIServerSelector, string(old.UID), 2*time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitAPIServiceAvailable(ctx, apiService, time.Minute); err != nil {
			t.Fatal(err)
		}
		var after map[string]string
		err = framework.WaitFor(ctx, time.Minute, "the same objects through the new virt-apiserver", func(ctx context.Context) (bool, error) {
			after = inventory(t, ns)
			return len(after) == len(before), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for key, uid := range before {
			if after[key] != uid {
				t.Errorf("%s: uid %q after the restart, want %q", key, after[key], uid)
			}
		}
		stillRunning(t)
	})
}

// sameAndRunning accepts only g itself (its UID), Running.
func sameAndRunning(g *virtv1.VirtualMachineInstance) func(*virtv1.VirtualMachineInstance) error {
	return func(v *virtv1.VirtualMachineInstance) error {
		switch {
		case v == nil:
			return fmt.Errorf("gone, want %s Running", g.UID)
		case v.UID != g.UID:
			return fmt.Errorf("replaced by %s (phase %s), want %s Running", v.UID, v.Status.Phase, g.UID)
		case v.Status.Phase != virtv1.Running:
			return fmt.Errorf("left %s: now %s (reason %q)", virtv1.Running, v.Status.Phase, v.Status.Reason)
		}
		return nil
	}
}

// inventory maps kind/name to UID of the namespace's VMIs and VMs.
func inventory(t *testing.T, ns string) map[string]string {
	t.Helper()
	out := map[string]string{}
	vmis, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return out
	}
	for _, v := range vmis.Items {
		out["vmi/"+v.Name] = string(v.UID)
	}
	vms, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		return map[string]string{}
	}
	for _, v := range vms.Items {
		out["vm/"+v.Name] = string(v.UID)
	}
	return out
}
