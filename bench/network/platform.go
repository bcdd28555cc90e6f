package network

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	virtv1 "kubevirt.dev/virt/apis/virtualization/v1"
	"kubevirt.dev/virt/bench/fixture"
)

// Namespace holds the part's VMI.
const Namespace = "bench-network"

// The guest both paths serve from.
const (
	// FileMiB is the size of the guest's /big (kernel argument
	// virt.bigfile): it lives in the initramfs's tmpfs, which holds half
	// the guest's memory at most.
	FileMiB = 64
	// FileBytes is the size of each download.
	FileBytes = FileMiB << 20
	// GuestMemory fits the file: about 2×FileMiB+48 MiB (hack/build-guest.sh).
	GuestMemory = "192Mi"
	// platformName is the platform's VMI.
	platformName = "net"
)

// VMI is the test guest as both paths boot it: vmi-tiny's shape with the
// memory for a FileMiB file and the kernel argument that makes it; its
// network is the API's default (the pod network through masquerade).
func VMI(name string) *virtv1.VirtualMachineInstance {
	vmi := fixture.VMI(name)
	vmi.Spec.Domain.Resources.Requests[corev1.ResourceMemory] = resource.MustParse(GuestMemory)
	vmi.Spec.Domain.Firmware.KernelBoot.KernelArgs += fmt.Sprintf(" virt.bigfile=%d", FileMiB)
	return vmi
}

// waitOnline waits until the VMI runs and its guest took the launcher's
// DHCP lease, and returns the address the guest is reached at (the pod's
// IP, for masquerade) and the binding of its interface.
func waitOnline(ctx context.Context, env Env, name string, timeout time.Duration) (ip, binding string, err error) {
	var last string
	err = wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		v, err := env.Virt.VirtualizationV1().VirtualMachineInstances(Namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			last = err.Error()
			return false, nil
		}
		if v.Status.Phase.IsFinal() {
			return false, fmt.Errorf("VMI %s/%s ended %s (reason %q) instead of running", Namespace, name, v.Status.Phase, v.Status.Reason)
		}
		last = "phase " + string(v.Status.Phase)
		if v.Status.Phase != virtv1.Running || len(v.Status.Interfaces) == 0 {
			return false, nil
		}
		iface := v.Status.Interfaces[0]
		last += fmt.Sprintf(", status.interfaces[0] infoSource %q ipAddress %q", iface.InfoSource, iface.IPAddress)
		if !strings.Contains(iface.InfoSource, "dhcp") || iface.IPAddress == "" {
			return false, nil
		}
		ip, binding = iface.IPAddress, bindingOf(v, iface.Name)
		return true, nil
	})
	if err != nil {
		return "", "", fmt.Errorf("VMI %s/%s running with its DHCP lease taken (last: %s): %w", Namespace, name, last, err)
	}
	return ip, binding, nil
}

// bindingOf names the binding of the VMI's interface name.
func bindingOf(vmi *virtv1.VirtualMachineInstance, name string) string {
	for _, i := range vmi.Spec.Domain.Devices.Interfaces {
		if i.Name != name {
			continue
		}
		switch {
		case i.Masquerade != nil:
			return "masquerade"
		case i.Bridge != nil:
			return "bridge"
		}
	}
	return "unknown"
}
