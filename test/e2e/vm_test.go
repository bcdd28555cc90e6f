package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
)

// TestVMRunStrategy: a VM with runStrategy Always gets a new running
// instance when its guest dies; switched to Halted it keeps none.
func TestVMRunStrategy(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(cluster.Root, "artifacts", "examples", "vm-always.yaml")); err != nil {
		t.Fatal(err)
	}
	const name = "vm-always"
	first, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}

	pids, err := framework.QEMUProcesses(first)
	if err != nil || len(pids) != 1 {
		t.Fatalf("want one QEMU process of the VM's instance, found %v (%v)", pids, err)
	}
	t.Logf("killing QEMU %d of instance %s", pids[0], first.UID)
	if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}

	second, err := cluster.WaitVMI(ctx, ns, name, framework.BootTimeout, "replaced by a new running instance", func(v *virtv1.VirtualMachineInstance) (bool, error) {
		return v.UID != first.UID && v.Status.Phase == virtv1.Running, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if framework.Condition(second, virtv1.VirtualMachineInstanceReady) != "True" {
		t.Errorf("the new instance is Running but not Ready")
	}

	patch := []byte(`{"spec":{"runStrategy":"Halted"}}`)
	if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, name, deleteTimeout); err != nil {
		t.Fatal(err)
	}
	// Halted stays halted: from here on no instance comes back, not even
	// for a moment.
	halted, err := cluster.WatchVMI(ctx, ns, name, func(v *virtv1.VirtualMachineInstance) error {
		if v != nil {
			return fmt.Errorf("a halted VM has an instance again: %s, phase %s", v.UID, v.Status.Phase)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = halted.Stop() })
	err = framework.WaitFor(ctx, time.Minute, "VM printableStatus Stopped", func(ctx context.Context) (bool, error) {
		vm, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// observedGeneration: the controller summarised the halted spec,
		// so it has decided on it.
		if vm.Status.PrintableStatus != virtv1.VirtualMachineStatusStopped || vm.Status.Created || vm.Status.ObservedGeneration != vm.Generation {
			return false, fmt.Errorf("status %s, created %v, observed generation %d of %d",
				vm.Status.PrintableStatus, vm.Status.Created, vm.Status.ObservedGeneration, vm.Generation)
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
	// The VM controller decided on the halted spec before it wrote that
	// status; the watch stays open a moment longer for an instance created
	// against that decision.
	if err := halted.Hold(haltedWatch); err != nil {
		t.Error(err)
	}
	if left, _ := framework.QEMUProcesses(second); len(left) != 0 {
		t.Errorf("QEMU %v of the halted VM still runs", left)
	}
}

// haltedWatch is how long a halted VM is watched for a new instance once
// its controller summarised it as Stopped.
const haltedWatch = time.Second

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
