package debian

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
)

// Namespace holds the part's VMIs.
const Namespace = "bench-debian"

// goneTimeout bounds a deleted VMI's way out: the example gives the guest
// 60 s to power off on the ACPI button, which systemd does in seconds.
const goneTimeout = 3 * time.Minute

// bootPlatform posts the guest as the VMI name and times it to Running
// (from a watch opened before the POST) and to the first login at
// status.interfaces[0].ipAddress. The VMI is deleted, and waited for until
// it and its pod are gone, whatever happens: the next boot has the
// machine to itself.
func bootPlatform(ctx context.Context, env Env, guest Guest, name string, timeout time.Duration) (run Boot, err error) {
	vmis := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace)
	w, err := vmis.Watch(ctx, metav1.ListOptions{})
	if err != nil {
		return run, fmt.Errorf("watch VMIs: %w", err)
	}
	defer w.Stop()
	start := time.Now()
	vmi, err := vmis.Create(ctx, guest.VMI(Namespace, name), metav1.CreateOptions{})
	if err != nil {
		return run, fmt.Errorf("create VMI %s/%s: %w", Namespace, name, err)
	}
	defer func() {
		err = errors.Join(err, deleteVMI(context.WithoutCancel(ctx), env, vmi.Name, vmi.UID))
	}()
	run = Boot{Side: Platform}
	var ip string
	if run.Running, ip, err = waitRunning(ctx, w, vmi.UID, start, timeout); err != nil {
		return run, fmt.Errorf("VMI %s/%s: %w", Namespace, name, err)
	}
	// The watch goes on: a VMI that ends while the guest boots ends the
	// wait for SSH too.
	var ended atomic.Pointer[string]
	go func() {
		for ev := range w.ResultChan() {
			if v, ok := ev.Object.(*virtv1.VirtualMachineInstance); ok && v.UID == vmi.UID && v.Status.Phase.IsFinal() {
				why := fmt.Sprintf("VMI %s/%s ended %s (reason %q)", Namespace, name, v.Status.Phase, v.Status.Reason)
				ended.Store(&why)
			}
		}
	}()
	alive := func() error {
		if why := ended.Load(); why != nil {
			return errors.New(*why)
		}
		return nil
	}
	p, err := waitLogin(ctx, net.JoinHostPort(ip, "22"), guest.User, guest.Signer, start, timeout-time.Since(start), alive)
	if err != nil {
		return run, fmt.Errorf("VMI %s/%s: %w", Namespace, name, err)
	}
	run.SSH, run.Probes = p.ready, p.attempts
	return run, nil
}

// waitRunning reads w until the VMI uid is Running and has an address on
// its first interface, and returns when it was Running (from start) and
// the address.
func waitRunning(ctx context.Context, w watch.Interface, uid types.UID, start time.Time, timeout time.Duration) (running time.Duration, ip string, err error) {
	deadline := time.NewTimer(timeout - time.Since(start))
	defer deadline.Stop()
	last := "no event"
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return 0, "", fmt.Errorf("the watch of VMIs ended (last: %s)", last)
			}
			v, ok := ev.Object.(*virtv1.VirtualMachineInstance)
			if !ok || v.UID != uid {
				continue
			}
			if v.Status.Phase.IsFinal() {
				return 0, "", fmt.Errorf("ended %s (reason %q) instead of running", v.Status.Phase, v.Status.Reason)
			}
			last = "phase " + string(v.Status.Phase)
			if v.Status.Phase == virtv1.Running && running == 0 {
				running = time.Since(start)
			}
			if running > 0 && len(v.Status.Interfaces) > 0 && v.Status.Interfaces[0].IPAddress != "" {
				return running, v.Status.Interfaces[0].IPAddress, nil
			}
		case <-deadline.C:
			return 0, "", fmt.Errorf("not Running with an address on status.interfaces[0] within %s (last: %s)", timeout, last)
		case <-ctx.Done():
			return 0, "", ctx.Err()
		}
	}
}

// deleteVMI deletes the VMI and waits until it and its launcher pod are
// gone.
func deleteVMI(ctx context.Context, env Env, name string, uid types.UID) error {
	t0 := time.Now()
	err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete VMI %s/%s: %w", Namespace, name, err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, goneTimeout, true, func(ctx context.Context) (bool, error) {
		_, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Get(ctx, name, metav1.GetOptions{})
		if !apierrors.IsNotFound(err) {
			last = "the VMI is still there"
			return false, nil
		}
		pods, err := env.Kube.CoreV1().Pods(Namespace).List(ctx, metav1.ListOptions{LabelSelector: virtv1.CreatedByLabel + "=" + string(uid)})
		if err != nil || len(pods.Items) > 0 {
			last = "its launcher pod is still there"
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("VMI %s/%s deleted, but %s after %s: %w", Namespace, name, last, goneTimeout, err)
	}
	env.Logf("debian: VMI %s/%s and its pod gone %s after the delete", Namespace, name, time.Since(t0).Round(100*time.Millisecond))
	return nil
}
