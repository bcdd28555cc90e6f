package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/launcher/layout"
	"kubevirt.dev/virt/test/e2e/framework"
)

// deleteTimeout bounds a VMI's deletion: the guest's ACPI shutdown (the
// test guest powers off in about 2 s; grace period 30 s), the launcher's
// exit, the pod's removal.
const deleteTimeout = 2 * time.Minute

// TestVMILifecycle is the choreography as a user sees it: a VMI created
// with kubectl through the aggregator goes Pending -> Scheduling ->
// Scheduled -> Running, its guest boots under software emulation and prints
// on its serial console, kubectl describe tells the story in events, and a
// delete shuts the guest down by ACPI and leaves nothing behind.
func TestVMILifecycle(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	example := filepath.Join(cluster.Root, "artifacts", "examples", "vmi-tiny.yaml")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
		t.Fatal(err)
	}

	vmi, err := cluster.WaitVMIRunning(ctx, ns, "vmi-tiny")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("phases", func(t *testing.T) {
		want := []virtv1.VirtualMachineInstancePhase{virtv1.Pending, virtv1.Scheduling, virtv1.Scheduled, virtv1.Running}
		if got := framework.Phases(vmi); !slices.Equal(got, want) {
			t.Errorf("phases = %v, want %v", got, want)
		}
		if vmi.Status.NodeName == "" {
			t.Error("a Running VMI has no status.nodeName")
		}
	})
	t.Run("software emulation is reported", func(t *testing.T) {
		if got := framework.Condition(vmi, virtv1.VirtualMachineInstanceSoftwareEmulation); got != corev1.ConditionTrue {
			t.Errorf("SoftwareEmulation = %q, want True: guests run under TCG on this machine", got)
		}
	})

	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	serial := cluster.FollowSerial(t, pod)
	t.Run("the guest prints its marker", func(t *testing.T) {
		if err := serial.WaitFor(ctx, framework.GuestReadyMarker+" vmi-tiny", 2*time.Minute); err != nil {
			t.Fatalf("%v\nserial console so far:\n%s", err, serial.Output())
		}
	})
	t.Run("kubectl describe shows the events", func(t *testing.T) {
		var out string
		err := framework.WaitFor(ctx, 30*time.Second, "events in kubectl describe vmi", func(ctx context.Context) (bool, error) {
			var err error
			out, err = cluster.Kubectl(ctx, "describe", "vmi", "-n", ns, "vmi-tiny")
			return err == nil && strings.Contains(out, "Events:") && !strings.Contains(out, "Events:  <none>"), err
		})
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		events, err := cluster.Kube.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(vmi.UID)})
		if err != nil {
			t.Fatal(err)
		}
		sources := map[string]bool{}
		for _, e := range events.Items {
			sources[e.Source.Component] = true
			if !strings.Contains(out, e.Reason) {
				t.Errorf("describe does not show event %s: %s", e.Reason, e.Message)
			}
		}
		if len(events.Items) == 0 {
			t.Errorf("no events on the VMI; describe:\n%s", out)
		}
		t.Logf("events from %v", sources)
	})

	pids, err := framework.QEMUProcesses(vmi)
	if err != nil || len(pids) != 1 {
		t.Fatalf("want one QEMU process for the guest, found %v (%v)", pids, err)
	}

	t.Run("delete shuts the guest down and leaves nothing", func(t *testing.T) {
		if _, err := cluster.Kubectl(ctx, "delete", "vmi", "-n", ns, "vmi-tiny", "--wait=false"); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitVMIGone(ctx, ns, "vmi-tiny", deleteTimeout); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(serial.Output(), framework.GuestACPIShutdownMarker) {
			t.Errorf("the guest did not log an ACPI shutdown; serial console:\n%s", serial.Output())
		}
		err := framework.WaitFor(ctx, time.Minute, "launcher pod gone", func(ctx context.Context) (bool, error) {
			_, err := cluster.Kube.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			return false, err
		})
		if err != nil {
			t.Error(err)
		}
		if left, _ := framework.QEMUProcesses(vmi); len(left) != 0 {
			t.Errorf("QEMU processes %v of the deleted VMI are still running", left)
		}
	})
}

