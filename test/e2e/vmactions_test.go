package e2e

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	virtclient "kubevirt.dev/virt/generated/clientset/versioned"
	"kubevirt.dev/virt/test/e2e/framework"
	"kubevirt.dev/virt/virtctl/stream"
)

// pausedWindow is how long a paused guest is watched for output it must not
// produce: a running guest echoes a typed command in milliseconds.
const pausedWindow = time.Second

// TestVMActions drives a runStrategy Always VM through the lifecycle
// subresources virtctl calls (stop, start, restart, pause, unpause) as an
// ordinary user with virt:edit.
func TestVMActions(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	ns := cluster.Namespace(t)
	example := filepath.Join(cluster.Root, "artifacts", "examples", "vm-always.yaml")
	if _, err := cluster.Kubectl(ctx, "create", "-n", ns, "-f", example); err != nil {
		t.Fatal(err)
	}
	const name = "vm-always"
	editor := userBoundTo(t, ns, "e2e-editor", "virt:edit", "virt:view")
	c := virtClient(t, editor)

	first, err := cluster.WaitVMIRunning(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}

	t.Run("start of a running Always VM is a conflict", func(t *testing.T) {
		err := put(ctx, c, ns, "virtualmachines", name, "start", &virtv1.StartOptions{})
		if !apierrors.IsConflict(err) {
			t.Errorf("start of a running VM: err = %v, want 409", err)
		}
	})

	t.Run("pause stops the guest, unpause resumes it", func(t *testing.T) {
		conn, err := stream.Dial(ctx, editor, ns, name, "console")
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		out := readInto(conn)
		// Pause a guest whose shell reads the console: typed while the
		// kernel still boots, a command is lost.
		if err := guestReady(ctx, t, first); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("echo $((6*7))\r")); err != nil {
			t.Fatal(err)
		}
		if err := out.waitFor(ctx, "\n42\r"); err != nil {
			t.Fatal(err)
		}
		if err := put(ctx, c, ns, "virtualmachineinstances", name, "pause", &virtv1.PauseOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.WaitVMI(ctx, ns, name, time.Minute, "Paused condition True", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return framework.Condition(v, virtv1.VirtualMachineInstancePaused) == corev1.ConditionTrue, nil
		}); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Write([]byte("echo $((7*8))\r")); err != nil {
			t.Fatal(err)
		}
		// The typed command waits in QEMU's buffers: no vCPU runs to
		// read it, so nothing is echoed while paused.
		if out.appearsWithin(ctx, "\n56\r", pausedWindow) {
			t.Fatalf("a paused guest answered: %q", out.tail())
		}
		if err := put(ctx, c, ns, "virtualmachineinstances", name, "unpause", &virtv1.UnpauseOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := cluster.WaitVMI(ctx, ns, name, time.Minute, "Paused condition gone", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return framework.Condition(v, virtv1.VirtualMachineInstancePaused) != corev1.ConditionTrue &&
				framework.Condition(v, virtv1.VirtualMachineInstanceReady) == corev1.ConditionTrue, nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := out.waitFor(ctx, "\n56\r"); err != nil {
			t.Error(err)
		}
	})

	t.Run("stop leaves the VM Halted without an instance", func(t *testing.T) {
		if err := put(ctx, c, ns, "virtualmachines", name, "stop", &virtv1.StopOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitVMIGone(ctx, ns, name, deleteTimeout); err != nil {
			t.Fatal(err)
		}
		vm, err := waitVM(ctx, c, ns, name, "printableStatus Stopped", func(vm *virtv1.VirtualMachine) bool {
			return vm.Status.PrintableStatus == virtv1.VirtualMachineStatusStopped
		})
		if err != nil {
			t.Fatal(err)
		}
		if s := vm.Spec.EffectiveRunStrategy(); s != virtv1.RunStrategyHalted {
			t.Errorf("runStrategy after stop = %s, want Halted", s)
		}
		if err := put(ctx, c, ns, "virtualmachines", name, "stop", &virtv1.StopOptions{}); !apierrors.IsConflict(err) {
			t.Errorf("stop of a stopped VM: err = %v, want 409", err)
		}
	})

	var started types.UID
	t.Run("start brings a new instance Running", func(t *testing.T) {
		if err := put(ctx, c, ns, "virtualmachines", name, "start", &virtv1.StartOptions{}); err != nil {
			t.Fatal(err)
		}
		vmi, err := cluster.WaitVMIRunning(ctx, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if vmi.UID == first.UID {
			t.Fatalf("the instance after start is the first one (%s)", vmi.UID)
		}
		started = vmi.UID
	})

	t.Run("restart replaces the instance and the guest boots again", func(t *testing.T) {
		if started == "" {
			t.Fatal("start failed: no instance to restart")
		}
		if err := put(ctx, c, ns, "virtualmachines", name, "restart", &virtv1.RestartOptions{}); err != nil {
			t.Fatal(err)
		}
		vmi, err := cluster.WaitVMI(ctx, ns, name, 3*time.Minute, "a new instance Running", func(v *virtv1.VirtualMachineInstance) (bool, error) {
			return v.UID != started && v.Status.Phase == virtv1.Running, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		pod, err := cluster.LauncherPod(ctx, vmi)
		if err != nil {
			t.Fatal(err)
		}
		if err := cluster.FollowSerial(t, pod).WaitFor(ctx, "VIRT-GUEST-READY", 2*time.Minute); err != nil {
			t.Error(err)
		}
	})
}

// guestReady waits for the ready marker of vmi's guest on its serial log.
func guestReady(ctx context.Context, t *testing.T, vmi *virtv1.VirtualMachineInstance) error {
	pod, err := cluster.LauncherPod(ctx, vmi)
	if err != nil {
		return err
	}
	return cluster.FollowSerial(t, pod).WaitFor(ctx, "VIRT-GUEST-READY", 2*time.Minute)
}

func waitVM(ctx context.Context, c virtclient.Interface, ns, name, what string, done func(*virtv1.VirtualMachine) bool) (*virtv1.VirtualMachine, error) {
	var vm *virtv1.VirtualMachine
	err := framework.WaitFor(ctx, time.Minute, "VM "+ns+"/"+name+" "+what, func(ctx context.Context) (bool, error) {
		var err error
		vm, err = c.VirtualizationV1().VirtualMachines(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return done(vm), nil
	})
	return vm, err
}
