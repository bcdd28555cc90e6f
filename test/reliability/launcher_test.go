package reliability

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/test/reliability/report"
)

// computeContainer is the launcher pod's container that runs virt-launcher
// (launcher/layout.ComputeContainer).
const computeContainer = "compute"

// orphanTimeout bounds how long a failed instance's QEMU may outlive it:
// virt-controller deletes the ended instance's pod, which takes the
// processes of its PID namespace along.
const orphanTimeout = 2 * time.Minute

// TestLauncherKill: SIGKILL of a guest's virt-launcher, and of its QEMU
// alone, each the guest of a VM with runStrategy Always. The instance must
// fail with the reason the node gives that death, nothing of it may
// survive, and the VM must come back with a new instance Running.
func TestLauncherKill(t *testing.T) {
	fig := book.Start(t, "launcher-kill", "SIGKILL of virt-launcher, and of QEMU alone")
	fig.Fault = `SIGKILL of the virt-launcher process (the launcher pod's compute
container, which runs libvirt in-process) of a running guest; then, on
another VM, SIGKILL of the guest's QEMU process alone, its launcher left
running. No graceful path runs: no final state is written, libvirt sees
its QEMU vanish.`
	fig.Load = `Two VMs made from artifacts/examples/vm-always.yaml (runStrategy Always, the
test guest, 128 MiB), one killed each way once Running.`
	fig.Method = `A watch on the VMI records the killed instance's final status: its phase
and reason must be the ones the reasons' definitions give that death
(apis/virtualization/v1, docs/handler.md): ` + "`LauncherGone`" + ` for a launcher
that exited ("the launcher stopped answering or exited"), ` + "`GuestCrashed`" + `
for QEMU gone under a launcher that lives on ("qemu or the guest
crashed"); its message starting as node/vmistatus writes it. **Back** is from the kill to the VM's new instance
Running and Ready (virt-controller backs off 10 s before recreating an
instance that failed within a minute of running, as both do here).
**QEMU left** counts the killed instance's QEMU processes once it was
replaced and its pod deleted (` + "`/proc`" + `, by the domain's name).`
	ctx := t.Context()
	ns := cluster.Namespace(t)
	kills := []struct {
		name string
		vm   string
		kill func(t *testing.T, vmi *virtv1.VirtualMachineInstance)
		// reason is the documented reason of this death (the definitions
		// of apis/virtualization/v1's Reason constants); message is the
		// start of the text node/vmistatus writes.
		reason, message string
	}{
		{
			name: "virt-launcher", vm: "vm-launcher-kill",
			kill: func(t *testing.T, vmi *virtv1.VirtualMachineInstance) {
				pod, err := cluster.LauncherPod(ctx, vmi)
				if err != nil {
					t.Fatal(err)
				}
				pid, err := framework.KillContainer(pod, computeContainer)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("kill -9 %d (virt-launcher of pod %s)", pid, pod.Name)
			},
			// The launcher exited (137, none of its own codes).
			reason: virtv1.ReasonLauncherGone, message: "The launcher failed (exit code 137",
		},
		{
			name: "QEMU", vm: "vm-qemu-kill",
			kill: func(t *testing.T, vmi *virtv1.VirtualMachineInstance) {
				pids, err := framework.QEMUProcesses(vmi)
				if err != nil || len(pids) != 1 {
					t.Fatalf("want the one QEMU process of %s, found %v (%v)", vmi.Name, pids, err)
				}
				if err := syscall.Kill(pids[0], syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
				t.Logf("kill -9 %d (QEMU of %s)", pids[0], vmi.Name)
			},
			// QEMU died under its live launcher: libvirt's CRASHED with
			// reason "failed", which the launcher reports.
			reason: virtv1.ReasonGuestCrashed, message: "QEMU exited unexpectedly under the running guest (libvirt: failed)",
		},
	}
	for _, k := range kills {
		vm, err := cluster.ExampleVM("vm-always.yaml")
		if err != nil {
			t.Fatal(err)
		}
		vm.Name, vm.Namespace = k.vm, ns
		if vm.Spec.Template.Spec.Domain.Resources.Requests == nil {
			vm.Spec.Template.Spec.Domain.Resources.Requests = corev1.ResourceList{}
		}
		vm.Spec.Template.Spec.Domain.Resources.Requests[corev1.ResourceCPU] = guestCPU
		if _, err := cluster.Virt.VirtualizationV1().VirtualMachines(ns).Create(ctx, vm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range kills {
		first, err := cluster.WaitVMIRunning(ctx, ns, k.vm)
		if err != nil {
			t.Fatal(err)
		}
		end := &finalStatus{uid: first.UID}
		w, err := cluster.WatchVMI(ctx, ns, k.vm, end.record)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = w.Stop() })
		k.kill(t, first)
		killed := time.Now()

		ended, err := end.wait(ctx, framework.BootTimeout)
		if err != nil {
			t.Fatal(err)
		}
		second, err := cluster.WaitVMI(ctx, ns, k.vm, framework.BootTimeout, "replaced by a new instance, Running", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return v.UID != first.UID && v.Status.Phase == virtv1.Running && framework.Condition(v, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue, nil
		})
		back := time.Since(killed)
		if err != nil {
			t.Error(err)
		}
		if err := w.Stop(); err != nil {
			t.Error(err)
		}
		message := readyMessage(ended)
		fig.Add(
			report.Text(k.name+": phase of the killed instance", string(ended.Status.Phase), report.MustEqual(string(virtv1.Failed))),
			report.Text(k.name+": its reason", ended.Status.Reason, report.MustEqual(k.reason)),
			report.Text(k.name+": its message starts", startOf(message, k.message), report.MustEqual(k.message)),
		)
		if second != nil {
			fig.Add(report.Seconds(k.name+": back (kill → new instance Running)", back, report.Measured()))
		}
		fig.Note("%s: the killed instance's Ready condition said %q; the handler's event: %q.", k.name, message, endEvent(first))
		left := 0
		err = framework.WaitFor(ctx, orphanTimeout, "the killed instance's QEMU gone", func(context.Context) (bool, error) {
			pids, err := framework.QEMUProcesses(first)
			left = len(pids)
			return left == 0, err
		})
		if err != nil {
			t.Error(err)
		}
		fig.Add(report.Count(k.name+": QEMU of the killed instance left", left, report.MustBe(0)))
	}
}

// finalStatus is a WatchVMI check that keeps the first version of the VMI
// of uid in a final phase.
type finalStatus struct {
	uid  types.UID
	mu   sync.Mutex
	seen *virtv1.VirtualMachineInstance
}

func (f *finalStatus) record(v *virtv1.VirtualMachineInstance) error {
	if v == nil || v.UID != f.uid || !v.Status.Phase.IsFinal() {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seen == nil {
		f.seen = v.DeepCopy()
	}
	return nil
}

func (f *finalStatus) wait(ctx context.Context, timeout time.Duration) (*virtv1.VirtualMachineInstance, error) {
	var got *virtv1.VirtualMachineInstance
	err := framework.WaitFor(ctx, timeout, fmt.Sprintf("VMI %s in a final phase", f.uid), func(context.Context) (bool, error) {
		f.mu.Lock()
		defer f.mu.Unlock()
		got = f.seen
		return got != nil, nil
	})
	return got, err
}

// startOf is want when s starts with it, else s itself (cut short): the
// report shows what differs.
func startOf(s, want string) string {
	if strings.HasPrefix(s, want) {
		return want
	}
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}