// TestInvalidVMIThroughKubectl: kubectl shows the API's 422 with the path of
// the offending field.
func TestInvalidVMIThroughKubectl(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	manifest := filepath.Join(t.TempDir(), "bad.yaml")
	writeFile(t, manifest, `apiVersion: virtualization.kubevirt.io/v1
kind: VirtualMachineInstance
metadata:
  name: bad
spec:
  terminationGracePeriodSeconds: -1
  domain:
    resources: {requests: {memory: 128Mi}}
    devices:
      disks:
      - name: rootdisk
`)
	out, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", manifest)
	if err == nil {
		t.Fatalf("kubectl accepted an invalid VMI:\n%s", out)
	}
	msg := err.Error()
	for _, want := range []string{"is invalid", "spec.domain.devices.disks[0].name", "spec.terminationGracePeriodSeconds"} {
		if !strings.Contains(msg, want) {
			t.Errorf("kubectl's message lacks %q:\n%s", want, msg)
		}
	}
}

// TestFiveVMIsAtOnce: five VMIs created together all run, and all go away
// with their guests on delete.
func TestFiveVMIsAtOnce(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	base, err := cluster.Example("vmi-tiny.yaml")
	if err != nil {
		t.Fatal(err)
	}
	const n = 5
	names := make([]string, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		names[i] = fmt.Sprintf("many-%d", i)
		vmi := base.DeepCopy()
		vmi.Name = names[i]
		vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs = strings.ReplaceAll(vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs, "vmi-tiny", names[i])
		wg.Go(func() {
			if _, err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Create(ctx, vmi, metav1.CreateOptions{}); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	running := make([]*virtv1.VirtualMachineInstance, n)
	for i, name := range names {
		vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		running[i] = vmi
	}
	for _, name := range names {
		if err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range names {
		if err := cluster.WaitVMIGone(ctx, ns, name, deleteTimeout); err != nil {
			t.Error(err)
		}
	}
	for _, vmi := range running {
		if left, _ := framework.QEMUProcesses(vmi); len(left) != 0 {
			t.Errorf("QEMU %v of deleted VMI %s still runs", left, vmi.Name)
		}
	}
	err = framework.WaitFor(ctx, time.Minute, "launcher pods gone", func(ctx context.Context) (bool, error) {
		pods, err := cluster.Kube.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: virtv1.ComponentLabel + "=" + virtv1.LauncherComponent})
		if err != nil {
			return false, err
		}
		if len(pods.Items) != 0 {
			return false, fmt.Errorf("%d launcher pods left", len(pods.Items))
		}
		return true, nil
	})
	if err != nil {
		t.Error(err)
	}
}

// TestCloudInitVMI: a VMI with cloud-init user data runs, and the launcher
// built the NoCloud ISO (volume label cidata) the guest sees as a CD-ROM.
func TestCloudInitVMI(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", filepath.Join(cluster.Root, "artifacts", "examples", "vmi-cloudinit.yaml")); err != nil {
		t.Fatal(err)
	}
	vmi, err := cluster.WaitVMIRunning(ctx, ns, "vmi-cloudinit")
	if err != nil {
		t.Fatal(err)
	}
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		t.Fatal(err)
	}
	iso := filepath.Join(cluster.KubeletRoot, "pods", string(pod.UID), "volumes", "kubernetes.io~empty-dir",
		layout.DisksVolume, "cloudinit", layout.NoCloudISOName)
	data, err := os.ReadFile(iso)
	if err != nil {
		t.Fatalf("the NoCloud ISO is not where the launcher puts it: %v", err)
	}
	// ISO 9660: the primary volume descriptor is at sector 16; its volume
	// identifier starts 40 bytes in.
	const pvd = 16*2048 + 40
	if len(data) < pvd+6 || string(data[pvd:pvd+6]) != "CIDATA" && string(data[pvd:pvd+6]) != "cidata" {
		t.Errorf("the ISO's volume label is not cidata")
	}
	if !strings.Contains(string(data), "hello from cloud-init") {
		t.Errorf("the ISO does not hold the VMI's user data")
	}
	if err := cluster.Virt.VirtualizationV1().VirtualMachineInstances(ns).Delete(ctx, vmi.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitVMIGone(ctx, ns, vmi.Name, deleteTimeout); err != nil {
		t.Error(err)
	}
}
